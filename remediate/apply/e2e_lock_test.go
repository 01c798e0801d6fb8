//go:build e2e

package apply_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/test/testfleet"
)

// kauditProc is a kaudit started in the background that a test can kill.
type kauditProc struct {
	cmd  *exec.Cmd
	o, e bytes.Buffer
	done chan error
}

func (c cli) spawn(args ...string) *kauditProc {
	c.t.Helper()
	p := &kauditProc{cmd: exec.Command(c.bin, args...), done: make(chan error, 1)}
	p.cmd.Env = []string{"HOME=" + c.home, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "COLUMNS=1000"}
	p.cmd.Stdin = bytes.NewReader(nil)
	p.cmd.Stdout, p.cmd.Stderr = &p.o, &p.e
	if err := p.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	c.t.Cleanup(func() { _ = p.cmd.Process.Kill(); err := <-p.done; p.done <- err })
	return p
}

// wait returns the exit code (-1: killed) within d, else fails t.
func (p *kauditProc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(d):
		t.Fatalf("kaudit %v still running after %v", p.cmd.Args[1:], d)
	}
	return 0
}

// hostState is a host byte for byte as the tests compare it: the running
// values, the two files kaudit changes, and what /var/lib/kaudit and the
// files' directories hold besides the runs' backups.
type hostState struct {
	state
	leftovers string // apply.owner files (an older kaudit's), the lease, temporary files
}

func readHost(t *testing.T, h *testfleet.Host) hostState {
	t.Helper()
	out, err := h.ExecErr("sh", "-c", `ls -d /var/lib/kaudit/lease /var/lib/kaudit/runs/*/apply.owner "$1"/.*.kaudit-* /etc/sysctl.d/.*.kaudit-* 2>/dev/null; true`, "sh", filepath.Dir(h.KafkaConfig))
	if err != nil {
		t.Fatal(err)
	}
	return hostState{state: read(t, h), leftovers: strings.TrimSpace(out)}
}

// resetHost puts h back as the fleet made it: running values, no managed
// file, server.properties as given, no /var/lib/kaudit.
func resetHost(t *testing.T, h *testfleet.Host, props string) {
	t.Helper()
	h.Exec(t, "sh", "-c", `sysctl -qw net.core.somaxconn=128 net.ipv4.tcp_max_syn_backlog=256 && rm -rf /etc/sysctl.d/99-kaudit.conf /var/lib/kaudit && printf '%s' "$2" > "$1"`, "sh", h.KafkaConfig, props)
}

