//go:build e2e

// Package testfleet starts a fleet of real test hosts on this machine for
// kaudit's end-to-end tests (build tag e2e, needs root).
//
// Every host is:
//   - a network namespace kft-<name> with eth0 = one end of a veth pair
//     (address 198.18.x.2/30; the other end, kft-h<i>, is the only thing the
//     fleet adds to the root namespace: 198.18.x.1/30), lo up, and its own
//     per-namespace sysctls (written inside the namespace before sshd starts);
//   - a private mount, PID and UTS namespace (unshare) in which /etc, /usr,
//     /var, /opt and /root are overlayfs mounts whose upper dirs live in the
//     fleet's temp dir (so anything a test or an SSH session writes there
//     stays in the temp dir), /run and /tmp are private tmpfs (with
//     /run/systemd/container saying "kft": a container), /proc belongs
//     to the host's PID namespace (ps/pgrep see only this host's processes);
//   - a real OpenSSH sshd with its own ed25519 host key and config, and
//     optionally a fake Kafka broker (a Go program posing as "java ...
//     kafka.Kafka server.properties") with a real Apache or Confluent layout,
//     both children of a tiny init (PID 1 of the host's PID namespace).
//
// Nothing outside the namespaces and the temp dir is changed. Start takes a
// machine-wide lock (/tmp/kft-fleet.lock), removes what a killed earlier run
// left behind (namespaces kft-*, links kft-h*, dirs $TMPDIR/kft-fleet-*), and
// registers a teardown with t.Cleanup. If the test binary dies, the
// processes die with it (PR_SET_PDEATHSIG + unshare --kill-child); the
// namespaces and links are removed by the next run.
package testfleet

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kaudit/kaudit/internal/remote"
)

const (
	nsPrefix   = "kft-"
	linkPrefix = "kft-h"
	dirPrefix  = "kft-fleet-"
	lockName   = "kft-fleet.lock"
	// stdPath is the PATH of the processes the fleet starts.
	stdPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// overlayRoots are the directories every host sees through its own overlay.
var overlayRoots = []string{"/etc", "/usr", "/var", "/opt", "/root"}

// HostSpec describes one test host.
type HostSpec struct {
	// Name: [a-z0-9][a-z0-9-]{0,11}; the netns is kft-<Name>, the hostname Name.
	Name string
	// Sysctls are written inside the host's network namespace before sshd
	// starts, e.g. "net.ipv4.tcp_syncookies": "2". Only net.* keys that
	// exist inside a network namespace are accepted (the global ones do not
	// exist there, so the machine's own values can never be touched).
	Sysctls map[string]string
	// Kafka: nil = no broker.
	Kafka *BrokerSpec
	// SysctlFiles: name -> content, created in the host's private
	// /etc/sysctl.d, which otherwise is empty. The key "/etc/sysctl.conf"
	// sets that file (default: empty); other absolute keys (e.g.
	// "/usr/lib/sysctl.d/50-x.conf") must be under an overlaid tree (see
	// Files). /usr/lib/sysctl.d and /etc/udev/rules.d are empty on test hosts
	// too; /run (so /run/sysctl.d) is an empty tmpfs.
	SysctlFiles map[string]string
	// Files: absolute path -> content, under /etc, /usr, /var, /opt or /root
	// (the overlaid trees). Content starting with "#!" is made executable, so
	// e.g. "/usr/bin/uname" can be replaced by a script.
	Files map[string]string
	// ProcFiles: existing file (typically under /proc, e.g. "/proc/version")
	// -> content bind-mounted over it inside the host.
	ProcFiles map[string]string
	// NoEthtool / NoSS hide ethtool / ss inside the host (overlay whiteouts,
	// so `command -v` fails and the binary cannot be run by any path).
	NoEthtool, NoSS bool
	// NoUdevRules: the host has no /etc/udev/rules.d (minimal hosts and
	// containers have no udev).
	NoUdevRules bool
	// Users are extra login users besides root. They log in with the
	// fleet's key (the one authorized_keys file serves every user), have
	// HOME /tmp, UID 2000+i and group nogroup. A Shell that is a script
	// given in Files (e.g. one printing garbage) replaces the login shell:
	// sshd runs it as `SHELL -c "/bin/sh -s"` for kaudit's session.
	Users []UserSpec
	// HostCertCA, when set, is the path of a CA private key: the host key is
	// signed with it as an OpenSSH host certificate (ssh-keygen -s CA -h,
	// principals: the host's address and name) that sshd presents.
	HostCertCA string
	// Behind names an earlier host of the same fleet (a bastion): this
	// host's eth0 is wired by a veth pair straight into that host's network
	// namespace instead of the root namespace, so only that host reaches it
	// (see bastion.go).
	Behind string
	// ExtraAddrs more addresses on eth0 that sshd also answers on (needs
	// Behind: the bastion gets the route); see Host.ExtraAddrs.
	ExtraAddrs int
	// DefaultMaxStartups keeps sshd's default MaxStartups (10:30:100)
	// instead of the fleet's generous 200:30:400.
	DefaultMaxStartups bool
	// TrustedUserCAKeys is a file (on this machine, readable inside the
	// host) of CA keys whose user certificates sshd accepts.
	TrustedUserCAKeys string
	// MTU, when set, is eth0's MTU inside the host's network namespace
	// (the veth pair's other end keeps its own).
	MTU int
	// Mounts are filesystems mounted inside the host's own mount namespace
	// (after its overlays and binds, so they hide what is below), e.g. a
	// log.dirs on a tmpfs or on an ext4 loop image; gone with the host.
	Mounts []MountSpec
}

// MountSpec is one filesystem of a test host: FSType "tmpfs" (Source
// names it), "ext4" (a 32 MiB image in the host's directory, made with
// mkfs.ext4 and mounted -o loop) or "bind" (a directory in the host's
// directory bound there: whatever disk this machine's filesystem is on);
// Options are mount's -o (e.g. "noatime").
type MountSpec struct {
	Path, FSType, Source, Options string
}

// mountScript is the start script's lines for the host's Mounts.
func (h *Host) mountScript() (string, error) {
	q := remote.Quote
	var s strings.Builder
	for i, m := range h.Spec.Mounts {
		if !filepath.IsAbs(m.Path) || strings.ContainsAny(m.Options, " '\"\n") {
			return "", fmt.Errorf("mount %d: path %q must be absolute, options %q plain", i, m.Path, m.Options)
		}
		opts := m.Options
		switch m.FSType {
		case "tmpfs":
			src := m.Source
			if src == "" {
				src = "tmpfs"
			}
			opts = strings.TrimPrefix(opts+",size=32m", ",")
			fmt.Fprintf(&s, "mkdir -p %s && mount -t tmpfs -o %s %s %s\n", q(m.Path), q(opts), q(src), q(m.Path))
		case "ext4":
			img := filepath.Join(h.Dir, fmt.Sprintf("mount%d.ext4", i))
			if err := os.WriteFile(img, nil, 0o600); err != nil {
				return "", err
			}
			if err := os.Truncate(img, 32<<20); err != nil {
				return "", err
			}
			if out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
				return "", fmt.Errorf("mkfs.ext4 %s: %v: %s", img, err, out)
			}
			opts = strings.TrimSuffix("loop,"+opts, ",")
			fmt.Fprintf(&s, "mkdir -p %s && mount -t ext4 -o %s %s %s\n", q(m.Path), q(opts), q(img), q(m.Path))
		case "bind":
			dir := filepath.Join(h.Dir, fmt.Sprintf("mount%d.d", i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return "", err
			}
			fmt.Fprintf(&s, "mkdir -p %s && mount --bind %s %s\n", q(m.Path), q(dir), q(m.Path))
		default:
			return "", fmt.Errorf("mount %d: fstype %q is not tmpfs, ext4 or bind", i, m.FSType)
		}
	}
	return s.String(), nil
}

// UserSpec is one extra login user of a test host.
type UserSpec struct {
	Name  string // [a-z_][a-z0-9_-]{0,30}
	Shell string // default /bin/sh
	// PasswordHash is the user's crypt(3) hash in /etc/shadow (e.g. from
	// openssl passwd -6); default "*" (no password: key login only).
	PasswordHash string
}

var userNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,30}$`)

// Fleet is a set of running test hosts.
type Fleet struct {
	Hosts        []*Host
	KnownHosts   string // known_hosts with every host's key
	IdentityFile string // private key of the login user
	User         string // "root"
	Dir          string // the fleet's temp dir

	helper     string
	clientHome string
	lock       *os.File
}

// Host is one running test host.
type Host struct {
	Spec      HostSpec
	NS        string // network namespace name, kft-<name>
	Addr      string // 198.18.x.y (eth0 inside NS; sshd listens here)
	Port      int    // 22
	SSHDPid   int    // root-namespace PID of sshd
	BrokerPid int    // root-namespace PID of the fake broker (0: none)
	HostKeyFP string // SHA256:... fingerprint of the host key

	InitPid  int    // root-namespace PID of the host's init (PID 1 inside)
	PeerAddr string // the root-namespace end of the veth (198.18.x.y-1)
	Link     string // root-namespace veth name, kft-h<i>
	Dir      string // per-host temp dir (logs: console.log, sshd.log, broker.out)
	Home     string // HOME of the login user (a temp dir)
	// ExtraAddrs are the HostSpec.ExtraAddrs addresses (198.19.<i>.<j>).
	ExtraAddrs []string

	// Broker layout as seen inside the host (empty without a broker).
	KafkaHome    string // Apache: /opt/kafka_2.13-X; Confluent: /usr/share/java/kafka
	KafkaJarDir  string
	KafkaConfig  string // server.properties path
	KafkaLog     string // server.log path
	KafkaPort    int
	KafkaBacklog int // backlog passed to listen() (before the somaxconn cap)
	KafkaArgv    []string

	fleet    *Fleet
	index    int
	cmd      *exec.Cmd
	waitDone chan struct{}
	// sshdCmds are the nsenter processes of sshds started by RestartSSHD
	// (each waits for its sshd; the sshd dies with the PID namespace).
	sshdCmds []*restarted
	layout   *brokerLayout
	netUp    chan struct{} // closed once network() ran (Behind hosts wait for their bastion's)
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,11}$`)

