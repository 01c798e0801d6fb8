//go:build e2e

package apply_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/kaudit/kaudit/internal/testfleet"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

const managed = "/etc/sysctl.d/99-kaudit.conf"

// The rules whose fixes the e2e applies: per-namespace sysctls (the
// fleet's hosts share the machine's kernel; global sysctls are not
// touched) and a server.properties edit.
const e2eRules = "somaxconn,syn-backlog,kafka-backlog-config"

var (
	buildOnce sync.Once
	binDir    string
	binErr    error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildKaudit builds the kaudit binary once per test run.
func buildKaudit(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		if binDir, binErr = os.MkdirTemp("", "kaudit-apply-e2e-"); binErr != nil {
			return
		}
		gobin, err := exec.LookPath("go") // go test puts its own bin first in PATH
		if err != nil {
			binErr = err
			return
		}
		cmd := exec.Command(gobin, "build", "-o", filepath.Join(binDir, "kaudit"), "./cmd/kaudit")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "kaudit")
}

type cli struct {
	t      *testing.T
	bin    string
	home   string
	silent bool
}

func (c cli) quiet() cli { c.silent = true; return c }

func (c cli) run(args ...string) (int, string, string) {
	c.t.Helper()
	cmd := exec.Command(c.bin, args...)
	cmd.Env = []string{"HOME=" + c.home, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	cmd.Stdin = bytes.NewReader(nil) // not a terminal
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatal(err)
	}
	if c.silent {
		c.t.Logf("$ kaudit %s → exit %d (output not logged)", strings.Join(args, " "), code)
	} else {
		c.t.Logf("$ kaudit %s → exit %d\n%s%s", strings.Join(args, " "), code, o.String(), e.String())
	}
	return code, o.String(), e.String()
}

// state is the ground truth of one host, read inside its namespaces.
type state struct {
	somaxconn, synBacklog string
	propsSHA, managedSHA  string // "absent" when the file does not exist
}

func sha(t *testing.T, h *testfleet.Host, path string) string {
	out, err := h.ExecErr("sh", "-c", `if [ -e "$1" ]; then sha256sum < "$1" | cut -d' ' -f1; else echo absent; fi`, "sh", path)
	if err != nil {
		t.Fatalf("%s: sha256 %s: %v", h.Spec.Name, path, err)
	}
	return strings.TrimSpace(out)
}

func read(t *testing.T, h *testfleet.Host) state {
	t.Helper()
	return state{
		somaxconn:  strings.TrimSpace(h.Exec(t, "sysctl", "-n", "net.core.somaxconn")),
		synBacklog: strings.TrimSpace(h.Exec(t, "sysctl", "-n", "net.ipv4.tcp_max_syn_backlog")),
		propsSHA:   sha(t, h, h.KafkaConfig),
		managedSHA: sha(t, h, managed),
	}
}

var runRE = regexp.MustCompile(`run (\d{8}T\d{6}Z-[0-9a-f]{8}): applying`)

