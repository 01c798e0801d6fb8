//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/internal/testfleet"
	"github.com/kaudit/kaudit/report"
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
	f                   *testfleet.Fleet
	dir, conf, knownHst string
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
		kinds[h.Error.Kind]++
		sample[h.Error.Kind] = h.Name + ": " + h.Error.Message
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
		for _, n := range []string{"b1", "deep", "farm"} {
			if c, err := net.DialTimeout("tcp", net.JoinHostPort(f.Host(n).Addr, "22"), time.Second); err == nil {
				c.Close()
				t.Errorf("%s is reachable from the machine's own namespace: it must be behind the bastion only", n)
			}
		}
		if out, err := exec.Command("ip", "netns", "exec", f.Host("bastion").NS, "ping", "-c1", "-W2", f.Host("b1").Addr).CombinedOutput(); err != nil {
			t.Errorf("bastion cannot reach b1: %v: %s", err, out)
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
			var r result
			r.Code = cmd.ProcessState.ExitCode()
			r = decode(t, r, out)
			audited, kinds, sample := countErrors(r.Report)
			t.Logf("MEASURE direct (-c %s): %d of %d audited in %v; errors %v %v; %d TCP connections to farm's sshd", c, audited, farmSize, dur.Round(time.Millisecond), kinds, sample, farmSize)
			t.Logf("stderr: %.1500s", stderr)
		}
	})
}

func must2(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
