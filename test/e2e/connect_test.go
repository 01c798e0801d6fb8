//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/test/testfleet"
)

// farmSize is how many inventory hosts share the farm's one sshd, behind
// the bastion, with sshd's default MaxStartups 10:30:100.
const farmSize = 200

// bastionFleet: only "bastion" is wired to the machine's namespace; "jump2"
// and the brokers hang off it by veth pairs of their own, "deep" hangs off
// jump2 (a 2-hop chain), "farm" answers on farmSize addresses.
func bastionFleet() []testfleet.HostSpec {
	b := func(name, behind string) testfleet.HostSpec {
		s := healthy(name)
		s.Behind = behind
		return s
	}
	farm := b("farm", "bastion")
	farm.ExtraAddrs, farm.DefaultMaxStartups = farmSize, true
	return []testfleet.HostSpec{
		{Name: "bastion", DefaultMaxStartups: true},
		{Name: "jump2", Behind: "bastion", DefaultMaxStartups: true},
		b("b1", "bastion"), b("b2", "bastion"), b("deep", "jump2"), farm,
	}
}

// connectSetup is everything the subtests share.
type connectSetup struct {
	f              *testfleet.Fleet
	conf, knownHst string
}

// writeSSHConfig defines every host only in an ssh_config: an Include, a
// Match final all block (as RHEL 9 and Fedora ship), a Match exec block
// that must not apply, ProxyJump chains and a HostKeyAlias for the farm.
func (s *connectSetup) writeSSHConfig(t *testing.T, common string) string {
	t.Helper()
	f := s.f
	h := func(n string) *testfleet.Host { return f.Host(n) }
	var fleet strings.Builder
	fmt.Fprintf(&fleet, "Host bastion\n  HostName %s\nHost jump2\n  HostName %s\n  ProxyJump bastion\n", h("bastion").Addr, h("jump2").Addr)
	fmt.Fprintf(&fleet, "Host b1\n  HostName %s\nHost b2\n  HostName %s\nHost b1 b2 farm-*\n  ProxyJump bastion\n", h("b1").Addr, h("b2").Addr)
	fmt.Fprintf(&fleet, "Host deep\n  HostName %s\n  ProxyJump bastion,jump2\nHost farm-*\n  HostKeyAlias farm\n", h("deep").Addr)
	for i, a := range h("farm").ExtraAddrs {
		fmt.Fprintf(&fleet, "Host farm-%03d\n  HostName %s\n", i+1, a)
	}
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "conf.d"), 0o700))
	must(t, os.WriteFile(filepath.Join(dir, "conf.d", "10-fleet.conf"), []byte(fleet.String()), 0o600))
	conf := fmt.Sprintf(`# everything kaudit needs is here, none of it in the inventory
Include %s/conf.d/*.conf
Match exec "true"
  Port 1
  User nobody
Host *
  User root
%s
Match final all
  UserKnownHostsFile %s
  StrictHostKeyChecking yes
  ConnectTimeout 15
`, dir, common, s.knownHst)
	p := filepath.Join(dir, "ssh_config")
	must(t, os.WriteFile(p, []byte(conf), 0o600))
	return p
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// aliasInventory names hosts only by their ssh_config aliases.
func aliasInventory(t *testing.T, names ...string) string {
	var b strings.Builder
	b.WriteString("defaults:\n  timeout: 90s\nhosts:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %s:\n", n)
	}
	return writeTempFile(t, "inventory.yaml", b.String())
}

func writeTempFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	must(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func farmNames(n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("farm-%03d", i))
	}
	return out
}

// logins counts the public-key logins h's sshd accepted so far.
func logins(t *testing.T, h *testfleet.Host) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.Dir, "sshd.log"))
	must(t, err)
	return strings.Count(string(b), "Accepted publickey")
}