// Two operators start fix --apply on the same fleet together, at several
// offsets: on each host exactly one run changes it and the other is
// refused there naming the holder (or, started after the first was done
// there, finds it already as planned). Then the runs are rolled back,
// one alone or both in either order: after each rollback every host is
// byte for byte as the rolled-back run found it (it changed the host) or
// as the other run left it (it did not) — never mixed.
func TestTwoOperatorsOneHost(t *testing.T) {
	bin := buildKaudit(t)
	sys := map[string]string{"net.core.somaxconn": "128", "net.ipv4.tcp_max_syn_backlog": "256"}
	f := testfleet.Start(t, []testfleet.HostSpec{
		{Name: "o1", Sysctls: sys, Kafka: &testfleet.BrokerSpec{Version: "3.6.1"}},
		{Name: "o2", Sysctls: sys, Kafka: &testfleet.BrokerSpec{Version: "3.6.1"}},
	})
	inv := f.Inventory(t)
	names := []string{"o1", "o2"}
	props := map[string]string{}
	for _, n := range names {
		h := f.Host(n)
		props[n] = h.Exec(t, "cat", h.KafkaConfig)
	}
	type order struct {
		name  string
		which []int // 0: run A (started first), 1: run B
	}
	orders := []order{{"A alone", []int{0}}, {"B alone", []int{1}}, {"A then B", []int{0, 1}}, {"B then A", []int{1, 0}}}
	var refused, proceeded, noop, rollbacks, mixed int
	trial := 0
	for _, offset := range []time.Duration{0, 200 * time.Millisecond, 700 * time.Millisecond, 1500 * time.Millisecond} {
		for _, ord := range orders {
			t.Run(ord.name+"/offset-"+offset.String(), func(t *testing.T) {
				trial++
				for _, n := range names {
					resetHost(t, f.Host(n), props[n])
				}
				before := map[string]hostState{}
				for _, n := range names {
					before[n] = readHost(t, f.Host(n))
				}
				jdir := t.TempDir()
				ca := cli{t: t, bin: bin, home: t.TempDir()}
				cb := cli{t: t, bin: bin, home: t.TempDir()}
				args := []string{"fix", inv, "--rules", e2eRules, "--apply", "--yes", "--batch", "2", "--max-failures", "1", "--journal-dir", jdir}
				pa := ca.spawn(args...)
				time.Sleep(offset)
				pb := cb.spawn(args...)
				codes := []int{pa.wait(t, 3*time.Minute), pb.wait(t, 3*time.Minute)}
				outs := []string{pa.o.String() + pa.e.String(), pb.o.String() + pb.e.String()}
				ids := make([]string, len(outs))
				js := make([]*remediate.Journal, len(outs))
				for i, o := range outs {
					t.Logf("run %c: exit %d\n%s", 'A'+i, codes[i], o)
					m := runRE.FindStringSubmatch(o)
					switch {
					case m != nil:
						ids[i], js[i] = m[1], loadJournal(t, jdir, m[1])
					case codes[i] == 0 && strings.Contains(o, "nothing to change on 2 hosts; nothing changed"):
						// It scanned after the other run was done on both
						// hosts: no run, nothing to roll back.
						js[i] = &remediate.Journal{}
						noop += len(names)
					default:
						t.Fatalf("run %c: no run id, and not 'nothing to change'", 'A'+i)
					}
				}
				after := map[string]hostState{}
				owner := map[string]int{} // host → the run that changed it (-1: none)
				for _, n := range names {
					after[n] = readHost(t, f.Host(n))
					owner[n] = -1
					for i, j := range js {
						hj := j.Host(n)
						switch {
						case hj == nil:
						case hj.Owns():
							if owner[n] >= 0 {
								t.Errorf("%s: both runs own changes", n)
							}
							owner[n] = i
							proceeded++
							if hj.Status != remediate.StatusVerified {
								t.Errorf("%s: run %c: %s %q", n, 'A'+i, hj.Status, hj.Error)
							}
						case strings.Contains(hj.Error, n+" is being changed by run "+ids[1-i]+" ("):
							refused++
						case hj.NoOp || len(hj.Changes) == 0:
							noop++ // read (or scanned) after the other run was done there
						default:
							t.Errorf("%s: run %c neither changed it, nor was refused naming the other run, nor found it done: %s %q", n, 'A'+i, hj.Status, hj.Error)
						}
					}
					if owner[n] < 0 {
						t.Errorf("%s: no run changed it", n)
					}
					if after[n].leftovers != "" {
						t.Errorf("%s: left after both runs: %s", n, after[n].leftovers)
					}
				}
				for _, i := range ord.which {
					if ids[i] == "" {
						continue // it changed nothing
					}
					rollbacks++
					c := cli{t: t, bin: bin, home: t.TempDir()}
					code, out, _ := c.run("rollback", inv, "--run", ids[i], "--yes", "--journal-dir", jdir)
					if code != 0 {
						t.Errorf("rollback of run %c: exit %d", 'A'+i, code)
					}
					if strings.Contains(out, "kept:") {
						t.Errorf("rollback of run %c kept something:\n%s", 'A'+i, out)
					}
					for _, n := range names {
						got := readHost(t, f.Host(n))
						want := after[n]
						if owner[n] == i {
							want = before[n] // as the rolled-back run found it
						}
						if got != want {
							mixed++
							t.Errorf("%s after rolling back run %c: %+v\nwant %+v (before %+v, after %+v)", n, 'A'+i, got, want, before[n], after[n])
						}
						after[n] = got
					}
				}
			})
		}
	}
	t.Logf("TRIALS %d: host outcomes: %d changed by one run, %d refused naming the holder, %d found already done; %d rollbacks, %d hosts mixed", trial, proceeded, refused, noop, rollbacks, mixed)
}

