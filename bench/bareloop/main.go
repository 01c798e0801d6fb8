// Command bareloop is the floor of bench/peers.sh: the least an agentless
// auditor written with golang.org/x/crypto/ssh can do per host. For each
// address it dials, checks the host key against known_hosts, logs in with
// one key, runs one command (by default `cat` of the same /proc files
// kaudit reads, then `ss -ltn`) and discards the output; nothing is
// parsed, evaluated or reported. It prints "ok N failed M".
//
//	bareloop -hosts hosts.txt -user kbench -key id_ed25519 -known-hosts known_hosts -c 32
//
// With -print-script it instead prints kaudit's gather script (what the
// peers run) for the given Kafka port and exits.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
	"golang.org/x/sync/errgroup"

	"github.com/kaudit/kaudit/audit/gather"
	"github.com/kaudit/kaudit/rules"
)

type config struct {
	hosts, user, key, known, cmd string
	port, concurrency            int
	timeout                      time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.hosts, "hosts", "", "file of addresses, one a line")
	flag.StringVar(&c.user, "user", "kbench", "login user")
	flag.StringVar(&c.key, "key", "", "private key file (unencrypted)")
	flag.StringVar(&c.known, "known-hosts", "", "known_hosts file (host keys are checked)")
	flag.StringVar(&c.cmd, "cmd", bareCommand(), "command to run on every host")
	flag.IntVar(&c.port, "port", 22, "SSH port")
	flag.IntVar(&c.concurrency, "c", 32, "hosts at once")
	flag.DurationVar(&c.timeout, "timeout", 60*time.Second, "per-host deadline")
	printScript := flag.Bool("print-script", false, "print kaudit's gather script and exit")
	flag.Parse()
	if *printScript {
		s, err := gather.Script(gather.Params{KafkaPort: 9092, SysctlKeys: rules.SysctlKeys(), Files: rules.Files(), Marker: "kbench-peers-marker"})
		if err != nil {
			fatal(err)
		}
		os.Stdout.Write(s)
		return
	}
	ok, failed, err := run(c)
	if err != nil {
		fatal(err)
	}
	fmt.Printf("ok %d failed %d\n", ok, failed)
	if failed > 0 {
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "bareloop: error: %v\n", err)
	os.Exit(2)
}

// bareCommand reads what kaudit's gather reads from /proc, and lists the
// listeners once: the same facts, no shell logic.
func bareCommand() string {
	files := []string{"/proc/sys/kernel/osrelease", "/proc/version", "/etc/os-release", "/proc/net/netstat", "/proc/net/route"}
	for _, k := range rules.SysctlKeys() {
		files = append(files, "/proc/sys/"+strings.ReplaceAll(k, ".", "/"))
	}
	return "cat " + strings.Join(files, " ") + " 2>/dev/null; ss -ltn"
}

func run(c config) (ok, failed int64, err error) {
	addrs, err := readLines(c.hosts)
	if err != nil {
		return 0, 0, err
	}
	cfg, err := clientConfig(c)
	if err != nil {
		return 0, 0, err
	}
	var nOK, nFail atomic.Int64
	var once sync.Once
	var g errgroup.Group
	g.SetLimit(c.concurrency)
	for _, a := range addrs {
		g.Go(func() error {
			if err := runOne(c, cfg, a); err != nil {
				nFail.Add(1)
				once.Do(func() { fmt.Fprintf(os.Stderr, "bareloop: %s: %v (first failure)\n", a, err) })
				return nil
			}
			nOK.Add(1)
			return nil
		})
	}
	_ = g.Wait()
	return nOK.Load(), nFail.Load(), nil
}

func clientConfig(c config) (*ssh.ClientConfig, error) {
	pem, err := os.ReadFile(c.key)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.key, err)
	}
	hk, err := knownhosts.New(c.known)
	if err != nil {
		return nil, err
	}
	return &ssh.ClientConfig{User: c.user, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: hk, HostKeyAlgorithms: []string{ssh.KeyAlgoED25519}, Timeout: c.timeout}, nil
}

func runOne(c config, cfg *ssh.ClientConfig, addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(addr, fmt.Sprint(c.port)))
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(c.timeout))
	sc, chans, reqs, err := ssh.NewClientConn(conn, net.JoinHostPort(addr, fmt.Sprint(c.port)), cfg)
	if err != nil {
		return err
	}
	client := ssh.NewClient(sc, chans, reqs)
	defer client.Close()
	s, err := client.NewSession()
	if err != nil {
		return err
	}
	defer s.Close()
	out, err := s.StdoutPipe()
	if err != nil {
		return err
	}
	if err := s.Start(c.cmd); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, out); err != nil {
		return err
	}
	return s.Wait()
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	if len(out) == 0 && sc.Err() == nil {
		return nil, errors.New(path + ": no addresses")
	}
	return out, sc.Err()
}