func countErrors(rep *report.Report) (audited int, kinds map[string]int, sample map[string]string) {
	kinds, sample = map[string]int{}, map[string]string{}
	for _, h := range rep.Hosts {
		if h.Error == nil {
			audited++
			continue
		}
		kinds[string(h.Error.Kind)]++
		sample[string(h.Error.Kind)] = h.Name + ": " + h.Error.Message
	}
	return audited, kinds, sample
}

func TestConnectThroughBastions(t *testing.T) {
	requireEnv(t)
	f := testfleet.Start(t, bastionFleet())
	s := &connectSetup{f: f}
	kh, err := os.ReadFile(f.KnownHosts)
	must(t, err)
	farmLine, err := f.Host("farm").HostKeyLine("farm")
	must(t, err)
	s.knownHst = writeTempFile(t, "known_hosts", string(kh)+farmLine+"\n")
	keyConf := fmt.Sprintf("  IdentityFile %s\n  IdentitiesOnly yes\n  IdentityAgent none\n", f.IdentityFile)
	s.conf = s.writeSSHConfig(t, keyConf)

	t.Run("topology", func(t *testing.T) {
		// This machine's namespace has no route to the hosts behind the
		// bastion (a default route may still accept TCP: no SSH must answer).
		for _, n := range []string{"b1", "deep", "farm"} {
			a := f.Host(n).Addr
			if out, _ := exec.Command("ip", "route", "get", a).CombinedOutput(); strings.Contains(string(out), "kft-") {
				t.Errorf("%s (%s) is routed from the machine's own namespace: %s", n, a, out)
			}
			if banner := sshBanner(a); strings.HasPrefix(banner, "SSH-") {
				t.Errorf("%s's sshd answers from the machine's own namespace (%q): it must be behind the bastion only", n, banner)
			}
		}
		for _, n := range []string{"b1", "farm"} {
			script := "exec 3<>/dev/tcp/" + f.Host(n).Addr + "/22 && head -c 4 <&3"
			if out, err := exec.Command("ip", "netns", "exec", f.Host("bastion").NS, "bash", "-c", script).CombinedOutput(); err != nil || string(out) != "SSH-" {
				t.Errorf("the bastion cannot reach %s's sshd: %v: %q", n, err, out)
			}
		}
	})

	t.Run("ssh_config only: 2-hop chain and 200 hosts behind one bastion", func(t *testing.T) {
		names := append([]string{"b1", "b2", "deep"}, farmNames(farmSize)...)
		before := logins(t, f.Host("bastion"))
		args, out := scanArgs(t, aliasInventory(t, names...), "--ssh-config", s.conf, "--fail-on", "critical")
		r := decode(t, runKaudit(t, runOpts{limit: 5 * time.Minute}, args...), out)
		audited, kinds, sample := countErrors(r.Report)
		if audited != len(names) {
			t.Fatalf("%d of %d audited; errors %v, e.g. %v\nstderr:\n%.3000s", audited, len(names), kinds, sample, r.Stderr)
		}
		conns := logins(t, f.Host("bastion")) - before
		if conns != 1 {
			t.Errorf("%d logins on the bastion for %d hosts behind it, want 1 shared connection", conns, len(names))
		}
		if n := strings.Count(r.Stderr, "Match exec is not evaluated"); n != 1 {
			t.Errorf("%d warnings about Match exec, want 1\n%s", n, r.Stderr)
		}
		t.Logf("MEASURE through bastion: %d hosts (200 on one sshd with MaxStartups 10:30:100) audited in %v with %d TCP connection(s) to the bastion",
			len(names), r.Dur.Round(time.Millisecond), conns)
	})

	t.Run("direct from the bastion's namespace, for comparison", func(t *testing.T) {
		var inv strings.Builder
		fmt.Fprintf(&inv, "defaults:\n  user: root\n  identity_files: [%s]\n  use_agent: false\n  known_hosts: [%s]\n  timeout: 90s\n  ssh_config: false\nhosts:\n", f.IdentityFile, s.knownHst)
		for i, a := range f.Host("farm").ExtraAddrs {
			fmt.Fprintf(&inv, "  farm-%03d: {address: %s}\n", i+1, a)
		}
		// the same host key under every address
		var kh strings.Builder
		for _, a := range f.Host("farm").ExtraAddrs {
			l, _ := f.Host("farm").HostKeyLine(a)
			kh.WriteString(l + "\n")
		}
		must(t, os.WriteFile(s.knownHst, append(must2(os.ReadFile(s.knownHst)), kh.String()...), 0o600))
		invPath := writeTempFile(t, "direct.yaml", inv.String())
		for _, c := range []string{"32", "8"} {
			out := filepath.Join(t.TempDir(), "out.json")
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "ip", "netns", "exec", f.Host("bastion").NS, kauditBin(t), "scan", invPath, "--format", "json", "-o", out, "-c", c, "--fail-on", "critical")
			cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + t.TempDir(), "NO_COLOR=1"}
			stderr, _ := cmd.CombinedOutput()
			dur := time.Since(start)
			r := result{Code: cmd.ProcessState.ExitCode(), Dur: dur}
			r = decode(t, r, out)
			audited, kinds, sample := countErrors(r.Report)
			t.Logf("MEASURE direct (-c %s): %d of %d audited in %v; errors %v %v; %d TCP connections to farm's sshd", c, audited, farmSize, dur.Round(time.Millisecond), kinds, sample, farmSize)
			t.Logf("stderr: %.1500s", stderr)
		}
	})
	keysSubtests(t, s)
	killBastionSubtest(t, s)
}

