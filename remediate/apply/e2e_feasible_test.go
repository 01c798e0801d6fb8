//go:build e2e

package apply_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

const udevRulesFile = "/etc/udev/rules.d/99-kaudit-ethtool.rules"

// shape is one host's ground truth beyond state: GRO, the udev rule,
// and server.properties' mode, owner and a user xattr (what an SELinux
// context would be, where SELinux is on).
type shape struct {
	state
	gro, udev, rmemMax, propsMeta string
}

// xattrPy reads (one argument) or sets (two) the user.kaudit-test xattr.
const xattrPy = `import os, sys
if len(sys.argv) > 2: os.setxattr(sys.argv[1], "user.kaudit-test", sys.argv[2].encode())
else: print(os.getxattr(sys.argv[1], "user.kaudit-test").decode())`

func readShape(t *testing.T, h *testfleet.Host) shape {
	t.Helper()
	meta := strings.TrimSpace(h.Exec(t, "stat", "-c", "%a %u:%g", h.KafkaConfig)) + " " + strings.TrimSpace(h.Exec(t, "python3", "-c", xattrPy, h.KafkaConfig))
	return shape{state: read(t, h), gro: feature(t, h, "generic-receive-offload"), udev: sha(t, h, udevRulesFile),
		rmemMax: strings.TrimSpace(h.Exec(t, "cat", "/proc/sys/net/core/rmem_max")), propsMeta: meta}
}