// Start creates the hosts (in parallel) and returns once every sshd and
// broker is listening. It skips the test when not root or tools are missing.
func Start(t testing.TB, specs []HostSpec) *Fleet {
	t.Helper()
	checkPrereqs(t)
	if len(specs) == 0 || len(specs) > 4000 {
		t.Fatalf("testfleet: %d hosts: want 1..4000", len(specs))
	}
	seen := map[string]bool{}
	for _, s := range specs {
		if !nameRE.MatchString(s.Name) || seen[s.Name] {
			t.Fatalf("testfleet: bad or duplicate host name %q (want %s)", s.Name, nameRE)
		}
		seen[s.Name] = true
		for _, u := range s.Users {
			if !userNameRE.MatchString(u.Name) || u.Name == "root" || strings.ContainsAny(u.Shell, ":\n") {
				t.Fatalf("testfleet: host %s: bad user %q (shell %q)", s.Name, u.Name, u.Shell)
			}
		}
		for k := range s.Sysctls {
			if !strings.HasPrefix(k, "net.") || strings.Contains(k, "..") || strings.Contains(k, "/") {
				t.Fatalf("testfleet: host %s: sysctl %q: only net.* keys (per network namespace) are allowed", s.Name, k)
			}
		}
	}

	checkBehind(t, specs)
	f := &Fleet{User: "root"}
	f.acquireLock(t)
	t.Cleanup(f.releaseLock)
	removeLeftovers(t)

	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		t.Fatal(err)
	}
	f.Dir = dir
	t.Cleanup(func() { f.teardown(t) })
	_ = os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)

	t0 := time.Now()
	f.buildHelper(t)
	f.clientHome = filepath.Join(dir, "client-home")
	must(t, os.MkdirAll(f.clientHome, 0o700))
	f.IdentityFile = filepath.Join(dir, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "kft-client", "-f", f.IdentityFile).CombinedOutput(); err != nil {
		t.Fatalf("testfleet: ssh-keygen: %v: %s", err, out)
	}
	pub, err := os.ReadFile(f.IdentityFile + ".pub")
	must(t, err)
	// Readable by the extra login users (sshd opens AuthorizedKeysFile as
	// the user): the fleet dir is traversable, the file world-readable
	// (public keys only; private keys in the dir keep mode 0600).
	must(t, os.Chmod(dir, 0o711))
	must(t, os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o644))

	for i, s := range specs {
		h := &Host{Spec: s, NS: nsPrefix + s.Name, Port: 22, fleet: f, index: i, netUp: make(chan struct{}),
			Link: fmt.Sprintf("%s%d", linkPrefix, i), Dir: filepath.Join(dir, "hosts", s.Name)}
		base := binary.BigEndian.Uint32(net.IPv4(198, 18, 0, 0).To4()) + uint32(4*i)
		h.PeerAddr = u32ip(base + 1)
		h.Addr = u32ip(base + 2)
		f.Hosts = append(f.Hosts, h)
	}
	errs := make([]error, len(f.Hosts))
	var wg sync.WaitGroup
	for i, h := range f.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = h.start()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("testfleet: start: %v", err)
	}

	var kh strings.Builder
	for _, h := range f.Hosts {
		pub, err := os.ReadFile(filepath.Join(h.Dir, "ssh_host_ed25519_key.pub"))
		must(t, err)
		fmt.Fprintf(&kh, "%s %s", h.Addr, pub)
	}
	f.KnownHosts = filepath.Join(dir, "known_hosts")
	must(t, os.WriteFile(f.KnownHosts, []byte(kh.String()), 0o644))
	t.Logf("testfleet: %d hosts up in %v (dir %s)", len(f.Hosts), time.Since(t0).Round(time.Millisecond), dir)
	return f
}

// Host returns the host with that name (nil if none).
func (f *Fleet) Host(name string) *Host {
	for _, h := range f.Hosts {
		if h.Spec.Name == name {
			return h
		}
	}
	return nil
}