// keysSubtests: an agent full of other keys with and without
// IdentitiesOnly; an encrypted key through the agent and through the
// terminal prompt (a pty).
func keysSubtests(t *testing.T, s *connectSetup) {
	f := s.f
	inv := aliasInventory(t, "b1")
	sock := startAgent(t)
	for i := 0; i < 10; i++ {
		k := newKey(t, "")
		if out, err := exec.Command("env", "SSH_AUTH_SOCK="+sock, "ssh-add", "-q", k).CombinedOutput(); err != nil {
			t.Fatalf("ssh-add: %v: %s", err, out)
		}
	}
	agentEnv := []string{"SSH_AUTH_SOCK=" + sock}
	t.Run("agent with 10 other keys, IdentitiesOnly", func(t *testing.T) {
		for _, only := range []string{"yes", "no"} {
			conf := s.writeSSHConfig(t, fmt.Sprintf("  IdentityFile %s\n  IdentitiesOnly %s\n", f.IdentityFile, only))
			args, out := scanArgs(t, inv, "--ssh-config", conf, "--fail-on", "critical")
			r := decode(t, runKaudit(t, runOpts{env: agentEnv}, args...), out)
			h := r.Report.Hosts[0]
			switch {
			case only == "yes" && h.Error != nil:
				t.Errorf("IdentitiesOnly yes: %+v", h.Error)
			case only == "no" && (h.Error == nil || !strings.Contains(h.Error.Message, "bastion")):
				t.Errorf("IdentitiesOnly no with 10 agent keys offered first: want sshd's MaxAuthTries to refuse us at the bastion, got %+v", h.Error)
			}
			if h.Error != nil {
				t.Logf("IdentitiesOnly %s: %s: %s", only, h.Error.Kind, h.Error.Message)
			}
		}
	})
	enc := newKey(t, passphrase)
	pub, err := os.ReadFile(enc + ".pub")
	must(t, err)
	ak, err := os.OpenFile(f.AuthorizedKeys(), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = ak.Write(pub)
	must(t, err)
	must(t, ak.Close())
	encConf := s.writeSSHConfig(t, fmt.Sprintf("  IdentityFile %s\n  IdentitiesOnly yes\n", enc))
	t.Run("encrypted key through the agent: no prompt", func(t *testing.T) {
		encSock := startAgent(t)
		addToAgent(t, encSock, enc)
		args, out := scanArgs(t, inv, "--ssh-config", encConf, "--fail-on", "critical")
		r := decode(t, runKaudit(t, runOpts{env: []string{"SSH_AUTH_SOCK=" + encSock}}, args...), out)
		if h := r.Report.Hosts[0]; h.Error != nil || strings.Contains(r.Stderr, "passphrase") {
			t.Errorf("error %+v, stderr %s", h.Error, r.Stderr)
		}
	})
	t.Run("encrypted key without agent or terminal: clear warning", func(t *testing.T) {
		args, out := scanArgs(t, inv, "--ssh-config", encConf, "--fail-on", "critical")
		r := decode(t, runKaudit(t, runOpts{}, args...), out)
		if h := r.Report.Hosts[0]; h.Error == nil || !strings.Contains(r.Stderr, "ssh-add "+enc) {
			t.Errorf("error %+v, stderr %s", h.Error, r.Stderr)
		}
	})
	t.Run("encrypted key asked once on a terminal", func(t *testing.T) {
		inv2 := aliasInventory(t, "b1", "b2", "deep")
		args, out := scanArgs(t, inv2, "--ssh-config", encConf, "--fail-on", "critical")
		r, screen := runOnPty(t, args, "Enter passphrase for key '"+enc+"': ", passphrase+"\n")
		r = decode(t, r, out)
		audited, kinds, sample := countErrors(r.Report)
		if audited != 3 || strings.Count(screen, "Enter passphrase") != 1 || strings.Contains(screen+r.Stdout+r.Stderr+string(r.JSON), passphrase) {
			t.Errorf("audited %d of 3 (%v %v); prompts %d; passphrase shown: %v\nterminal: %q",
				audited, kinds, sample, strings.Count(screen, "Enter passphrase"), strings.Contains(screen, passphrase), screen)
		}
	})
}

// runOnPty runs kaudit with a pseudo-terminal as its controlling terminal
// (stdin too); once prompt appears it types answer. stdout and stderr are
// files, so the terminal shows only what kaudit wrote to /dev/tty.
func runOnPty(t *testing.T, args []string, prompt, answer string) (result, string) {
	t.Helper()
	master, slave := openPty(t)
	defer master.Close()
	stdout, stderr := filepath.Join(t.TempDir(), "stdout"), filepath.Join(t.TempDir(), "stderr")
	so, err := os.Create(stdout)
	must(t, err)
	se, err := os.Create(stderr)
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kauditBin(t), args...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + t.TempDir(), "NO_COLOR=1", "TERM=dumb"}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, so, se
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	start := time.Now()
	must(t, cmd.Start())
	slave.Close()
	var screen strings.Builder
	buf := make([]byte, 4096)
	answered := false
	for {
		_ = master.SetReadDeadline(time.Now().Add(90 * time.Second))
		n, err := master.Read(buf)
		screen.Write(buf[:n])
		if !answered && strings.Contains(screen.String(), prompt) {
			_, _ = master.Write([]byte(answer))
			answered = true
		}
		if err != nil {
			break // EIO once kaudit exits and the slave closes
		}
	}
	werr := cmd.Wait()
	so.Close()
	se.Close()
	r := result{Dur: time.Since(start), Stdout: string(must2(os.ReadFile(stdout))), Stderr: string(must2(os.ReadFile(stderr)))}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		r.Code = ee.ExitCode()
	}
	return r, screen.String()
}