// hostBlock is host's part of a rendered plan: from "host:" to the next
// unindented line.
func hostBlock(plan, host string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(plan, "\n") {
		switch {
		case strings.HasPrefix(line, host+":"):
			in = true
		case in && !strings.HasPrefix(line, " "):
			in = false
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// TestFeasibilityShapes is issue 12 end to end: hosts shaped as users'
// hosts are (every test host is in a non-initial network namespace, so
// net.core.rmem_max & co. are read-only everywhere, as in a container; one
// has no /etc/udev/rules.d; one a read-only /etc/sysctl.d), beside healthy
// ones. The plan says per host what it will and will not do and why;
// --apply --yes --runtime-only-ok fixes and verifies every feasible change
// (exit 0); a re-scan passes the fixed rules; a second apply changes
// nothing; rollback restores everything but a file edited after the run;
// Ctrl-C mid-apply leaves no host half-applied.
func TestFeasibilityShapes(t *testing.T) {
	bin := buildKaudit(t)
	base := map[string]string{"net.core.somaxconn": "128", "net.ipv4.tcp_max_syn_backlog": "256"}
	var specs []testfleet.HostSpec
	for _, n := range []string{"ok1", "noudev", "rosysctl", "ok2"} {
		specs = append(specs, testfleet.HostSpec{Name: n, Sysctls: base, Kafka: &testfleet.BrokerSpec{Version: "3.6.1"}, NoUdevRules: n == "noudev"})
	}
	f := testfleet.Start(t, specs)
	for _, h := range f.Hosts {
		h.Exec(t, "ethtool", "-K", "eth0", "gro", "off")
		// server.properties with an unusual mode and owner and an xattr:
		// the replace and the restore must keep all three.
		h.Exec(t, "sh", "-c", `chown 1234:5678 "$1" && chmod 604 "$1"`, "sh", h.KafkaConfig)
		h.Exec(t, "python3", "-c", xattrPy, h.KafkaConfig, "ctx-"+h.Spec.Name)
	}
	f.Host("rosysctl").Exec(t, "sh", "-c", "mount --bind /etc/sysctl.d /etc/sysctl.d && mount -o remount,bind,ro /etc/sysctl.d")
	inv := inventoryWithIfaces(t, f)
	jdir := t.TempDir()
	c := cli{t: t, bin: bin, home: t.TempDir()}
	before := map[string]shape{}
	for _, h := range f.Hosts {
		before[h.Spec.Name] = readShape(t, h)
		t.Logf("BEFORE %s: %+v", h.Spec.Name, before[h.Spec.Name])
	}
	if before["noudev"].udev != "absent" || strings.HasPrefix(f.Host("noudev").Exec(t, "sh", "-c", "[ -d /etc/udev/rules.d ] && echo present || echo absent"), "present") {
		t.Fatal("noudev has /etc/udev/rules.d")
	}

	// 1. The plan, without and with --runtime-only-ok.
	code, plan, _ := c.run("fix", inv)
	if code != 0 {
		t.Fatalf("fix: exit %d", code)
	}
	for _, h := range f.Hosts {
		b := hostBlock(plan, h.Spec.Name)
		if !strings.Contains(b, "cannot apply on this host (not planned):") || !strings.Contains(b, "net.core.rmem_max is global: read-only in this host's network namespace") ||
			!strings.Contains(b, "set it on the node that runs this container") {
			t.Errorf("%s: plan does not say net.core.rmem_max cannot be set here:\n%s", h.Spec.Name, b)
		}
		if strings.Contains(b, "net.core.rmem_max 212992 →") || strings.Contains(b, "rmem_max "+before[h.Spec.Name].rmemMax+" →") {
			t.Errorf("%s: net.core.rmem_max planned:\n%s", h.Spec.Name, b)
		}
	}
	if b := hostBlock(plan, "noudev"); !strings.Contains(b, "eth0 gro → on: cannot persist: no udev: /etc/udev/rules.d does not exist") || !strings.Contains(b, "--runtime-only-ok") {
		t.Errorf("noudev plan:\n%s", b)
	}
	if b := hostBlock(plan, "rosysctl"); !strings.Contains(b, "net.core.somaxconn → 4096: cannot persist: /etc/sysctl.d is on a read-only mount") {
		t.Errorf("rosysctl plan:\n%s", b)
	}
	for _, n := range []string{"ok1", "ok2"} {
		if b := hostBlock(plan, n); !strings.Contains(b, "net.core.somaxconn 128 → 4096 (runtime+persist)") || !strings.Contains(b, "eth0 gro off → on (runtime+persist)") {
			t.Errorf("%s plan:\n%s", n, b)
		}
	}
	code, planOK, _ := c.run("fix", inv, "--runtime-only-ok")
	if code != 0 || !strings.Contains(hostBlock(planOK, "noudev"), "eth0 gro off → on (runtime only)") || !strings.Contains(hostBlock(planOK, "rosysctl"), "net.core.somaxconn 128 → 4096 (runtime only)") {
		t.Errorf("fix --runtime-only-ok: exit %d\n%s", code, planOK)
	}

	// A host that cannot be audited (nothing listens on its SSH port) is
	// named in the plan, never counted as having nothing to change.
	raw, err := os.ReadFile(inv)
	if err != nil {
		t.Fatal(err)
	}
	invGone := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(invGone, append(raw, []byte("  gone: {address: "+f.Host("ok1").Addr+", port: 1}\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, planGone, _ := c.run("fix", invGone, "--rules", "window-scaling")
	if code != 3 || !strings.Contains(planGone, "gone: not audited (unreachable: ") ||
		!strings.Contains(planGone, "nothing to change on 4 audited hosts; 1 host not audited: no plan for it; nothing changed") {
		t.Errorf("fix with an unreachable host: exit %d, want 3\n%s", code, planGone)
	}

	// 2. Apply: every feasible change on every host, verified.
	code, out, _ := c.run("fix", inv, "--runtime-only-ok", "--apply", "--yes", "--journal-dir", jdir)
	if code != 0 {
		t.Fatalf("fix --apply --yes: exit %d, want 0", code)
	}
	id := runRE.FindStringSubmatch(out)[1]
	j := loadJournal(t, jdir, id)
	for _, hj := range j.Hosts {
		if hj.Status != remediate.StatusVerified {
			t.Errorf("%s: %s (%s)", hj.Host, hj.Status, hj.Error)
		}
		for _, b := range hj.Backups {
			if b.Written == "" {
				t.Errorf("%s: %s: no written_sha256 in the journal", hj.Host, b.Path)
			}
		}
	}
	after := map[string]shape{}
	for _, h := range f.Hosts {
		after[h.Spec.Name] = readShape(t, h)
		t.Logf("AFTER %s: %+v", h.Spec.Name, after[h.Spec.Name])
		a := after[h.Spec.Name]
		if a.somaxconn != "4096" || a.synBacklog != "8192" || a.gro != "on" || a.propsSHA == before[h.Spec.Name].propsSHA || a.rmemMax != before[h.Spec.Name].rmemMax ||
			a.propsMeta != before[h.Spec.Name].propsMeta || a.propsMeta != "604 1234:5678 ctx-"+h.Spec.Name {
			t.Errorf("%s after apply: %+v", h.Spec.Name, a)
		}
	}
	if after["noudev"].udev != "absent" || after["rosysctl"].managedSHA != "absent" || after["ok1"].udev == "absent" || after["ok1"].managedSHA == "absent" {
		t.Errorf("persistence: noudev udev %s, rosysctl managed %s, ok1 udev %s managed %s", after["noudev"].udev, after["rosysctl"].managedSHA, after["ok1"].udev, after["ok1"].managedSHA)
	}

	// 3. A re-scan passes the fixed rules.
	code, js, _ := c.quiet().run("scan", inv, "--format", "json")
	var r report.Report
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatalf("scan exit %d: %v", code, err)
	}
	for _, h := range f.Hosts {
		for _, rule := range []string{"somaxconn", "syn-backlog", "kafka-backlog-config", "nic-offload"} {
			if s := status(t, &r, h.Spec.Name, rule); s != rules.Pass {
				t.Errorf("%s: %s is %s after the fix", h.Spec.Name, rule, s)
			}
		}
	}

	// 4. A second apply is a no-op.
	code, out, _ = c.run("fix", inv, "--runtime-only-ok", "--apply", "--yes", "--journal-dir", jdir)
	if code != 0 || runRE.MatchString(out) {
		t.Errorf("second apply: exit %d, a run started: %v", code, runRE.MatchString(out))
	}

	// 5. An edit after the run is kept by the rollback, the rest restored.
	ok1 := f.Host("ok1")
	ok1.Exec(t, "sh", "-c", `printf 'net.ipv4.tcp_fin_timeout = 30\n' >> /etc/sysctl.d/99-kaudit.conf`)
	edited := sha(t, ok1, managed)
	code, out, _ = c.run("rollback", inv, "--run", id, "--yes", "--journal-dir", jdir)
	if code != 0 || !strings.Contains(out, "kept: "+managed+" changed since run "+id) || !strings.Contains(out, "--force") {
		t.Errorf("rollback: exit %d, no kept line for %s", code, managed)
	}
	for _, h := range f.Hosts {
		got := readShape(t, h)
		t.Logf("ROLLED BACK %s: %+v", h.Spec.Name, got)
		want := before[h.Spec.Name]
		if h == ok1 {
			if got.managedSHA != edited {
				t.Errorf("ok1: the edited %s was not kept", managed)
			}
			want.managedSHA = edited
		}
		if got != want {
			t.Errorf("%s after rollback %+v, want %+v", h.Spec.Name, got, want)
		}
	}
	ok1.Exec(t, "rm", "-f", managed)

	// 6. Ctrl-C while the canary is being applied: it finishes and is
	// verified, nothing else starts, no host is left half-applied.
	interruptedApply(t, bin, c.home, inv, jdir)
	for _, h := range f.Hosts {
		if got := readShape(t, h); h.Spec.Name != "ok1" && got != before[h.Spec.Name] {
			t.Errorf("%s changed after Ctrl-C on the canary: %+v", h.Spec.Name, got)
		}
	}
}

// interruptedApply runs fix --apply --yes, sends SIGINT to that kaudit
// process (by PID) once the canary's apply started, and checks exit 130
// and the journal: the canary verified, every other host unchanged and
// saying why; then rolls the run back.
func interruptedApply(t *testing.T, bin, home, inv, jdir string) {
	t.Helper()
	cmd := exec.Command(bin, "fix", inv, "--rules", "somaxconn,syn-backlog", "--apply", "--yes", "--batch", "1", "--journal-dir", jdir)
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	sent := false
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if !sent && strings.Contains(sc.Text(), ": applying ") {
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			sent = true
		}
	}
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	t.Logf("$ kaudit fix --apply (SIGINT to pid %d during the canary) → exit %d\n%s%s", cmd.Process.Pid, code, stdout.String(), log.String())
	if !sent || code != 130 {
		t.Fatalf("SIGINT sent %v, exit %d, want 130", sent, code)
	}
	m := runRE.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatal("no run id")
	}
	j := loadJournal(t, jdir, m[1])
	canary := j.Hosts[0]
	for _, hj := range j.Hosts {
		switch {
		case hj.Host == canary.Host:
			if hj.Status != remediate.StatusVerified {
				t.Errorf("canary %s: %s (%s), want verified", hj.Host, hj.Status, hj.Error)
			}
		case len(hj.Changes) == 0:
			if hj.Status != remediate.StatusUnchanged {
				t.Errorf("%s (nothing planned): %s", hj.Host, hj.Status)
			}
		case hj.Status != remediate.StatusUnchanged || hj.Error == "" || len(hj.Backups)+len(hj.Runtime) != 0:
			t.Errorf("%s: %s (%q), backups %d, want unchanged and why", hj.Host, hj.Status, hj.Error, len(hj.Backups))
		}
	}
	c := cli{t: t, bin: bin, home: home}
	if code, _, _ := c.run("rollback", inv, "--run", m[1], "--yes", "--journal-dir", jdir); code != 0 {
		t.Errorf("rollback of the interrupted run: exit %d", code)
	}
}