func checkPrereqs(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("testfleet: needs root (network, mount and PID namespaces)")
	}
	for _, tool := range []string{"ip", "sshd", "ssh", "ssh-keygen", "unshare", "nsenter", "ss", "mount", "hostname"} {
		if _, err := exec.LookPath(tool); err != nil {
			if _, err2 := os.Stat("/usr/sbin/" + tool); err2 != nil {
				t.Skipf("testfleet: %s not found (apt-get install openssh-server openssh-client iproute2 util-linux mount hostname)", tool)
			}
		}
	}
	if _, err := GoTool(); err != nil {
		t.Skipf("testfleet: %v", err)
	}
	if b, err := os.ReadFile("/proc/filesystems"); err != nil || !bytes.Contains(b, []byte("overlay")) {
		t.Skip("testfleet: kernel has no overlayfs")
	}
}

// signHostKey signs the host key when the spec names a CA and returns the
// sshd_config line presenting the certificate ("" otherwise).
func (h *Host) signHostKey(keyPath string) (string, error) {
	if h.Spec.HostCertCA == "" {
		return "", nil
	}
	out, err := exec.Command("ssh-keygen", "-q", "-s", h.Spec.HostCertCA, "-h", "-I", "kft-"+h.Spec.Name,
		"-n", h.Addr+","+h.Spec.Name, "-V", "-5m:+1d", keyPath+".pub").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ssh-keygen -s (host certificate): %v: %s", err, out)
	}
	return "HostCertificate " + keyPath + "-cert.pub", nil
}

// ---------- lock and leftovers ----------

func (f *Fleet) acquireLock(t testing.TB) {
	t.Helper()
	p := filepath.Join(os.TempDir(), lockName)
	lf, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Minute)
	logged := false
	for {
		err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			lf.Close()
			t.Fatalf("testfleet: flock %s: %v", p, err)
		}
		if time.Now().After(deadline) {
			lf.Close()
			t.Fatalf("testfleet: another fleet holds %s for more than 10 minutes", p)
		}
		if !logged {
			t.Logf("testfleet: waiting for %s (another fleet is running)", p)
			logged = true
		}
		time.Sleep(200 * time.Millisecond)
	}
	f.lock = lf
}

func (f *Fleet) releaseLock() {
	if f.lock != nil {
		_ = syscall.Flock(int(f.lock.Fd()), syscall.LOCK_UN)
		f.lock.Close()
		f.lock = nil
	}
}

// removeLeftovers deletes what a killed run left behind. It runs under the
// lock, so nothing with our prefixes can belong to a live fleet.
func removeLeftovers(t testing.TB) {
	t.Helper()
	for _, ns := range listNetns() {
		if !strings.HasPrefix(ns, nsPrefix) {
			continue
		}
		out, _ := exec.Command("ip", "netns", "pids", ns).Output()
		for _, f := range strings.Fields(string(out)) {
			pid, err := strconv.Atoi(f)
			if err != nil || pid <= 1 {
				continue
			}
			cl, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if bytes.Contains(cl, []byte("/"+dirPrefix)) { // only processes a fleet started
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			t.Logf("testfleet: leftover netns %s: %v %s", ns, err, out)
		} else {
			t.Logf("testfleet: removed leftover netns %s", ns)
		}
	}
	for _, l := range listLinks(linkPrefix) {
		_ = exec.Command("ip", "link", "del", l).Run()
		t.Logf("testfleet: removed leftover link %s", l)
	}
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range old {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			_ = os.RemoveAll(d)
			t.Logf("testfleet: removed leftover dir %s", d)
		}
	}
}

func listNetns() []string {
	out, _ := exec.Command("ip", "netns", "list").Output()
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names
}

func listLinks(prefix string) []string {
	out, _ := exec.Command("ip", "-o", "link", "show").Output()
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name := strings.TrimSuffix(f[1], ":")
		if i := strings.IndexByte(name, '@'); i >= 0 {
			name = name[:i]
		}
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	return names
}

// ---------- helper binary ----------

// GoTool finds the go command (tests build helpers and kaudit with it).
func GoTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	// The go command is usually on PATH; CI installs Go at /usr/local/go.
	for _, p := range []string{filepath.Join(os.Getenv("GOROOT"), "bin", "go"), "/usr/local/go/bin/go"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("go toolchain not found (needed to build the fake broker)")
}

func (f *Fleet) buildHelper(t testing.TB) {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testfleet: runtime.Caller failed")
	}
	src := filepath.Join(filepath.Dir(file), "fakebroker")
	gobin, _ := GoTool()
	f.helper = filepath.Join(f.Dir, "bin", "kft-helper")
	cmd := exec.Command(gobin, "build", "-tags", "e2e", "-o", f.helper, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testfleet: building fake broker: %v\n%s", err, out)
	}
}

// ---------- host start ----------

func (h *Host) start() error {
	if err := h.prepare(); err != nil {
		return fmt.Errorf("%s: prepare: %w", h.Spec.Name, err)
	}
	err := h.network()
	close(h.netUp)
	if err != nil {
		return fmt.Errorf("%s: network: %w", h.Spec.Name, err)
	}
	if err := h.sysctls(); err != nil {
		return fmt.Errorf("%s: sysctls: %w", h.Spec.Name, err)
	}
	if err := h.launch(); err != nil {
		return fmt.Errorf("%s: %w\n--- console.log:\n%s--- sshd.log:\n%s--- broker.out:\n%s", h.Spec.Name, err,
			tail(filepath.Join(h.Dir, "console.log")), tail(filepath.Join(h.Dir, "sshd.log")), tail(filepath.Join(h.Dir, "broker.out")))
	}
	return nil
}

func (h *Host) upper(root string) string {
	return filepath.Join(h.Dir, "ovl", strings.TrimPrefix(root, "/"), "up")
}

// hostPath maps an absolute path inside the host to the file in the upper
// dir of its overlay.
func (h *Host) hostPath(p string) (string, error) {
	p = filepath.Clean(p)
	for _, r := range overlayRoots {
		if strings.HasPrefix(p, r+"/") {
			return filepath.Join(h.upper(r), strings.TrimPrefix(p, r+"/")), nil
		}
	}
	return "", fmt.Errorf("path %q is not under %v", p, overlayRoots)
}

func (h *Host) writeFile(p, content string, mode os.FileMode) error {
	up, err := h.hostPath(p)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(up), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(up, []byte(content), mode); err != nil {
		return err
	}
	return os.Chmod(up, mode)
}

// privateDir makes p an empty directory inside the host (an opaque overlay
// dir hides whatever the machine has there).
func (h *Host) privateDir(p string) error {
	up, err := h.hostPath(p)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(up, 0o755); err != nil {
		return err
	}
	return syscall.Setxattr(up, "trusted.overlay.opaque", []byte("y"), 0)
}