// openPty opens a pseudo-terminal pair with plain syscalls (/dev/ptmx).
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	must(t, err)
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("ptsname: %v", e)
	}
	sl, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	must(t, err)
	return m, sl
}

// killBastionSubtest kills every sshd process of the bastion while 200
// hosts are being audited through it.
func killBastionSubtest(t *testing.T, s *connectSetup) {
	t.Run("bastion killed mid-scan", func(t *testing.T) {
		args, out := scanArgs(t, aliasInventory(t, farmNames(farmSize)...), "--ssh-config", s.conf, "--fail-on", "critical")
		p := startKaudit(t, runOpts{limit: 4 * time.Minute}, args...)
		b, farm := s.f.Host("bastion"), s.f.Host("farm")
		before := logins(t, farm)
		waitFor(t, 90*time.Second, "40 hosts logged in through the bastion", func() bool { return logins(t, farm) >= before+40 })
		b.KillSSHDAll(t)
		r := decode(t, p.wait(t), out)
		audited, kinds, sample := countErrors(r.Report)
		t.Logf("MEASURE bastion killed after 40 logins behind it: %d audited, errors %v, e.g. %v, exit %d, %v", audited, kinds, sample, r.Code, r.Dur.Round(time.Millisecond))
		if audited+kinds["unreachable"] != farmSize || kinds["unreachable"] == 0 || r.Code != 3 {
			t.Errorf("want every host either audited or unreachable (some of them), exit 3; got %d audited, %v, exit %d", audited, kinds, r.Code)
		}
		for _, h := range r.Report.Hosts {
			if h.Error != nil && !strings.Contains(h.Error.Message, "bastion") {
				t.Errorf("%s: %s: the message must name the bastion", h.Name, h.Error.Message)
			}
		}
	})
}

