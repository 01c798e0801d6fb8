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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
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
	// COLUMNS: plans unwrapped, so a test can look for a whole sentence
	// (how the plan fits a terminal is cmd/kaudit's and termui's to test).
	cmd.Env = []string{"HOME=" + c.home, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "COLUMNS=1000"}
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
		// The managed sysctl file cannot be renamed into place (a planned
		// change fails: a read-only /etc/sysctl.d is seen by the gather
		// now and not planned at all, TestFeasibilityShapes).
		failRename(t, h)
		before := read(t, h)
		code, out, _ := c.run("fix", inv, "--limit", "b2", "--rules", e2eRules, "--apply", "--yes", "--journal-dir", jdir)
		if code != 4 {
			t.Fatalf("fix --apply with a failing rename: exit %d, want 4", code)
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
	// The canary (c1, first in the inventory) fails to persist.
	failRename(t, f.Host("c1"))
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

// failRename makes renaming a file onto /etc/sysctl.d/99-kaudit.conf fail
// inside h, as on a disk error: an mv in /usr/local/bin, first in the
// PATH sshd gives the session, that refuses that target and runs the
// real mv otherwise.
func failRename(t *testing.T, h *testfleet.Host) {
	t.Helper()
	h.Exec(t, "sh", "-c", `mkdir -p /usr/local/bin && cat > /usr/local/bin/mv <<'EOF'
#!/bin/sh
for a; do case "$a" in /etc/sysctl.d/99-kaudit.conf) echo "mv: cannot move to $a: Input/output error" >&2; exit 1 ;; esac; done
exec /bin/mv "$@"
EOF
chmod 755 /usr/local/bin/mv`)
}

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

// start runs kaudit in the background; wait returns its exit code, stdout
// and stderr, or ok=false when it has not exited within d (it is then
// killed).
func (c cli) start(args ...string) (wait func(d time.Duration) (code int, stdout, stderr string, ok bool)) {
	c.t.Helper()
	cmd := exec.Command(c.bin, args...)
	// COLUMNS: plans unwrapped, so a test can look for a whole sentence
	// (how the plan fits a terminal is cmd/kaudit's and termui's to test).
	cmd.Env = []string{"HOME=" + c.home, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "COLUMNS=1000"}
	cmd.Stdin = bytes.NewReader(nil)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	c.t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return func(d time.Duration) (int, string, string, bool) {
		select {
		case err := <-done:
			done <- err // Cleanup reads it again
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				c.t.Fatal(err)
			}
			c.t.Logf("$ kaudit %s → exit %d\n%s%s", strings.Join(args, " "), code, o.String(), e.String())
			return code, o.String(), e.String(), true
		case <-time.After(d):
			return 0, "", "", false
		}
	}
}

// fullState is state plus the listings of the directories that hold the
// touched files (a stray temporary file of an interrupted apply shows).
type fullState struct {
	state
	propsDir, sysctlDir string
}

func readFull(t *testing.T, h *testfleet.Host) fullState {
	t.Helper()
	return fullState{
		state:     read(t, h),
		propsDir:  h.Exec(t, "ls", "-A", filepath.Dir(h.KafkaConfig)),
		sysctlDir: h.Exec(t, "ls", "-A", filepath.Dir(managed)),
	}
}

// slowMv replaces mv with a wrapper that, while /tmp/kft-slow-mv exists,
// says so in /tmp/kft-in-mv and sleeps before running the real mv — an mv
// of a file, not of the run's manifest: the apply script renames files
// only in its step 4, after the running values are set (it renames its
// manifest into place in step 2 too, before any change, and after the
// files in step 4); neither the gather nor the read step calls mv. The
// test creates the marker right before the apply and removes it once the
// connection is dropped.
const slowMv = `#!/bin/sh
case "$*" in
*/var/lib/kaudit/runs/*/manifest) ;;
*) if [ -e /tmp/kft-slow-mv ]; then
  : > /tmp/kft-in-mv
  sleep 3
fi ;;
esac
exec /usr/bin/mv "$@"
`