func loadJournal(t *testing.T, dir, id string) *remediate.Journal {
	t.Helper()
	j, err := remediate.LoadJournal(filepath.Join(dir, id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func status(t *testing.T, r *report.Report, host, rule string) rules.Status {
	t.Helper()
	for _, h := range r.Hosts {
		if h.Name != host {
			continue
		}
		for _, f := range h.Findings {
			if f.Rule == rule {
				return f.Status
			}
		}
	}
	t.Fatalf("no finding %s on %s", rule, host)
	return ""
}

// addComment puts a comment and a secret-looking line at the top of the
// broker's server.properties (a test of "comments kept" and "content
// never printed").
func addComment(t *testing.T, h *testfleet.Host) {
	t.Helper()
	h.Exec(t, "sh", "-c", `f="$1"; { printf '# Broker config: keep this comment\nssl.keystore.password=s3cr3t-DO-NOT-PRINT\n\n'; cat "$f"; } > "$f.new" && cat "$f.new" > "$f" && rm -f "$f.new"`, "sh", h.KafkaConfig)
}

func TestApplyVerifyRollback(t *testing.T) {
	bin := buildKaudit(t)
	specs := []testfleet.HostSpec{
		{
			Name:    "b1",
			Sysctls: map[string]string{"net.core.somaxconn": "128", "net.ipv4.tcp_max_syn_backlog": "256"},
			Kafka:   &testfleet.BrokerSpec{Version: "3.6.1"},
		},
		{
			Name:    "b2",
			Sysctls: map[string]string{"net.core.somaxconn": "128", "net.ipv4.tcp_max_syn_backlog": "256"},
			Kafka:   &testfleet.BrokerSpec{Version: "3.6.1"},
		},
	}
	for _, n := range []string{"b3", "b4"} {
		specs = append(specs, testfleet.HostSpec{Name: n, Sysctls: map[string]string{"net.core.somaxconn": "128", "net.ipv4.tcp_max_syn_backlog": "256"},
			Kafka: &testfleet.BrokerSpec{Version: "3.6.1"}})
	}
	f := testfleet.Start(t, specs)
	inv := f.Inventory(t)
	jdir := t.TempDir()
	c := cli{t: t, bin: bin, home: t.TempDir()}

	t.Run("apply-verify-rollback", func(t *testing.T) {
		c.t = t
		h := f.Host("b1")
		addComment(t, h)
		before := read(t, h)
		t.Logf("BEFORE b1: somaxconn=%s tcp_max_syn_backlog=%s sha256(server.properties)=%s 99-kaudit.conf=%s", before.somaxconn, before.synBacklog, before.propsSHA, before.managedSHA)
		if before.somaxconn != "128" || before.managedSHA != "absent" {
			t.Fatalf("unexpected start state %+v", before)
		}

		// No --yes and no terminal: refused, nothing changed.
		code, _, stderr := c.run("fix", inv, "--limit", "b1", "--rules", e2eRules, "--apply", "--journal-dir", jdir)
		if code != 2 || !strings.Contains(stderr, "--yes") {
			t.Fatalf("fix --apply without --yes: exit %d, stderr %q", code, stderr)
		}
		if got := read(t, h); got != before {
			t.Fatalf("refused apply changed the host: %+v", got)
		}

		code, out, stderr := c.run("fix", inv, "--limit", "b1", "--rules", e2eRules, "--apply", "--yes", "--journal-dir", jdir)
		if code != 0 {
			t.Fatalf("fix --apply: exit %d", code)
		}
		if strings.Contains(out+stderr, "s3cr3t") {
			t.Fatal("the properties file's content was printed")
		}
		m := runRE.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no run id in output")
		}
		id := m[1]
		jraw, _ := os.ReadFile(filepath.Join(jdir, id+".json"))
		if bytes.Contains(jraw, []byte("s3cr3t")) {
			t.Fatal("the properties file's content is in the journal")
		}
		j := loadJournal(t, jdir, id)
		hj := j.Host("b1")
		if hj == nil || hj.Status != remediate.StatusVerified {
			t.Fatalf("journal: %+v", hj)
		}

		after := read(t, h)
		t.Logf("AFTER  b1: somaxconn=%s tcp_max_syn_backlog=%s sha256(server.properties)=%s sha256(99-kaudit.conf)=%s", after.somaxconn, after.synBacklog, after.propsSHA, after.managedSHA)
		if after.somaxconn != "4096" || after.synBacklog != "8192" {
			t.Errorf("sysctls after apply: %+v", after)
		}
		conf := h.Exec(t, "cat", managed)
		t.Logf("%s:\n%s", managed, conf)
		for _, want := range []string{sysctldHeader, "net.core.somaxconn = 4096\n", "net.ipv4.tcp_max_syn_backlog = 8192\n", "# Last run: " + id + "\n"} {
			if !strings.Contains(conf, want) {
				t.Errorf("%s lacks %q", managed, want)
			}
		}
		pr := h.Exec(t, "cat", h.KafkaConfig)
		if !strings.HasPrefix(pr, "# Broker config: keep this comment\nssl.keystore.password=s3cr3t-DO-NOT-PRINT\n") {
			t.Errorf("server.properties lost its head:\n%s", pr)
		}
		if !strings.Contains(pr, "\n# added by kaudit fix, run "+id+"\nsocket.listen.backlog.size=4096\n") {
			t.Errorf("server.properties lacks the new key:\n%s", pr)
		}
		bk := h.Exec(t, "ls", remediate.HostRunsDir+"/"+id)
		if !strings.Contains(bk, "file-0") || !strings.Contains(bk, "manifest") {
			t.Errorf("host-side backups: %q", bk)
		}
		if got := sha(t, h, remediate.HostRunsDir+"/"+id+"/file-0"); got != before.propsSHA {
			t.Errorf("backup of server.properties: sha %s, want %s", got, before.propsSHA)
		}

		// The scan now passes those rules.
		code, js, _ := c.quiet().run("scan", inv, "--limit", "b1", "-f", "json", "--fail-on", "critical")
		var r report.Report
		if err := json.Unmarshal([]byte(js), &r); err != nil {
			t.Fatalf("scan json (exit %d): %v", code, err)
		}
		for _, rule := range []string{"somaxconn", "kafka-backlog-config"} {
			if s := status(t, &r, "b1", rule); s != rules.Pass {
				t.Errorf("after apply: %s is %s, want pass", rule, s)
			}
		}

		// A second apply changes nothing and says so.
		code, out, _ = c.run("fix", inv, "--limit", "b1", "--rules", e2eRules, "--apply", "--yes", "--journal-dir", jdir)
		if code != 0 || !strings.Contains(out, "nothing changed") || runRE.MatchString(out) {
			t.Errorf("second apply: exit %d, output %q", code, out)
		}
		if got := read(t, h); got != after {
			t.Errorf("second apply changed the host: %+v, want %+v", got, after)
		}

		// Rollback without --yes is refused; with it, everything is back.
		if code, _, _ := c.run("rollback", inv, "--run", id, "--journal-dir", jdir); code != 2 {
			t.Errorf("rollback without --yes: exit %d, want 2", code)
		}
		code, out, _ = c.run("rollback", inv, "--run", id, "--yes", "--journal-dir", jdir)
		if code != 0 || !strings.Contains(out, "b1: rolled back (") {
			t.Fatalf("rollback: exit %d", code)
		}
		back := read(t, h)
		t.Logf("ROLLED BACK b1: somaxconn=%s tcp_max_syn_backlog=%s sha256(server.properties)=%s 99-kaudit.conf=%s", back.somaxconn, back.synBacklog, back.propsSHA, back.managedSHA)
		if back != before {
			t.Errorf("after rollback %+v, want %+v", back, before)
		}
		if j := loadJournal(t, jdir, id); j.Host("b1").Status != remediate.StatusRolledBack {
			t.Errorf("journal after rollback: %+v", j.Host("b1"))
		}
		// Idempotent.
		code, out, _ = c.run("rollback", inv, "--run", id, "--yes", "--journal-dir", jdir)
		if code != 0 || !strings.Contains(out, "unchanged") || strings.Contains(out, "restored") {
			t.Errorf("second rollback: exit %d, output %q", code, out)
		}
		if got := read(t, h); got != before {
			t.Errorf("second rollback changed the host: %+v", got)
		}
	})

	t.Run("persist-fails-host-restored", func(t *testing.T) {
		c.t = t
		h := f.Host("b2")
		addComment(t, h)
		// /etc/sysctl.d read-only inside the host only (its own mount namespace).
		h.Exec(t, "sh", "-c", "mount --bind /etc/sysctl.d /etc/sysctl.d && mount -o remount,bind,ro /etc/sysctl.d")
		before := read(t, h)
		code, out, _ := c.run("fix", inv, "--limit", "b2", "--rules", e2eRules, "--apply", "--yes", "--journal-dir", jdir)
		if code != 4 {
			t.Fatalf("fix --apply on a read-only /etc/sysctl.d: exit %d, want 4", code)
		}
		m := runRE.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no run id in output")
		}
		hj := loadJournal(t, jdir, m[1]).Host("b2")
		t.Logf("journal b2: status %s, error %q", hj.Status, hj.Error)
		if hj.Status != remediate.StatusRolledBack || !strings.Contains(hj.Error, "file-1") || !strings.Contains(hj.Error, "restored") {
			t.Errorf("journal: status %s, error %q", hj.Status, hj.Error)
		}
		if got := read(t, h); got != before {
			t.Errorf("after the failed apply %+v, want %+v (restored)", got, before)
		}
		if strings.Contains(out, "s3cr3t") {
			t.Error("the properties file's content was printed")
		}
	})
}

func TestCanaryAndMaxFailures(t *testing.T) {
	bin := buildKaudit(t)
	var specs []testfleet.HostSpec
	for _, n := range []string{"c1", "c2", "c3"} {
		specs = append(specs, testfleet.HostSpec{Name: n, Sysctls: map[string]string{"net.core.somaxconn": "128"},
			Kafka: &testfleet.BrokerSpec{Version: "3.6.1"}})
	}
	f := testfleet.Start(t, specs)
	inv := f.Inventory(t)
	jdir := t.TempDir()
	c := cli{t: t, bin: bin, home: t.TempDir()}
	// The canary (c1, first in the inventory) cannot persist.
	f.Host("c1").Exec(t, "sh", "-c", "mount --bind /etc/sysctl.d /etc/sysctl.d && mount -o remount,bind,ro /etc/sysctl.d")
	before := map[string]state{}
	for _, h := range f.Hosts {
		before[h.Spec.Name] = read(t, h)
	}

	// Default --max-failures 0: the failed canary stops the run.
	code, out, _ := c.run("fix", inv, "--rules", e2eRules, "--apply", "--yes", "--batch", "2", "--journal-dir", jdir)
	if code != 4 {
		t.Fatalf("exit %d, want 4", code)
	}
	j := loadJournal(t, jdir, runRE.FindStringSubmatch(out)[1])
	if s := j.Host("c1").Status; s != remediate.StatusRolledBack {
		t.Errorf("canary: %s", s)
	}
	for _, n := range []string{"c2", "c3"} {
		hj := j.Host(n)
		if hj.Status != remediate.StatusUnchanged || !strings.Contains(hj.Error, "not started") || len(hj.Backups) != 0 {
			t.Errorf("%s: status %s, error %q, backups %v", n, hj.Status, hj.Error, hj.Backups)
		}
	}
	for _, h := range f.Hosts {
		if got := read(t, h); got != before[h.Spec.Name] {
			t.Errorf("%s changed: %+v, want %+v", h.Spec.Name, got, before[h.Spec.Name])
		}
	}

	// --max-failures 1: the canary fails, the next batch (c2, c3 together) goes.
	code, out, _ = c.run("fix", inv, "--rules", e2eRules, "--apply", "--yes", "--batch", "2", "--max-failures", "1", "--journal-dir", jdir)
	if code != 4 {
		t.Fatalf("exit %d, want 4", code)
	}
	id := runRE.FindStringSubmatch(out)[1]
	j = loadJournal(t, jdir, id)
	if s := j.Host("c1").Status; s != remediate.StatusRolledBack {
		t.Errorf("canary: %s", s)
	}
	for _, n := range []string{"c2", "c3"} {
		if s := j.Host(n).Status; s != remediate.StatusVerified {
			t.Errorf("%s: %s, want verified", n, s)
		}
		if got := read(t, f.Host(n)); got.somaxconn != "4096" {
			t.Errorf("%s: somaxconn %s", n, got.somaxconn)
		}
	}
	// The local journal is lost: rebuild it from the hosts' manifests.
	if err := os.Remove(filepath.Join(jdir, id+".json")); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := c.run("rollback", inv, "--run", id, "--yes", "--journal-dir", jdir); code != 2 {
		t.Errorf("rollback without a journal: exit %d, want 2", code)
	}
	code, out, _ = c.run("rollback", inv, "--run", id, "--yes", "--from-hosts", "--journal-dir", jdir)
	if code != 0 || !strings.Contains(out, "rebuilt from 3 host(s)") {
		t.Fatalf("rollback --from-hosts: exit %d", code)
	}
	for _, h := range f.Hosts {
		if got := read(t, h); got != before[h.Spec.Name] {
			t.Errorf("%s after rollback: %+v, want %+v", h.Spec.Name, got, before[h.Spec.Name])
		}
	}
}

const sysctldHeader = "# Managed by kaudit"

// inventoryWithIfaces is f.Inventory plus interfaces: [eth0] (the test
// hosts have no default route, so kaudit would find no NIC by itself).
func inventoryWithIfaces(t *testing.T, f *testfleet.Fleet) string {
	t.Helper()
	b, err := os.ReadFile(f.Inventory(t))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "  timeout: 20s\n", "  timeout: 20s\n  interfaces: [eth0]\n", 1)
	p := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func feature(t *testing.T, h *testfleet.Host, name string) string {
	t.Helper()
	for _, line := range strings.Split(h.Exec(t, "ethtool", "-k", "eth0"), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == name+":" {
			return f[1]
		}
	}
	t.Fatalf("%s: no feature %s", h.Spec.Name, name)
	return ""
}

func TestNICOffloadApplyRollback(t *testing.T) {
	bin := buildKaudit(t)
	f := testfleet.Start(t, []testfleet.HostSpec{{Name: "n1", Kafka: &testfleet.BrokerSpec{Version: "3.6.1"}}})
	h := f.Host("n1")
	h.Exec(t, "ethtool", "-K", "eth0", "gro", "off")
	inv := inventoryWithIfaces(t, f)
	jdir := t.TempDir()
	c := cli{t: t, bin: bin, home: t.TempDir()}
	const nicRules = "nic-offload"
	groBefore := feature(t, h, "generic-receive-offload")
	rulesBefore := sha(t, h, "/etc/udev/rules.d/99-kaudit-ethtool.rules")
	t.Logf("BEFORE n1: generic-receive-offload=%s 99-kaudit-ethtool.rules=%s", groBefore, rulesBefore)

	code, out, _ := c.run("fix", inv, "--rules", nicRules, "--apply", "--yes", "--journal-dir", jdir)
	if code != 0 {
		t.Fatalf("fix --apply: exit %d", code)
	}
	id := runRE.FindStringSubmatch(out)[1]
	if s := loadJournal(t, jdir, id).Host("n1").Status; s != remediate.StatusVerified {
		t.Fatalf("status %s", s)
	}
	groAfter := feature(t, h, "generic-receive-offload")
	rulesText := h.Exec(t, "cat", "/etc/udev/rules.d/99-kaudit-ethtool.rules")
	t.Logf("AFTER n1: generic-receive-offload=%s; udev rules:\n%s", groAfter, rulesText)
	if groAfter != "on" || !strings.Contains(rulesText, `KERNEL=="eth0", RUN+="/usr/sbin/ethtool -K eth0 gro on"`) {
		t.Errorf("gro %s; rules %q", groAfter, rulesText)
	}
	code, js, _ := c.quiet().run("scan", inv, "-f", "json", "--fail-on", "critical")
	var r report.Report
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatalf("scan (exit %d): %v", code, err)
	}
	if s := status(t, &r, "n1", "nic-offload"); s != rules.Pass {
		t.Errorf("nic-offload after apply: %s", s)
	}
	if code, out, _ := c.run("fix", inv, "--rules", nicRules, "--apply", "--yes", "--journal-dir", jdir); code != 0 || runRE.MatchString(out) {
		t.Errorf("second apply: exit %d", code)
	}
	if code, _, _ := c.run("rollback", inv, "--run", id, "--yes", "--journal-dir", jdir); code != 0 {
		t.Fatalf("rollback: exit %d", code)
	}
	groBack, rulesBack := feature(t, h, "generic-receive-offload"), sha(t, h, "/etc/udev/rules.d/99-kaudit-ethtool.rules")
	t.Logf("ROLLED BACK n1: generic-receive-offload=%s 99-kaudit-ethtool.rules=%s", groBack, rulesBack)
	if groBack != groBefore || rulesBack != rulesBefore {
		t.Errorf("after rollback gro %s, rules %s; want %s, %s", groBack, rulesBack, groBefore, rulesBefore)
	}
}