// sshBanner is what answers on addr:22 within 2 s ("" if nothing).
func sshBanner(addr string) string {
	c, err := net.DialTimeout("tcp", net.JoinHostPort(addr, "22"), 2*time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 64)
	n, _ := c.Read(buf)
	return string(buf[:n])
}

func must2(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestUserCertificates: a key that is in no authorized_keys logs in with
// an OpenSSH user certificate, found as KEY-cert.pub beside the key or
// named by CertificateFile.
func TestUserCertificates(t *testing.T) {
	requireEnv(t)
	ca := newKey(t, "")
	caPub, err := os.ReadFile(ca + ".pub")
	must(t, err)
	spec := healthy("certs")
	spec.Files = map[string]string{"/etc/ssh/kft_user_ca.pub": string(caPub)}
	spec.TrustedUserCAKeys = "/etc/ssh/kft_user_ca.pub"
	f := testfleet.Start(t, []testfleet.HostSpec{spec})
	key := newKey(t, "")
	if out, err := exec.Command("ssh-keygen", "-q", "-s", ca, "-I", "kaudit-e2e", "-n", "root", "-V", "+1h", key+".pub").CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -s: %v: %s", err, out)
	}
	moved := filepath.Join(t.TempDir(), "elsewhere-cert.pub")
	inv := aliasInventory(t, "certs")
	conf := func(extra string) string {
		return writeTempFile(t, "ssh_config", fmt.Sprintf("Host certs\n  HostName %s\n  User root\n  IdentityFile %s\n  IdentitiesOnly yes\n  IdentityAgent none\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n%s",
			f.Host("certs").Addr, key, f.KnownHosts, extra))
	}
	for _, tc := range []struct {
		name, extra string
		move, ok    bool
	}{
		{"KEY-cert.pub beside the key", "", false, true},
		{"CertificateFile", "  CertificateFile " + moved + "\n", true, true},
		{"no certificate: refused", "", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.move {
				if _, err := os.Stat(key + "-cert.pub"); err == nil {
					must(t, os.Rename(key+"-cert.pub", moved))
				}
			}
			args, out := scanArgs(t, inv, "--ssh-config", conf(tc.extra), "--fail-on", "critical")
			r := decode(t, runKaudit(t, runOpts{}, args...), out)
			if h := r.Report.Hosts[0]; (h.Error == nil) != tc.ok {
				t.Errorf("error %+v, want ok=%v\nstderr: %s", h.Error, tc.ok, r.Stderr)
			}
		})
	}
}