// The first seen failure: run 1 fails on a host whose /var/lib/kaudit is
// full (a 64 KiB tmpfs mounted there in the host's mount namespace,
// filled but for the lease's block) before writing anything, and says
// why; the disk is freed; run 2 fixes the host; run 1's own rollback then
// changes nothing there, and a rollback --from-hosts of run 1 (no host
// has it) is an error.
func TestFullKauditDirThenReapply(t *testing.T) {
	bin := buildKaudit(t)
	sys := map[string]string{"net.core.somaxconn": "128", "net.ipv4.tcp_max_syn_backlog": "256"}
	f := testfleet.Start(t, []testfleet.HostSpec{{Name: "full1", Sysctls: sys, Kafka: &testfleet.BrokerSpec{Version: "3.6.1"}}})
	inv := f.Inventory(t)
	h := f.Host("full1")
	h.Exec(t, "sh", "-c", "mkdir -p /var/lib/kaudit && mount -t tmpfs -o size=64k kaudit-full /var/lib/kaudit && dd if=/dev/zero of=/var/lib/kaudit/fill bs=4096 count=15 2>/dev/null")
	t.Cleanup(func() { _, _ = h.ExecErr("umount", "/var/lib/kaudit") })
	before := read(t, h)
	jdir := t.TempDir()
	c := cli{t: t, bin: bin, home: t.TempDir()}
	code, out, stderr := c.run("fix", inv, "--rules", e2eRules, "--apply", "--yes", "--journal-dir", jdir)
	if code != 4 {
		t.Errorf("run 1 on a full /var/lib/kaudit: exit %d, want 4", code)
	}
	if want := "nothing changed: /var/lib/kaudit on full1: 0 of 64 KiB free, the backups need 24 KiB; make room there and re-run"; !strings.Contains(out+stderr, want) {
		t.Errorf("run 1 does not say %q", want)
	}
	if strings.Contains(out+stderr, "I/O error") || strings.Contains(out, "undo:") || !strings.Contains(out, "changed no host: nothing to undo") {
		t.Errorf("run 1's output: I/O error, or an undo: line for a run that changed nothing")
	}
	m := runRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatal("no run id")
	}
	run1 := m[1]
	if got := read(t, h); got != before {
		t.Fatalf("run 1 changed the host: %+v", got)
	}
	h.Exec(t, "rm", "-f", "/var/lib/kaudit/fill")
	code, out, _ = c.run("fix", inv, "--rules", e2eRules, "--apply", "--yes", "--journal-dir", jdir)
	if code != 0 || !strings.Contains(out, "undo: kaudit rollback") {
		t.Fatalf("run 2: exit %d", code)
	}
	after2 := readHost(t, h)
	if after2.state == before || after2.leftovers != "" {
		t.Fatalf("run 2 changed nothing, or left %q", after2.leftovers)
	}
	code, out, _ = c.run("rollback", inv, "--run", run1, "--yes", "--journal-dir", jdir)
	if code != 0 || !strings.Contains(out, "full1: nothing to roll back: run "+run1+" changed nothing here") {
		t.Errorf("rollback of run 1: exit %d", code)
	}
	if got := readHost(t, h); got != after2 {
		t.Errorf("rollback of run 1 changed run 2's host: %+v\nwant %+v", got, after2)
	}
	code, _, stderr = c.run("rollback", inv, "--run", run1, "--yes", "--from-hosts", "--journal-dir", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "no host of the inventory (1 read) has run "+run1) {
		t.Errorf("rollback --from-hosts of a run no host has: exit %d", code)
	}
	if got := readHost(t, h); got != after2 {
		t.Errorf("rollback --from-hosts of run 1 changed the host: %+v", got)
	}
}