// whiteout hides p inside the host, whatever the machine has there (an
// overlay whiteout: a 0/0 character device in the upper dir).
func (h *Host) whiteout(p string) error {
	up, err := h.hostPath(p)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(up), 0o755); err != nil {
		return err
	}
	if err := syscall.Mknod(up, syscall.S_IFCHR, 0); err != nil {
		return fmt.Errorf("whiteout %s: %w", up, err)
	}
	return nil
}

func (h *Host) prepare() error {
	f := h.fleet
	h.Home = filepath.Join(h.Dir, "home")
	for _, d := range []string{h.Home, filepath.Join(h.Dir, "proc")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	for _, r := range overlayRoots {
		for _, sub := range []string{"up", "work"} {
			if err := os.MkdirAll(filepath.Join(h.Dir, "ovl", strings.TrimPrefix(r, "/"), sub), 0o755); err != nil {
				return err
			}
		}
		// The merged root takes its attributes from the upper root.
		if fi, err := os.Stat(r); err == nil {
			_ = os.Chmod(h.upper(r), fi.Mode().Perm())
		}
	}
	// /opt holds only what the host's spec puts there.
	if err := syscall.Setxattr(h.upper("/opt"), "trusted.overlay.opaque", []byte("y"), 0); err != nil {
		return fmt.Errorf("overlay opaque xattr: %w", err)
	}

	// Login user root: shell /bin/sh (root's ~/.bashrc is slow), HOME a temp
	// dir, an unlocked shadow entry (sshd without PAM refuses "!" accounts).
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return err
	}
	var pw []string
	privsep := false // sshd's privilege separation user
	for _, line := range strings.Split(strings.TrimRight(string(passwd), "\n"), "\n") {
		if strings.HasPrefix(line, "root:") {
			line = "root:x:0:0:root:" + h.Home + ":/bin/sh"
		}
		privsep = privsep || strings.HasPrefix(line, "sshd:")
		pw = append(pw, line)
	}
	if !privsep { // a machine whose sshd was not installed by its package
		pw = append(pw, "sshd:x:1999:65534::/run/sshd:/usr/sbin/nologin")
	}
	for i, u := range h.Spec.Users {
		shell := u.Shell
		if shell == "" {
			shell = "/bin/sh"
		}
		pw = append(pw, fmt.Sprintf("%s:x:%d:65534:%s:/tmp:%s", u.Name, 2000+i, u.Name, shell))
	}
	if err := h.writeFile("/etc/passwd", strings.Join(pw, "\n")+"\n", 0o644); err != nil {
		return err
	}
	shadow, _ := os.ReadFile("/etc/shadow")
	var sh []string
	for _, line := range strings.Split(strings.TrimRight(string(shadow), "\n"), "\n") {
		if strings.HasPrefix(line, "root:") || line == "" {
			continue
		}
		sh = append(sh, line)
	}
	sh = append([]string{"root:*:19000:0:99999:7:::"}, sh...)
	for _, u := range h.Spec.Users {
		hash := u.PasswordHash
		if hash == "" {
			hash = "*"
		}
		sh = append(sh, u.Name+":"+hash+":19000:0:99999:7:::")
	}
	if err := h.writeFile("/etc/shadow", strings.Join(sh, "\n")+"\n", 0o640); err != nil {
		return err
	}
	if err := h.writeFile("/etc/hostname", h.Spec.Name+"\n", 0o644); err != nil {
		return err
	}
	hosts, _ := os.ReadFile("/etc/hosts")
	if err := h.writeFile("/etc/hosts", string(hosts)+h.Addr+"\t"+h.Spec.Name+"\n", 0o644); err != nil {
		return err
	}

	// sysctl configuration: private, empty unless the spec says otherwise.
	for _, d := range []string{"/etc/sysctl.d", "/usr/lib/sysctl.d", "/etc/udev/rules.d"} {
		if d == "/etc/udev/rules.d" && h.Spec.NoUdevRules {
			if err := h.whiteout(d); err != nil {
				return err
			}
			continue
		}
		if err := h.privateDir(d); err != nil {
			return err
		}
	}
	sysctlConf := ""
	for name, content := range h.Spec.SysctlFiles {
		switch {
		case name == "/etc/sysctl.conf":
			sysctlConf = content
		case strings.HasPrefix(name, "/"):
			if err := h.writeFile(name, content, 0o644); err != nil {
				return err
			}
		default:
			if strings.Contains(name, "/") {
				return fmt.Errorf("SysctlFiles key %q: a file name or an absolute path", name)
			}
			if err := h.writeFile("/etc/sysctl.d/"+name, content, 0o644); err != nil {
				return err
			}
		}
	}
	if err := h.writeFile("/etc/sysctl.conf", sysctlConf, 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(h.upper("/var"), "lib", "kaudit"), 0o755); err != nil {
		return err
	}

	for p, content := range h.Spec.Files {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(content, "#!") {
			mode = 0o755
		}
		if err := h.writeFile(p, content, mode); err != nil {
			return err
		}
	}

	// Hidden tools: a whiteout in the /usr overlay for every path that
	// resolves into /usr (merged-/usr systems); a /dev/null bind otherwise.
	var binds [][2]string
	hide := func(tool string) error {
		done := map[string]bool{}
		for _, d := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
			p := filepath.Join(d, tool)
			if _, err := os.Lstat(p); err != nil {
				continue
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				real = p
			}
			if done[real] {
				continue
			}
			done[real] = true
			if strings.HasPrefix(real, "/usr/") {
				up, _ := h.hostPath(real)
				if err := os.MkdirAll(filepath.Dir(up), 0o755); err != nil {
					return err
				}
				if err := syscall.Mknod(up, syscall.S_IFCHR, 0); err != nil {
					return fmt.Errorf("whiteout %s: %w", up, err)
				}
			} else {
				binds = append(binds, [2]string{"/dev/null", real})
			}
		}
		return nil
	}
	if h.Spec.NoEthtool {
		if err := hide("ethtool"); err != nil {
			return err
		}
	}
	if h.Spec.NoSS {
		if err := hide("ss"); err != nil {
			return err
		}
	}
	i := 0
	for p, content := range h.Spec.ProcFiles {
		src := filepath.Join(h.Dir, "proc", strconv.Itoa(i))
		i++
		if err := os.WriteFile(src, []byte(content), 0o444); err != nil {
			return err
		}
		binds = append(binds, [2]string{src, p})
	}

	// sshd.
	keyPath := filepath.Join(h.Dir, "ssh_host_ed25519_key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "kft-"+h.Spec.Name, "-f", keyPath).CombinedOutput(); err != nil {
		return fmt.Errorf("ssh-keygen: %v: %s", err, out)
	}
	pub, err := os.ReadFile(keyPath + ".pub")
	if err != nil {
		return err
	}
	h.HostKeyFP, err = fingerprint(string(pub))
	if err != nil {
		return err
	}
	hostCert, err := h.signHostKey(keyPath)
	if err != nil {
		return err
	}
	cfg := strings.Join([]string{
		h.listenAddress(),
		"HostKey " + keyPath,
		hostCert,
		"PidFile " + filepath.Join(h.Dir, "sshd.pid"),
		"AuthorizedKeysFile " + filepath.Join(f.Dir, "authorized_keys"),
		"PermitRootLogin prohibit-password",
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"HostbasedAuthentication no",
		"UsePAM no",
		"UseDNS no",
		"StrictModes no",
		"PrintMotd no",
		"PrintLastLog no",
		"X11Forwarding no",
		"PermitUserEnvironment no",
		h.maxStartups(),
		h.trustedCAs(),
		"MaxSessions 64",
		"LoginGraceTime 30",
		"LogLevel INFO",
		"",
	}, "\n")
	if err := os.WriteFile(filepath.Join(h.Dir, "sshd_config"), []byte(cfg), 0o600); err != nil {
		return err
	}
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd"
	}
	spec := struct {
		Procs []map[string]any `json:"procs"`
	}{}
	spec.Procs = append(spec.Procs, map[string]any{
		"path": sshd, "argv": []string{sshd, "-D", "-e", "-f", filepath.Join(h.Dir, "sshd_config")},
		"env": []string{stdPath}, "dir": "/", "log": filepath.Join(h.Dir, "sshd.log"),
	})

	// Fake broker.
	if h.Spec.Kafka != nil {
		l, err := h.Spec.Kafka.layout()
		if err != nil {
			return err
		}
		h.layout = l
		h.KafkaHome, h.KafkaJarDir, h.KafkaConfig, h.KafkaLog = l.home, l.jarDir, l.configPath, l.logPath
		h.KafkaPort, h.KafkaBacklog, h.KafkaArgv = l.port, l.backlog, l.argv
		up, _ := h.hostPath(FakeJavaPath)
		if err := os.MkdirAll(filepath.Dir(up), 0o755); err != nil {
			return err
		}
		if err := os.Link(f.helper, up); err != nil {
			return err
		}
		if h.Spec.Kafka.Confluent {
			if err := h.privateDir(l.jarDir); err != nil {
				return err
			}
			if err := h.privateDir("/usr/share/java/confluent-telemetry"); err != nil {
				return err
			}
			if err := h.writeFile("/usr/share/java/confluent-telemetry/confluent-metrics-"+h.Spec.Kafka.Version+"-ce.jar", "", 0o644); err != nil {
				return err
			}
			for _, d := range []string{"/etc/kafka", "/var/log/kafka", "/var/lib/kafka"} {
				if err := h.privateDir(d); err != nil {
					return err
				}
			}
		} else {
			for _, sub := range []string{"bin", "logs"} {
				if err := os.MkdirAll(filepath.Join(h.upper("/opt"), strings.TrimPrefix(l.home, "/opt/"), sub), 0o755); err != nil {
					return err
				}
			}
			if err := h.writeFile(l.home+"/bin/kafka-server-start.sh", "#!/bin/bash\nexec $(dirname $0)/kafka-run-class.sh kafka.Kafka \"$@\"\n", 0o755); err != nil {
				return err
			}
		}
		for _, j := range l.jars {
			if err := h.writeFile(l.jarDir+"/"+j, "", 0o644); err != nil {
				return err
			}
		}
		if err := h.writeFile(l.configPath, l.serverProperties(), 0o644); err != nil {
			return err
		}
		if err := h.writeFile(filepath.Dir(l.configPath)+"/log4j.properties", "log4j.rootLogger=INFO, stdout, kafkaAppender\n", 0o644); err != nil {
			return err
		}
		env := []string{stdPath, "HOME=/root", "LANG=C.UTF-8",
			"KAFKA_HEAP_OPTS=-Xmx1G -Xms1G",
			"KFT_PORT=" + strconv.Itoa(l.port),
			"KFT_BACKLOG=" + strconv.Itoa(l.backlog),
			"KFT_RCVBUF=" + strconv.Itoa(l.rcvbuf),
			"KFT_STATE=" + filepath.Join(h.Dir, "broker.state"),
			"KFT_LOG=" + l.logPath,
			"KFT_VERSION=" + l.versionLog,
			"KFT_CONFIG_DUMP=" + l.configDump(),
		}
		if h.Spec.Kafka.IPv4Only {
			env = append(env, "KFT_IPV4_ONLY=1")
		}
		if n := h.Spec.Kafka.NoFile; n > 0 {
			env = append(env, "KFT_NOFILE="+strconv.Itoa(n))
		}
		spec.Procs = append(spec.Procs, map[string]any{
			"path": FakeJavaPath, "argv": l.argv, "env": env, "dir": l.workDir,
			"log": filepath.Join(h.Dir, "broker.out"),
		})
	}
	js, _ := json.MarshalIndent(spec, "", "  ")
	if err := os.WriteFile(filepath.Join(h.Dir, "init.json"), js, 0o600); err != nil {
		return err
	}

	// The script run as PID 1 of the host's new mount/PID/UTS namespaces.
	q := remote.Quote
	var s strings.Builder
	s.WriteString("set -eu\n")
	s.WriteString("mount -t tmpfs -o mode=0755,size=64m kft-run /run\n")
	s.WriteString("mkdir -p /run/sshd /run/lock /run/.kft && chmod 0755 /run/sshd && chmod 1777 /run/lock\n")
	// A host is a container of this machine (its kernel is this machine's):
	// say so as systemd's container interface asks a container manager to,
	// so that kaudit never plans a kernel-wide sysctl (vm.*) here, which
	// would change this machine's.
	s.WriteString("mkdir -p /run/systemd && echo kft > /run/systemd/container\n")
	// The fleet dir usually lives in /tmp: keep it reachable across the private /tmp.
	fmt.Fprintf(&s, "mount --bind %s /run/.kft\n", q(f.Dir))
	s.WriteString("mount -t tmpfs -o mode=1777,size=256m kft-tmp /tmp\n")
	fmt.Fprintf(&s, "mkdir -p %s && mount --bind /run/.kft %s && umount /run/.kft && rmdir /run/.kft\n", q(f.Dir), q(f.Dir))
	for _, r := range overlayRoots {
		if _, err := os.Stat(r); err != nil {
			continue
		}
		base := filepath.Join(h.Dir, "ovl", strings.TrimPrefix(r, "/"))
		fmt.Fprintf(&s, "mount -t overlay kft%s -o lowerdir=%s,upperdir=%s,workdir=%s %s\n",
			strings.ReplaceAll(r, "/", "-"), r, q(base+"/up"), q(base+"/work"), r)
	}
	for _, b := range binds {
		fmt.Fprintf(&s, "mount --bind %s %s\n", q(b[0]), q(b[1]))
	}
	ms, err := h.mountScript()
	if err != nil {
		return err
	}
	s.WriteString(ms)
	fmt.Fprintf(&s, "hostname %s\n", q(h.Spec.Name))
	fmt.Fprintf(&s, "exec %s init %s\n", q(f.helper), q(filepath.Join(h.Dir, "init.json")))
	return os.WriteFile(filepath.Join(h.Dir, "start.sh"), []byte(s.String()), 0o700)
}

