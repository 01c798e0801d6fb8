package simhost

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/kaudit/kaudit/audit/inventory"
)

// Fleet is a set of running simulated hosts plus what a client needs to
// reach them with host keys checked: a private key and a known_hosts file.
type Fleet struct {
	Dir        string
	KeyFile    string
	KnownHosts string
	Servers    []*Server
	Hosts      []inventory.Host // one per simulated host, then the unreachable ones
}

// Start serves every host on 127.0.0.1 and writes an identity file and a
// known_hosts file into dir. Each name in unreachable becomes an inventory
// host pointing at a closed local port.
func Start(dir string, hosts []*Host, unreachable ...string) (*Fleet, error) {
	return StartOn(dir, hosts, func(int) string { return "127.0.0.1:0" }, unreachable...)
}

// StartOn is Start with host i listening on addr(i), a loopback host:port.
func StartOn(dir string, hosts []*Host, addr func(i int) string, unreachable ...string) (*Fleet, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "kaudit-demo")
	if err != nil {
		return nil, err
	}
	f := &Fleet{Dir: dir, KeyFile: filepath.Join(dir, "id_ed25519"), KnownHosts: filepath.Join(dir, "known_hosts")}
	if err := os.WriteFile(f.KeyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	var kh strings.Builder
	hostKey := NewHostKey() // one host key for the whole simulated fleet keeps start-up cheap
	for i, h := range hosts {
		s, err := ServeOn(addr(i), h, hostKey, signer.PublicKey())
		if err != nil {
			f.Close()
			return nil, err
		}
		f.Servers = append(f.Servers, s)
		kh.WriteString(knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, s.HostKey) + "\n")
		ih := f.host(h.Name, s.IP(), s.Port())
		if len(h.Groups) > 0 {
			ih.Groups = append([]string(nil), h.Groups...)
		}
		f.Hosts = append(f.Hosts, ih)
	}
	for _, name := range unreachable {
		port, err := closedPort()
		if err != nil {
			f.Close()
			return nil, err
		}
		f.Hosts = append(f.Hosts, f.host(name, "127.0.0.1", port))
	}
	if err := os.WriteFile(f.KnownHosts, []byte(kh.String()), 0o600); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (f *Fleet) host(name, ip string, port int) inventory.Host {
	return inventory.Host{
		Name: name, Address: ip, Port: port, User: "kafka",
		IdentityFiles: []string{f.KeyFile}, KnownHosts: []string{f.KnownHosts},
		HostKeyPolicy: "strict", Connection: "ssh", KafkaPort: 9092,
		Groups: []string{"demo"}, Profile: map[string]any{}, Source: "demo",
	}
}

// Close stops every server.
func (f *Fleet) Close() {
	for _, s := range f.Servers {
		s.Close()
	}
}

// closedPort returns a local port that nothing listens on (bound, then released).
func closedPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		return 0, fmt.Errorf("release port: %w", err)
	}
	return port, nil
}