// kill -9 of kaudit while its apply script is replacing a file (a slowed
// mv): the next run from this machine finds the killed run's lease, sees
// its kaudit is gone and takes the lease over at once (not after its
// expiry), and nothing of the killed run (apply.owner, lease, temporary
// files) is left after it; the killed run's rollback then restores what
// it changed that is still as it left it, and nothing is left either.
func TestKilledKauditThenNewRun(t *testing.T) {
	bin := buildKaudit(t)
	sys := map[string]string{"net.core.somaxconn": "128", "net.ipv4.tcp_max_syn_backlog": "256"}
	f := testfleet.Start(t, []testfleet.HostSpec{{Name: "k1", Sysctls: sys, Kafka: &testfleet.BrokerSpec{Version: "3.6.1"}, Files: map[string]string{"/usr/local/bin/mv": slowMv}}})
	inv := f.Inventory(t)
	h := f.Host("k1")
	props := h.Exec(t, "cat", h.KafkaConfig)
	var taken, cleanAfter, rolled int
	const trials = 3
	for trial := 0; trial < trials; trial++ {
		resetHost(t, h, props)
		jdir := t.TempDir()
		c := cli{t: t, bin: bin, home: t.TempDir()}
		h.Exec(t, "sh", "-c", "rm -f /tmp/kft-in-mv && : > /tmp/kft-slow-mv")
		p := c.spawn("fix", inv, "--rules", e2eRules, "--apply", "--yes", "--journal-dir", jdir)
		for i := 0; ; i++ {
			if _, err := h.ExecErr("test", "-e", "/tmp/kft-in-mv"); err == nil {
				break
			}
			if i >= 3000 {
				t.Fatal("the apply did not reach mv within 60 s")
			}
			time.Sleep(20 * time.Millisecond)
		}
		_ = p.cmd.Process.Kill() // SIGKILL
		p.wait(t, 10*time.Second)
		h.Exec(t, "rm", "-f", "/tmp/kft-slow-mv")
		m := runRE.FindStringSubmatch(p.o.String())
		if m == nil {
			t.Fatalf("killed run: no run id in %q", p.o.String())
		}
		run1 := m[1]
		t.Logf("trial %d: killed run %s mid-apply; host has: %s", trial, run1, readHost(t, h).leftovers)
		code, out, stderr := c.run("fix", inv, "--rules", e2eRules, "--apply", "--yes", "--journal-dir", jdir)
		if strings.Contains(stderr, "run "+run1+" holds the lease, but its kaudit (pid ") {
			taken++
		} else {
			t.Errorf("trial %d: run 2 (exit %d) did not take over the killed run's lease", trial, code)
		}
		if strings.Contains(out+stderr, "is being changed by run "+run1) {
			t.Errorf("trial %d: run 2 refused by the killed run's lease", trial)
		}
		if l := readHost(t, h).leftovers; l == "" {
			cleanAfter++
		} else {
			t.Errorf("trial %d: left after run 2: %s", trial, l)
		}
		code, _, _ = c.run("rollback", inv, "--run", run1, "--yes", "--journal-dir", jdir)
		if code != 0 {
			t.Errorf("trial %d: rollback of the killed run: exit %d", trial, code)
		} else {
			rolled++
		}
		if l := readHost(t, h).leftovers; l != "" {
			t.Errorf("trial %d: left after the rollback: %s", trial, l)
		}
	}
	t.Logf("TRIALS %d kill -9 mid-apply: lease taken over at once %d, nothing left after the next run %d, killed run rolled back (exit 0) %d", trials, taken, cleanAfter, rolled)
}