// TestConnectionDroppedMidApply cuts the SSH connection (sshd and its
// session processes killed) while the apply script runs on the canary,
// after its running values are set and while its first file is being
// replaced: kaudit must say that the host is left half-applied (restore
// impossible, status failed, what to run), treat the second host as
// documented (not started with --max-failures 0; attempted and verified
// with --max-failures 1), and once sshd is back, kaudit rollback must
// restore every value and file from the on-host backups, byte for byte,
// and a second rollback change nothing.
func TestConnectionDroppedMidApply(t *testing.T) {
	bin := buildKaudit(t)
	sys := map[string]string{"net.core.somaxconn": "128", "net.ipv4.tcp_max_syn_backlog": "256"}
	f := testfleet.Start(t, []testfleet.HostSpec{
		{Name: "d1", Sysctls: sys, Kafka: &testfleet.BrokerSpec{Version: "3.6.1"}, Files: map[string]string{"/usr/local/bin/mv": slowMv}},
		{Name: "d2", Sysctls: sys, Kafka: &testfleet.BrokerSpec{Version: "3.6.1"}},
	})
	inv := f.Inventory(t)
	jdir := t.TempDir()
	c := cli{t: t, bin: bin, home: t.TempDir()}
	d1, d2 := f.Host("d1"), f.Host("d2")
	if got := strings.TrimSpace(d1.SSH(t, "command -v mv")); got != "/usr/local/bin/mv" {
		t.Fatalf("d1: the session's mv is %q, not the wrapper", got)
	}
	addComment(t, d1)
	before := map[string]fullState{"d1": readFull(t, d1), "d2": readFull(t, d2)}
	for n, s := range before {
		t.Logf("BEFORE %s: %+v", n, s.state)
		if s.somaxconn != "128" || s.managedSHA != "absent" {
			t.Fatalf("%s: unexpected start state %+v", n, s)
		}
	}

	for _, tc := range []struct {
		name        string
		maxFailures string
		d2Started   bool
	}{
		// Documented: the first host is a canary; once more than
		// --max-failures hosts failed no further batch starts.
		{"max-failures-0", "0", false},
		{"max-failures-1", "1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			d1.Exec(t, "sh", "-c", "rm -f /tmp/kft-in-mv && : > /tmp/kft-slow-mv")
			wait := c.start("fix", inv, "--rules", e2eRules, "--apply", "--yes", "--batch", "1", "--max-failures", tc.maxFailures, "--journal-dir", jdir)
			t0 := time.Now()
			for i := 0; ; i++ {
				if _, err := d1.ExecErr("test", "-e", "/tmp/kft-in-mv"); err == nil {
					break
				}
				if code, _, _, exited := wait(0); exited {
					t.Fatalf("kaudit exited (%d) before the apply reached mv", code)
				}
				if i >= 3000 {
					t.Fatal("the apply did not reach mv within 60 s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("TIMING apply reached the slowed mv after %v", time.Since(t0).Round(time.Millisecond))
			d1.KillSSHDAll(t)
			tKill := time.Now()
			d1.Exec(t, "rm", "-f", "/tmp/kft-slow-mv")

			const bound = 30 * time.Second
			code, out, stderr, exited := wait(bound)
			if !exited {
				t.Fatalf("kaudit still running %v after the connection was cut", bound)
			}
			t.Logf("TIMING kaudit exited %v after the kill", time.Since(tKill).Round(time.Millisecond))
			if code != 4 {
				t.Errorf("exit %d, want 4 (ExitApplyFailed)", code)
			}
			m := runRE.FindStringSubmatch(out)
			if m == nil {
				t.Fatal("no run id in output")
			}
			id := m[1]

			// The session's leftovers (the sleeping wrapper, the shell)
			// finish on their own: wait for them before reading the host.
			for i := 0; ; i++ {
				if _, err := d1.ExecErr("pgrep", "-x", "sleep"); err != nil {
					break
				}
				if i >= 500 {
					t.Fatal("the wrapper is still sleeping after 10 s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			half := readFull(t, d1)
			t.Logf("AFTER THE DROP d1: %+v\n%s: %s", half.state, filepath.Dir(d1.KafkaConfig), strings.Fields(half.propsDir))
			if half.somaxconn != "4096" {
				t.Errorf("d1: somaxconn %s after the drop: the connection was not cut mid-apply", half.somaxconn)
			}

			// The journal says what happened to d1: changed, not restored
			// (sshd was gone), and how to undo it.
			j := loadJournal(t, jdir, id)
			hj := j.Host("d1")
			t.Logf("journal d1: status %s, error %q", hj.Status, hj.Error)
			if hj.Status != remediate.StatusFailed {
				t.Errorf("d1: status %s, want %s (the restore cannot reach the host)", hj.Status, remediate.StatusFailed)
			}
			for _, want := range []string{"connection closed during the apply script", "restoring FAILED", "kaudit rollback --run " + id} {
				if !strings.Contains(hj.Error, want) {
					t.Errorf("d1: journal error lacks %q", want)
				}
			}
			if len(hj.Backups) != 2 || len(hj.Runtime) != 2 {
				t.Errorf("d1: journal backups %+v, runtime %+v", hj.Backups, hj.Runtime)
			}
			if !strings.Contains(out, "d1: failed\n") || !strings.Contains(out, "restoring FAILED") {
				t.Errorf("output does not say that d1 failed and was not restored")
			}
			if strings.Contains(out+stderr, "s3cr3t") {
				t.Error("the properties file's content was printed")
			}

			// The on-host backups.
			run := remediate.HostRunsDir + "/" + id
			ls := strings.Fields(d1.Exec(t, "ls", "-A", run))
			t.Logf("d1:%s: %v", run, ls)
			// The script that was cut off goes on on the host until its
			// next result line (SIGPIPE), holding the host lock; the file
			// step's ok lines come once every file and the manifest are on
			// the disk. The rollback below takes the lock once it is gone.
			for _, want := range []string{"manifest", "file-0", "sysctl-0", "sysctl-1"} {
				if !slices.Contains(ls, want) {
					t.Errorf("d1: %s lacks %s", run, want)
				}
			}
			// The manifest is whole: its first line and its end line.
			if m := d1.Exec(t, "cat", run+"/manifest"); !strings.HasPrefix(m, fmt.Sprintf("kaudit-manifest\t%d\t%s\n", apply.ManifestVersion, id)) || !regexp.MustCompile(`\nend\t[0-9]+\n$`).MatchString(m) {
				t.Errorf("d1: %s/manifest is not whole:\n%s", run, m)
			}
			if got := sha(t, d1, run+"/file-0"); got != before["d1"].propsSHA {
				t.Errorf("d1: backup of server.properties: sha256 %s, want %s", got, before["d1"].propsSHA)
			}

			// The second host.
			h2 := j.Host("d2")
			t.Logf("journal d2: status %s, error %q", h2.Status, h2.Error)
			if tc.d2Started {
				if h2.Status != remediate.StatusVerified {
					t.Errorf("d2: status %s, want verified", h2.Status)
				}
				if got := read(t, d2); got.somaxconn != "4096" || got.synBacklog != "8192" {
					t.Errorf("d2 after apply: %+v", got)
				}
			} else {
				if h2.Status != remediate.StatusUnchanged || !strings.Contains(h2.Error, "not started") || len(h2.Backups) != 0 {
					t.Errorf("d2: status %s, error %q, backups %v", h2.Status, h2.Error, h2.Backups)
				}
				if got := readFull(t, d2); got != before["d2"] {
					t.Errorf("d2 changed: %+v, want %+v", got, before["d2"])
				}
			}

			// sshd back; the rollback restores everything from the
			// on-host backups.
			d1.RestartSSHD(t)
			t1 := time.Now()
			code, out, _ = c.run("rollback", inv, "--run", id, "--yes", "--journal-dir", jdir)
			t.Logf("TIMING rollback %v", time.Since(t1).Round(time.Millisecond))
			if code != 0 || !strings.Contains(out, "d1: rolled back (") {
				t.Fatalf("rollback: exit %d", code)
			}
			for _, h := range f.Hosts {
				got := readFull(t, h)
				t.Logf("ROLLED BACK %s: %+v", h.Spec.Name, got.state)
				if got != before[h.Spec.Name] {
					t.Errorf("%s after rollback: %+v, want %+v", h.Spec.Name, got, before[h.Spec.Name])
				}
			}
			j = loadJournal(t, jdir, id)
			if s := j.Host("d1").Status; s != remediate.StatusRolledBack {
				t.Errorf("d1: journal status %s after rollback", s)
			}
			if tc.d2Started && j.Host("d2").Status != remediate.StatusRolledBack {
				t.Errorf("d2: journal status %s after rollback", j.Host("d2").Status)
			}

			// Idempotent.
			code, out, _ = c.run("rollback", inv, "--run", id, "--yes", "--journal-dir", jdir)
			if code != 0 || !strings.Contains(out, "unchanged") || strings.Contains(out, "restored") || strings.Contains(out, "removed") {
				t.Errorf("second rollback: exit %d, output %q", code, out)
			}
			for _, h := range f.Hosts {
				if got := readFull(t, h); got != before[h.Spec.Name] {
					t.Errorf("%s after the second rollback: %+v", h.Spec.Name, got)
				}
			}
		})
	}
}

// TestApplyTimeoutDoesNotRaceRestore: the apply script outlives kaudit's
// --timeout (its mv is slowed past it). kaudit gives up, closes the
// connection and restores the host over a new one — while the orphaned
// apply script is still running on the host (sshd does not kill a
// session's command when the client goes away). The restore must not
// report the host restored while that script can still change it. Before
// the fix the journal said "rolled-back" and the orphaned script's mv
// then replaced server.properties: half-applied without saying so. Now
// the restore waits (bounded) for the run's apply script to end
// (it holds the host lock) and, as it is still running, restores nothing and
// says so; kaudit rollback restores the host once it has ended.
func TestApplyTimeoutDoesNotRaceRestore(t *testing.T) {
	bin := buildKaudit(t)
	f := testfleet.Start(t, []testfleet.HostSpec{{Name: "r1",
		Sysctls: map[string]string{"net.core.somaxconn": "128", "net.ipv4.tcp_max_syn_backlog": "256"},
		Kafka:   &testfleet.BrokerSpec{Version: "3.6.1"},
		Files:   map[string]string{"/usr/local/bin/mv": strings.Replace(slowMv, "sleep 3", "sleep 6", 1)}}})
	inv := f.Inventory(t)
	jdir := t.TempDir()
	c := cli{t: t, bin: bin, home: t.TempDir()}
	h := f.Host("r1")
	before := readFull(t, h)
	h.Exec(t, "sh", "-c", "rm -f /tmp/kft-in-mv && : > /tmp/kft-slow-mv")
	t0 := time.Now()
	code, out, _ := c.run("fix", inv, "--rules", e2eRules, "--apply", "--yes", "--timeout", "3s", "--journal-dir", jdir)
	t.Logf("TIMING kaudit exited after %v", time.Since(t0).Round(time.Millisecond))
	if code != 4 {
		t.Errorf("exit %d, want 4", code)
	}
	m := runRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatal("no run id in output")
	}
	// Wait for the orphaned apply script (bounded).
	for i := 0; ; i++ {
		if _, err := h.ExecErr("pgrep", "-x", "sleep"); err != nil {
			break
		}
		if i >= 1000 {
			t.Fatal("the wrapper is still sleeping after 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	h.Exec(t, "rm", "-f", "/tmp/kft-slow-mv")
	hj := loadJournal(t, jdir, m[1]).Host("r1")
	got := readFull(t, h)
	t.Logf("journal r1: status %s, error %q", hj.Status, hj.Error)
	t.Logf("AFTER r1: %+v", got.state)
	if hj.Status == remediate.StatusRolledBack && got != before {
		t.Errorf("journal says %s but the host is %+v, was %+v: half-applied without saying so", hj.Status, got, before)
	}
	// The restore waited 1 s (half of --timeout) for the orphaned script,
	// which still had seconds of mv to go: nothing restored, and said so.
	for _, want := range []string{"during the apply script", "still running on the host: nothing restored", "kaudit rollback --run " + m[1]} {
		if !strings.Contains(hj.Error, want) {
			t.Errorf("journal error lacks %q", want)
		}
	}
	if hj.Status != remediate.StatusFailed {
		t.Errorf("status %s, want %s", hj.Status, remediate.StatusFailed)
	}
	if got == before {
		t.Error("the orphaned apply script changed nothing: the race was not exercised")
	}
	// Whatever happened, kaudit rollback puts the host back.
	if code, _, _ := c.run("rollback", inv, "--run", m[1], "--yes", "--journal-dir", jdir); code != 0 {
		t.Errorf("rollback: exit %d", code)
	}
	if got := readFull(t, h); got != before {
		t.Errorf("after rollback %+v, want %+v", got, before)
	}
}
