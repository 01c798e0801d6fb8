package audit_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
)

// realSSHD starts OpenSSH's sshd on 127.0.0.1 inside a private mount
// namespace whose /etc/passwd gives root a plain /bin/sh and a temp HOME
// (root's real ~/.bashrc is slow and is not what we measure). Nothing
// outside the namespace and the temp dir changes. It returns the port, a
// known_hosts file holding the server's key, and a client key.
func realSSHD(t *testing.T) (port int, knownHosts, key string) {
	t.Helper()
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd"
		if _, err := os.Stat(sshd); err != nil {
			t.Skip("OpenSSH sshd not installed (apt-get install openssh-server); .ci/run installs it")
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("the real-sshd smoke test needs root (private mount namespace for a clean login shell)")
	}
	for _, tool := range []string{"ssh-keygen", "unshare", "ssh-keyscan"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "host_ed25519"))
	run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "kaudit-test", "-f", filepath.Join(dir, "id_ed25519"))
	pub, _ := os.ReadFile(filepath.Join(dir, "id_ed25519.pub"))
	home := filepath.Join(dir, "home")
	_ = os.MkdirAll(home, 0o700)
	_ = os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600)

	// A private passwd: root logs in with /bin/sh and a temp HOME.
	passwd, _ := os.ReadFile("/etc/passwd")
	var pw strings.Builder
	for _, line := range strings.Split(strings.TrimRight(string(passwd), "\n"), "\n") {
		if strings.HasPrefix(line, "root:") {
			line = "root:x:0:0:root:" + home + ":/bin/sh"
		}
		pw.WriteString(line + "\n")
	}
	_ = os.WriteFile(filepath.Join(dir, "passwd"), []byte(pw.String()), 0o644)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cfg := fmt.Sprintf(`ListenAddress 127.0.0.1:%d
HostKey %s/host_ed25519
PidFile %s/sshd.pid
AuthorizedKeysFile %s/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
StrictModes no
PrintMotd no
LogLevel ERROR
`, port, dir, dir, dir)
	_ = os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(cfg), 0o600)
	_ = os.MkdirAll(filepath.Join(dir, "run-sshd"), 0o755)
	script := fmt.Sprintf("mount --bind %s/passwd /etc/passwd && mkdir -p /run/sshd 2>/dev/null; mount --bind %s/run-sshd /run/sshd && exec %s -D -e -f %s/sshd_config",
		dir, dir, sshd, dir)
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script)
	sshdLog, _ := os.Create(filepath.Join(dir, "sshd.log"))
	cmd.Stderr = sshdLog
	t.Cleanup(func() {
		sshdLog.Close()
		if t.Failed() {
			data, _ := os.ReadFile(sshdLog.Name())
			t.Logf("sshd log:\n%s", data)
		}
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // the PID we started, nothing else
		_, _ = cmd.Process.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd did not start listening on %d", port)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Real known_hosts from ssh-keyscan, as a user would build it.
	out, err := exec.Command("ssh-keyscan", "-p", strconv.Itoa(port), "-t", "ed25519", "127.0.0.1").Output()
	if err != nil || len(out) == 0 {
		t.Fatalf("ssh-keyscan: %v", err)
	}
	knownHosts = filepath.Join(dir, "known_hosts")
	_ = os.WriteFile(knownHosts, out, 0o600)
	return port, knownHosts, filepath.Join(dir, "id_ed25519")
}

// startAgent runs a real ssh-agent holding key, and points SSH_AUTH_SOCK at it.
func startAgent(t *testing.T, key string) {
	t.Helper()
	if _, err := exec.LookPath("ssh-agent"); err != nil {
		t.Skip("ssh-agent not installed")
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	cmd := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	add := exec.Command("ssh-add", key)
	add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("ssh-add: %v %s", err, out)
	}
	t.Setenv("SSH_AUTH_SOCK", sock)
}

func TestRealOpenSSHSmoke(t *testing.T) {
	port, kh, key := realSSHD(t)
	startAgent(t, key)
	// The identity comes from the agent only: no identity file is named,
	// and the default ~/.ssh keys of this machine are not authorized.
	h := inventory.Host{Name: "real", Address: "127.0.0.1", Port: port, User: "root", UseAgent: true,
		KnownHosts: []string{kh}, HostKeyPolicy: "strict", KafkaPort: 22}
	keys := []string{"net.core.somaxconn", "net.ipv4.tcp_syncookies", "net.ipv4.tcp_max_syn_backlog", "net.ipv4.tcp_rmem"}
	res := audit.Scan(context.Background(), []inventory.Host{h}, audit.Options{SysctlKeys: keys, Timeout: 20 * time.Second})
	r := res[0]
	if r.Err != nil {
		t.Fatalf("scan of a real sshd: %s: %s", r.Err.Kind, r.Err.Msg)
	}
	f := r.Facts
	t.Logf("real sshd host gathered in %v", r.Duration)
	for i := 0; i < 3; i++ {
		res := audit.Scan(context.Background(), []inventory.Host{h}, audit.Options{SysctlKeys: keys})
		t.Logf("again: %v", res[0].Duration)
	}
	for _, k := range keys {
		out, err := exec.Command("sysctl", "-n", k).Output()
		if err != nil {
			t.Skipf("sysctl binary: %v", err)
		}
		if want := strings.Join(strings.Fields(string(out)), " "); f.Sysctl[k] != want {
			t.Errorf("%s: kaudit %q, sysctl -n %q", k, f.Sysctl[k], want)
		}
	}
	// The sshd we started listens on port: ss -ltn must agree on its Send-Q.
	ssOut, err := exec.Command("ss", "-ltn").Output()
	if err == nil {
		want := -1
		sc := bufio.NewScanner(strings.NewReader(string(ssOut)))
		for sc.Scan() {
			fl := strings.Fields(sc.Text())
			if len(fl) >= 4 && strings.HasSuffix(fl[3], fmt.Sprintf("127.0.0.1:%d", port)) {
				want, _ = strconv.Atoi(fl[2])
			}
		}
		got := -1
		for _, l := range f.Listeners {
			if l.Port == port && l.Addr == "127.0.0.1" {
				got = l.Backlog
			}
		}
		if got != want || got <= 0 {
			t.Errorf("sshd listener backlog: kaudit %d, ss -ltn %d", got, want)
		}
	}
	// nstat -az: a counter that only grows must be >= kaudit's reading.
	if out, err := exec.Command("nstat", "-az", "TcpExtListenDrops").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			fl := strings.Fields(line)
			if len(fl) >= 2 && fl[0] == "TcpExtListenDrops" {
				now, _ := strconv.ParseInt(fl[1], 10, 64)
				if got := f.Netstat["TcpExt"]["ListenDrops"]; got > now {
					t.Errorf("ListenDrops: kaudit %d > nstat %d later", got, now)
				}
			}
		}
	}
	// A wrong known_hosts entry for the same server: hostkey error, with fingerprint.
	bad := filepath.Join(t.TempDir(), "known_hosts")
	other := filepath.Join(t.TempDir(), "k")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	opub, _ := os.ReadFile(other + ".pub")
	fields := strings.Fields(string(opub))
	_ = os.WriteFile(bad, []byte(fmt.Sprintf("[127.0.0.1]:%d %s %s\n", port, fields[0], fields[1])), 0o600)
	h.KnownHosts = []string{bad}
	res = audit.Scan(context.Background(), []inventory.Host{h}, audit.Options{SysctlKeys: keys})
	if res[0].Err == nil || res[0].Err.Kind != facts.KindHostKey || !strings.Contains(res[0].Err.Msg, "SHA256:") {
		t.Fatalf("changed key on a real sshd: %+v", res[0].Err)
	}
}