func (h *Host) network() error {
	if h.Spec.Behind != "" {
		return h.networkBehind()
	}
	ns := h.NS
	cmds := [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "link", "add", h.Link, "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"ip", "addr", "add", h.PeerAddr + "/30", "dev", h.Link},
		{"ip", "link", "set", h.Link, "up"},
		{"ip", "-n", ns, "addr", "add", h.Addr + "/30", "dev", "eth0"},
		{"ip", "-n", ns, "link", "set", "eth0", "up"},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
	}
	if h.Spec.MTU > 0 {
		cmds = append(cmds, []string{"ip", "-n", ns, "link", "set", "eth0", "mtu", strconv.Itoa(h.Spec.MTU)})
	}
	for _, c := range cmds {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(c, " "), err, out)
		}
	}
	return nil
}

// sysctls writes the host's sysctls from a process that is only in the
// host's network namespace; a key that does not exist there is an error.
func (h *Host) sysctls() error {
	if len(h.Spec.Sysctls) == 0 {
		return nil
	}
	args := []string{"--net=/run/netns/" + h.NS, "--", "/bin/sh", "-c",
		`while [ $# -gt 0 ]; do [ -f "$1" ] || { echo "$1: no such per-namespace sysctl" >&2; exit 3; }; printf '%s\n' "$2" > "$1" || exit 4; shift 2; done`, "kft-sysctl"}
	for _, k := range sortedKeys(h.Spec.Sysctls) {
		args = append(args, "/proc/sys/"+strings.ReplaceAll(k, ".", "/"), h.Spec.Sysctls[k])
	}
	if out, err := exec.Command("nsenter", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

func (h *Host) launch() error {
	console, err := os.Create(filepath.Join(h.Dir, "console.log"))
	if err != nil {
		return err
	}
	defer console.Close()
	cmd := exec.Command("ip", "netns", "exec", h.NS,
		"unshare", "--mount", "--propagation", "private", "--uts", "--pid", "--fork", "--mount-proc", "--kill-child",
		"/bin/sh", filepath.Join(h.Dir, "start.sh"))
	cmd.Env = []string{stdPath, "HOME=" + h.Home, "LANG=C"}
	cmd.Stdout, cmd.Stderr = console, console
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	h.cmd = cmd
	h.waitDone = make(chan struct{})
	go func() { _ = cmd.Wait(); close(h.waitDone) }()

	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-h.waitDone:
			return fmt.Errorf("host exited during start: %v", cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after 20s (init %d sshd %d broker %d)", h.InitPid, h.SSHDPid, h.BrokerPid)
		}
		if h.InitPid == 0 {
			for _, c := range childPids(cmd.Process.Pid) {
				if comm(c) == "kft-helper" {
					h.InitPid = c
				}
			}
		}
		if h.InitPid != 0 {
			for _, c := range childPids(h.InitPid) {
				switch comm(c) {
				case "sshd":
					h.SSHDPid = c
				case "java":
					h.BrokerPid = c
				}
			}
		}
		ready := h.SSHDPid != 0 && h.listening(22)
		if h.Spec.Kafka != nil {
			ready = ready && h.BrokerPid != 0 && h.listening(h.KafkaPort) && h.brokerState() == "running"
		}
		if ready {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// listening reports whether a LISTEN socket on port exists in the host's
// network namespace (read from /proc/<init>/net/tcp{,6} in the root ns).
func (h *Host) listening(port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", h.InitPid, f))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fl := strings.Fields(line)
			if len(fl) > 3 && fl[3] == "0A" && strings.HasSuffix(fl[1], want) {
				return true
			}
		}
	}
	return false
}

func (h *Host) brokerState() string {
	b, _ := os.ReadFile(filepath.Join(h.Dir, "broker.state"))
	return strings.TrimSpace(string(b))
}

// childPids lists the children of every thread of pid.
func childPids(pid int) []int {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var out []int
	for _, tk := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, tk.Name()))
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// state is the field after the ")" of comm; Z = zombie.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// ---------- teardown ----------

func (f *Fleet) teardown(t testing.TB) {
	for _, h := range f.Hosts {
		if h.InitPid > 0 {
			_ = syscall.Kill(h.InitPid, syscall.SIGKILL) // PID 1 dies: the kernel kills the whole PID namespace
		}
		if h.cmd != nil && h.cmd.Process != nil {
			_ = h.cmd.Process.Kill()
		}
	}
	for _, h := range f.Hosts {
		if h.waitDone != nil {
			select {
			case <-h.waitDone:
			case <-time.After(10 * time.Second):
				t.Errorf("testfleet: %s: host process did not exit", h.Spec.Name)
			}
		}
		for _, r := range h.sshdCmds {
			_ = r.cmd.Process.Kill() // nsenter only: its sshd died with the PID namespace
			select {
			case <-r.done:
			case <-time.After(10 * time.Second):
				t.Errorf("testfleet: %s: restarted sshd (nsenter %d) did not exit", h.Spec.Name, r.cmd.Process.Pid)
			}
		}
	}
	if t.Failed() {
		for _, h := range f.Hosts {
			t.Logf("testfleet: %s logs\n--- console.log:\n%s--- sshd.log:\n%s--- broker.out:\n%s", h.Spec.Name,
				tail(filepath.Join(h.Dir, "console.log")), tail(filepath.Join(h.Dir, "sshd.log")), tail(filepath.Join(h.Dir, "broker.out")))
		}
	}
	for _, h := range f.Hosts {
		_ = exec.Command("ip", "link", "del", h.Link).Run()
		if out, err := exec.Command("ip", "netns", "del", h.NS).CombinedOutput(); err != nil && !bytes.Contains(out, []byte("No such file")) {
			t.Errorf("testfleet: ip netns del %s: %v %s", h.NS, err, out)
		}
	}
	if os.Getenv("KFT_KEEP") != "" {
		t.Logf("testfleet: KFT_KEEP set, keeping %s", f.Dir)
		return
	}
	if f.Dir != "" && strings.Contains(filepath.Base(f.Dir), dirPrefix) {
		if err := os.RemoveAll(f.Dir); err != nil {
			t.Errorf("testfleet: removing %s: %v", f.Dir, err)
		}
	}
}

// ---------- running things on a host ----------

// Exec runs cmd inside the host's network, mount, UTS and PID namespaces
// (what an SSH session sees, without SSH) and returns its stdout. Fatal on
// a non-zero exit.
func (h *Host) Exec(t testing.TB, cmd ...string) string {
	t.Helper()
	out, err := h.ExecErr(cmd...)
	if err != nil {
		t.Fatalf("testfleet: %s: %q: %v", h.Spec.Name, cmd, err)
	}
	return out
}

// ExecErr is Exec returning the error (with stderr) instead of failing.
func (h *Host) ExecErr(cmd ...string) (string, error) {
	args := append([]string{"-t", strconv.Itoa(h.InitPid), "-m", "-u", "-n", "-p", "--wd=/", "--"}, cmd...)
	return runEnv(h.env(), "nsenter", args...)
}

// ExecNet runs cmd only in the host's network namespace, with the machine's
// own filesystem and tools (e.g. ss or nstat on a NoSS host). Use it for
// read-only ground truth.
func (h *Host) ExecNet(t testing.TB, cmd ...string) string {
	t.Helper()
	args := append([]string{"--net=/run/netns/" + h.NS, "--"}, cmd...)
	out, err := runEnv(h.env(), "nsenter", args...)
	if err != nil {
		t.Fatalf("testfleet: %s (net only): %q: %v", h.Spec.Name, cmd, err)
	}
	return out
}

func (h *Host) env() []string {
	return []string{stdPath, "HOME=" + h.Home, "LANG=C", "NSTAT_HISTORY=/tmp/.kft-nstat"}
}

func runEnv(env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// SSHArgs are the OpenSSH client arguments that reach h as the fleet's
// user with strict host-key checking (append the remote command).
func (f *Fleet) SSHArgs(h *Host) []string {
	return []string{"-F", "/dev/null", "-i", f.IdentityFile,
		"-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none", "-o", "BatchMode=yes",
		"-o", "UserKnownHostsFile=" + f.KnownHosts, "-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "StrictHostKeyChecking=yes", "-o", "ConnectTimeout=5", "-o", "LogLevel=ERROR",
		"-p", strconv.Itoa(h.Port), f.User + "@" + h.Addr}
}

// SSHErr runs command on h through the real ssh client.
func (h *Host) SSHErr(command string) (string, error) {
	args := append(h.fleet.SSHArgs(h), command)
	return runEnv([]string{stdPath, "HOME=" + h.fleet.clientHome, "LANG=C"}, "ssh", args...)
}

// SSH runs command on h through the real ssh client; fatal on failure.
func (h *Host) SSH(t testing.TB, command string) string {
	t.Helper()
	out, err := h.SSHErr(command)
	if err != nil {
		t.Fatalf("testfleet: ssh %s %q: %v", h.Spec.Name, command, err)
	}
	return out
}

// Netstat returns the host's TcpExt/Tcp/Ip... counters as nstat names them
// ("TcpExtListenOverflows"), read from /proc/<init>/net/{netstat,snmp}.
func (h *Host) Netstat(t testing.TB) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	for _, f := range []string{"netstat", "snmp"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", h.InitPid, f))
		if err != nil {
			t.Fatalf("testfleet: %s: %v", h.Spec.Name, err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i+1 < len(lines); i += 2 {
			names, vals := strings.Fields(lines[i]), strings.Fields(lines[i+1])
			if len(names) == 0 || len(names) != len(vals) || names[0] != vals[0] {
				continue
			}
			prefix := strings.TrimSuffix(names[0], ":")
			for j := 1; j < len(names); j++ {
				n, _ := strconv.ParseInt(vals[j], 10, 64)
				m[prefix+names[j]] = n
			}
		}
	}
	return m
}

// ---------- fault injection ----------

// KillSSHD kills the host's sshd (SIGKILL) and waits until port 22 is
// closed; the broker keeps running. Connections are then refused.
func (h *Host) KillSSHD(t testing.TB) {
	t.Helper()
	h.killWait(t, h.SSHDPid, 22)
}

// KillSSHDAll kills (SIGKILL) every sshd process of the host: the listener
// and the per-connection session processes, so sessions in progress are cut
// off (KillSSHD alone leaves open sessions running, as a real sshd restart
// does). It waits until they are gone and port 22 is closed.
func (h *Host) KillSSHDAll(t testing.TB) {
	t.Helper()
	myNS, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", h.InitPid))
	if err != nil {
		t.Fatalf("testfleet: %s: %v", h.Spec.Name, err)
	}
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 {
			continue
		}
		if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err != nil || ns != myNS {
			continue
		}
		if comm(pid) == "sshd" {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		t.Fatalf("testfleet: %s: no sshd process found", h.Spec.Name)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		busy := h.listening(22)
		for _, pid := range pids {
			busy = busy || alive(pid)
		}
		if !busy {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("testfleet: %s: sshd processes %v still alive / port 22 still listening", h.Spec.Name, pids)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("testfleet: %s: killed sshd processes %v", h.Spec.Name, pids)
}

type restarted struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// RestartSSHD starts the host's sshd again after KillSSHD or KillSSHDAll:
// the same binary, config and host key, inside the host's mount, UTS,
// network and PID namespaces (nsenter, so it is a child of an nsenter
// process of the test rather than of the host's init; it dies with the
// host's PID namespace at teardown like the first one), logging to the
// same sshd.log. It waits until port 22 listens and sets h.SSHDPid to the
// new sshd, so KillSSHD, StopSSHD and ContSSHD act on it. Fatal when an
// sshd of the host is still running.
func (h *Host) RestartSSHD(t testing.TB) {
	t.Helper()
	if alive(h.SSHDPid) && comm(h.SSHDPid) == "sshd" {
		t.Fatalf("testfleet: %s: sshd %d is still running", h.Spec.Name, h.SSHDPid)
	}
	if h.listening(22) {
		t.Fatalf("testfleet: %s: port 22 is still listening", h.Spec.Name)
	}
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd"
	}
	logf, err := os.OpenFile(filepath.Join(h.Dir, "sshd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("testfleet: %s: %v", h.Spec.Name, err)
	}
	defer logf.Close()
	cmd := exec.Command("nsenter", "-t", strconv.Itoa(h.InitPid), "-m", "-u", "-n", "-p", "--wd=/", "--",
		sshd, "-D", "-e", "-f", filepath.Join(h.Dir, "sshd_config"))
	cmd.Env = []string{stdPath}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testfleet: %s: starting sshd: %v", h.Spec.Name, err)
	}
	r := &restarted{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(r.done) }()
	h.sshdCmds = append(h.sshdCmds, r)
	deadline := time.Now().Add(20 * time.Second)
	pid := 0
	for {
		select {
		case <-r.done:
			t.Fatalf("testfleet: %s: restarted sshd exited: %v\n--- sshd.log:\n%s", h.Spec.Name, cmd.ProcessState, tail(filepath.Join(h.Dir, "sshd.log")))
		default:
		}
		if pid == 0 {
			for _, c := range childPids(cmd.Process.Pid) {
				if comm(c) == "sshd" {
					pid = c
				}
			}
		}
		if pid != 0 && h.listening(22) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("testfleet: %s: restarted sshd not listening after 20s (nsenter %d, sshd %d)", h.Spec.Name, cmd.Process.Pid, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.SSHDPid = pid
	t.Logf("testfleet: %s: sshd restarted (pid %d)", h.Spec.Name, pid)
}

// AuthorizedKeys is the authorized_keys file every host and user trusts
// (append a public key to authorize it fleet-wide).
func (f *Fleet) AuthorizedKeys() string { return filepath.Join(f.Dir, "authorized_keys") }

// StopSSHD freezes sshd (SIGSTOP): connects hang (the kernel still
// completes handshakes into the accept queue). ContSSHD undoes it.
func (h *Host) StopSSHD(t testing.TB) { t.Helper(); h.signal(t, h.SSHDPid, syscall.SIGSTOP) }

// ContSSHD resumes a stopped sshd.
func (h *Host) ContSSHD(t testing.TB) { t.Helper(); h.signal(t, h.SSHDPid, syscall.SIGCONT) }

// StopBroker kills the fake broker and waits until its port is closed.
func (h *Host) StopBroker(t testing.TB) {
	t.Helper()
	if h.BrokerPid == 0 {
		t.Fatalf("testfleet: %s has no broker", h.Spec.Name)
	}
	h.killWait(t, h.BrokerPid, h.KafkaPort)
}

func (h *Host) signal(t testing.TB, pid int, sig syscall.Signal) {
	t.Helper()
	if pid <= 0 || !alive(pid) {
		t.Fatalf("testfleet: %s: pid %d is not running", h.Spec.Name, pid)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("testfleet: %s: kill %d: %v", h.Spec.Name, pid, err)
	}
}

func (h *Host) killWait(t testing.TB, pid, port int) {
	t.Helper()
	h.signal(t, pid, syscall.SIGKILL)
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) || h.listening(port) {
		if time.Now().After(deadline) {
			t.Fatalf("testfleet: %s: pid %d still alive / port %d still listening", h.Spec.Name, pid, port)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// listenQueue returns Recv-Q and Send-Q (= effective backlog) of the
// broker's listener, from ss run in the host's network namespace.
func (h *Host) listenQueue(t testing.TB) (recvQ, sendQ int) {
	t.Helper()
	out := h.ExecNet(t, "ss", "-Hltn", fmt.Sprintf("sport = :%d", h.KafkaPort))
	f := strings.Fields(out)
	if len(f) < 4 {
		t.Fatalf("testfleet: %s: no listener on %d: %q", h.Spec.Name, h.KafkaPort, out)
	}
	recvQ, _ = strconv.Atoi(f[1])
	sendQ, _ = strconv.Atoi(f[2])
	return
}

func (h *Host) setPaused(t testing.TB, paused bool) {
	t.Helper()
	sig, want := syscall.SIGUSR2, "running"
	if paused {
		sig, want = syscall.SIGUSR1, "paused"
	}
	h.signal(t, h.BrokerPid, sig)
	deadline := time.Now().Add(5 * time.Second)
	for h.brokerState() != want {
		if time.Now().After(deadline) {
			t.Fatalf("testfleet: %s: broker did not switch to %s", h.Spec.Name, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// OverflowAcceptQueue makes TcpExtListenOverflows grow on the broker's
// port: it pauses the broker's accept(), opens (effective backlog + 10)
// connections from the root namespace (bounded: at most 16384, 1.5 s dial
// timeout each), waits for the counter, closes everything and resumes.
func (h *Host) OverflowAcceptQueue(t testing.TB) {
	t.Helper()
	if h.BrokerPid == 0 {
		t.Fatalf("testfleet: %s has no broker", h.Spec.Name)
	}
	_, backlog := h.listenQueue(t)
	n := backlog + 10
	if n > 16384 {
		t.Fatalf("testfleet: %s: backlog %d too large to overflow (limit 16384)", h.Spec.Name, backlog)
	}
	before := h.Netstat(t)["TcpExtListenOverflows"]
	h.setPaused(t, true)
	defer h.setPaused(t, false)

	addr := net.JoinHostPort(h.Addr, strconv.Itoa(h.KafkaPort))
	conns := make([]net.Conn, n)
	sem := make(chan struct{}, 512)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			d := net.Dialer{Timeout: 1500 * time.Millisecond}
			if c, err := d.Dial("tcp4", addr); err == nil {
				conns[i] = c
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	after := h.Netstat(t)["TcpExtListenOverflows"]
	for after <= before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		after = h.Netstat(t)["TcpExtListenOverflows"]
	}
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
	if after <= before {
		t.Fatalf("testfleet: %s: ListenOverflows stayed at %d after %d connects (backlog %d)", h.Spec.Name, after, n, backlog)
	}
	t.Logf("testfleet: %s: ListenOverflows %d -> %d (%d connects, backlog %d)", h.Spec.Name, before, after, n, backlog)
}

// SendCookies makes TcpExtSyncookiesSent grow: it requires
// net.ipv4.tcp_syncookies=2 in the host's namespace and opens (and closes)
// 5 connections to the broker port, or to sshd when there is no broker.
func (h *Host) SendCookies(t testing.TB) {
	t.Helper()
	v := strings.TrimSpace(h.ExecNet(t, "cat", "/proc/sys/net/ipv4/tcp_syncookies"))
	if v != "2" {
		t.Fatalf("testfleet: %s: SendCookies needs net.ipv4.tcp_syncookies=2 (is %s)", h.Spec.Name, v)
	}
	port := 22
	if h.BrokerPid != 0 {
		port = h.KafkaPort
	}
	before := h.Netstat(t)["TcpExtSyncookiesSent"]
	addr := net.JoinHostPort(h.Addr, strconv.Itoa(port))
	for range 5 {
		c, err := net.DialTimeout("tcp4", addr, 3*time.Second)
		if err != nil {
			t.Fatalf("testfleet: %s: dial %s: %v", h.Spec.Name, addr, err)
		}
		c.Close()
	}
	deadline := time.Now().Add(3 * time.Second)
	after := h.Netstat(t)["TcpExtSyncookiesSent"]
	for after <= before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		after = h.Netstat(t)["TcpExtSyncookiesSent"]
	}
	if after <= before {
		t.Fatalf("testfleet: %s: SyncookiesSent stayed at %d", h.Spec.Name, after)
	}
}

// ---------- inventory ----------

// Inventory writes a kaudit inventory for the fleet and returns its path.
func (f *Fleet) Inventory(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("defaults:\n")
	fmt.Fprintf(&b, "  user: %s\n", f.User)
	fmt.Fprintf(&b, "  identity_files: [%s]\n", f.IdentityFile)
	b.WriteString("  use_agent: false\n")
	fmt.Fprintf(&b, "  known_hosts: [%s]\n", f.KnownHosts)
	b.WriteString("  timeout: 20s\n")
	b.WriteString("  kafka: {port: 9092}\n")
	b.WriteString("hosts:\n")
	for _, h := range f.Hosts {
		if h.KafkaPort != 0 && h.KafkaPort != 9092 {
			fmt.Fprintf(&b, "  %s: {address: %s, port: %d, kafka: {port: %d}}\n", h.Spec.Name, h.Addr, h.Port, h.KafkaPort)
		} else {
			fmt.Fprintf(&b, "  %s: {address: %s, port: %d}\n", h.Spec.Name, h.Addr, h.Port)
		}
	}
	p := filepath.Join(f.Dir, "inventory.yaml")
	must(t, os.WriteFile(p, []byte(b.String()), 0o644))
	return p
}

// ---------- small helpers ----------

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func u32ip(v uint32) string {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, v)
	return net.IP(b).String()
}

func fingerprint(pubLine string) (string, error) {
	f := strings.Fields(pubLine)
	if len(f) < 2 {
		return "", fmt.Errorf("bad public key %q", pubLine)
	}
	blob, err := base64.StdEncoding.DecodeString(f[1])
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(blob)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:]), nil
}

func tail(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n") + "\n"
}
