//go:build e2e

// Package e2e runs the real kaudit binary against a fleet of real test
// hosts (test/testfleet: network namespaces, real OpenSSH sshd, fake
// Kafka brokers) and checks what it reports against ground truth read inside
// each host. Build tag e2e; needs root, sshd and the Go toolchain.
//
//	go test -tags e2e ./test/e2e/ -count=1 -v -timeout 20m
//
// Set KAUDIT_FAULTS_MD=FILE to also write the fault table the tests observed
// (the source of docs/faults.md).
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

var (
	binOnce  sync.Once
	binPath  string
	binErr   error
	buildDir string
)

func TestMain(m *testing.M) {
	if os.Getenv(socketsHelperEnv) != "" {
		socketsHelper()
		return
	}
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	if p := os.Getenv("KAUDIT_FAULTS_MD"); p != "" {
		if err := writeObservations(p); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: writing %s: %v\n", p, err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// requireEnv skips the test when the machine cannot run a fleet.
func requireEnv(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("e2e: needs root (the test fleet uses network, mount and PID namespaces)")
	}
	if _, err := exec.LookPath("sshd"); err != nil {
		if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
			t.Skip("e2e: OpenSSH sshd not installed (apt-get install openssh-server)")
		}
	}
	if _, err := testfleet.GoTool(); err != nil {
		t.Skipf("e2e: %v", err)
	}
}

// kauditBin builds ./cmd/kaudit once per test run and returns its path.
func kauditBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		gotool, err := testfleet.GoTool()
		if err != nil {
			binErr = err
			return
		}
		out, err := exec.Command(gotool, "env", "GOMOD").Output()
		if err != nil {
			binErr = fmt.Errorf("go env GOMOD: %v", err)
			return
		}
		gomod := strings.TrimSpace(string(out))
		if gomod == "" || gomod == os.DevNull {
			binErr = errors.New("go env GOMOD: not inside the kaudit module")
			return
		}
		buildDir, err = os.MkdirTemp("", "kaudit-e2e-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(buildDir, "kaudit")
		start := time.Now()
		cmd := exec.Command(gotool, "build", "-o", binPath, "./cmd/kaudit")
		cmd.Dir = filepath.Dir(gomod)
		if b, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/kaudit: %v\n%s", err, b)
			return
		}
		fmt.Fprintf(os.Stderr, "e2e: built %s in %v\n", binPath, time.Since(start).Round(time.Millisecond))
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// result is one run of the kaudit binary.
type result struct {
	Code   int
	Stdout string
	Stderr string
	Dur    time.Duration
	Report *report.Report // decoded -o file (scan with --format json)
	JSON   []byte
}

// runOpts tunes one kaudit run.
type runOpts struct {
	env   []string      // extra environment (e.g. SSH_AUTH_SOCK=...)
	dir   string        // working directory (default: the test's)
	limit time.Duration // hard cap on the run (default 90 s): a hang fails the test
}

// proc is a running kaudit.
type proc struct {
	cmd            *exec.Cmd
	args           []string
	stdout, stderr bytes.Buffer
	start          time.Time
	cancel         context.CancelFunc
	ctx            context.Context
	limit          time.Duration
}

// startKaudit starts the binary with args and a clean environment: HOME is
// a fresh temp dir (the machine's ~/.ssh is never used), no ssh-agent
// unless o.env names one.
func startKaudit(t *testing.T, o runOpts, args ...string) *proc {
	t.Helper()
	bin := kauditBin(t)
	p := &proc{args: args, limit: o.limit}
	if p.limit == 0 {
		p.limit = 90 * time.Second
	}
	p.ctx, p.cancel = context.WithTimeout(context.Background(), p.limit)
	p.cmd = exec.CommandContext(p.ctx, bin, args...)
	p.cmd.Env = append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + t.TempDir(), "LANG=C", "NO_COLOR=1"}, o.env...)
	p.cmd.Dir = o.dir
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		p.cancel()
		t.Fatalf("kaudit: %v", err)
	}
	return p
}

// wait waits for the run (killed after the limit: a hang fails the test).
func (p *proc) wait(t *testing.T) result {
	t.Helper()
	defer p.cancel()
	err := p.cmd.Wait()
	r := result{Stdout: p.stdout.String(), Stderr: p.stderr.String(), Dur: time.Since(p.start)}
	var ee *exec.ExitError
	switch {
	case p.ctx.Err() != nil:
		t.Fatalf("kaudit %s: still running after %v (hang)\nstderr:\n%s", strings.Join(p.args, " "), p.limit, r.Stderr)
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	case err != nil:
		t.Fatalf("kaudit %s: %v", strings.Join(p.args, " "), err)
	}
	return r
}

// runKaudit runs the binary to completion.
func runKaudit(t *testing.T, o runOpts, args ...string) result {
	t.Helper()
	return startKaudit(t, o, args...).wait(t)
}

// scanArgs are the arguments of a JSON scan written to a temp file.
func scanArgs(t *testing.T, inv string, extra ...string) (args []string, out string) {
	out = filepath.Join(t.TempDir(), "out.json")
	return append([]string{"scan", inv, "--format", "json", "-o", out}, extra...), out
}

// decode reads the JSON report at out into r (fatal when it is missing,
// unless the exit code is 2: a usage error writes none).
func decode(t *testing.T, r result, out string) result {
	t.Helper()
	b, err := os.ReadFile(out)
	if err != nil {
		if r.Code != 2 {
			t.Fatalf("kaudit scan exited %d without a report: %v\nstderr:\n%s", r.Code, err, r.Stderr)
		}
		return r
	}
	r.JSON = b
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("report is not valid JSON: %v\n%.2000s", err, b)
	}
	r.Report = &rep
	t.Logf("kaudit scan: exit %d in %v (%d hosts, %d audited)", r.Code, r.Dur.Round(time.Millisecond), rep.Summary.Hosts, rep.Summary.Audited)
	return r
}

// scan runs `kaudit scan INV --format json -o FILE` plus extra flags and
// decodes the report.
func scan(t *testing.T, o runOpts, inv string, extra ...string) result {
	t.Helper()
	args, out := scanArgs(t, inv, extra...)
	return decode(t, runKaudit(t, o, args...), out)
}

func (r result) host(t *testing.T, name string) *report.Host {
	t.Helper()
	if r.Report == nil {
		t.Fatalf("no report")
	}
	for i := range r.Report.Hosts {
		if r.Report.Hosts[i].Name == name {
			return &r.Report.Hosts[i]
		}
	}
	t.Fatalf("report has no host %q", name)
	return nil
}

func finding(h *report.Host, rule string) *rules.Finding {
	for i := range h.Findings {
		if h.Findings[i].Rule == rule {
			return &h.Findings[i]
		}
	}
	return nil
}

// ruleIDs is the catalog, from the rules package the binary is built from.
func ruleIDs() []string {
	var ids []string
	for _, r := range rules.Catalog() {
		ids = append(ids, r.ID)
	}
	return ids
}

// assertComplete checks that h was audited and every catalog rule has a
// finding.
func assertComplete(t *testing.T, h *report.Host) {
	t.Helper()
	if h.Error != nil {
		t.Errorf("%s: not audited: %s: %s", h.Name, h.Error.Kind, h.Error.Message)
		return
	}
	if h.Facts == nil {
		t.Errorf("%s: audited without facts", h.Name)
	}
	ids := ruleIDs()
	if len(h.Findings) != len(ids) {
		t.Errorf("%s: %d findings, want one per rule (%d)", h.Name, len(h.Findings), len(ids))
	}
	for _, id := range ids {
		if finding(h, id) == nil {
			t.Errorf("%s: no finding for rule %s", h.Name, id)
		}
	}
}

// ---------- inventories ----------

// invHost is one host entry of a generated inventory.
type invHost struct {
	name  string
	addr  string
	port  int
	extra []string // extra YAML lines of the host mapping, e.g. "user: kafka"
}

func entry(h *testfleet.Host, extra ...string) invHost {
	return invHost{name: h.Spec.Name, addr: h.Addr, port: h.Port, extra: extra}
}

// fleetNoFile is the broker-open-files threshold the fleet's inventories
// use: the profile's 100000, or this machine's hard RLIMIT_NOFILE when
// that is lower, since a test broker cannot be given more than it (the
// fake broker's Go runtime raises its soft limit to the hard one).
func fleetNoFile(t *testing.T) int {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	return int(min(lim.Max, 100000))
}

// writeInventory writes a kaudit inventory reaching hosts through fleet f
// (its key and known_hosts, strict host keys, interface eth0) and returns
// its path. Timeouts are left to the command-line flags.
func writeInventory(t *testing.T, f *testfleet.Fleet, hosts ...invHost) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("defaults:\n")
	fmt.Fprintf(&b, "  user: %s\n", f.User)
	fmt.Fprintf(&b, "  identity_files: [%q]\n", f.IdentityFile)
	b.WriteString("  use_agent: false\n")
	fmt.Fprintf(&b, "  known_hosts: [%q]\n", f.KnownHosts)
	b.WriteString("  host_key_policy: strict\n")
	b.WriteString("  kafka: {port: 9092}\n")
	b.WriteString("  interfaces: [eth0]\n")
	fmt.Fprintf(&b, "  profile: {nofile: %d}\n", fleetNoFile(t))
	b.WriteString("hosts:\n")
	for _, h := range hosts {
		fmt.Fprintf(&b, "  %s:\n", h.name)
		fmt.Fprintf(&b, "    address: %s\n", h.addr)
		fmt.Fprintf(&b, "    port: %d\n", h.port)
		for _, l := range h.extra {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	p := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// ---------- observations (docs/faults.md) ----------

type observation struct {
	order             int
	fault, kind, gist string
	code              int
	wall, bound       time.Duration
	test              string
}

var (
	obsMu sync.Mutex
	obs   []observation
)

// observe records what kaudit did for one fault.
func observe(t *testing.T, order int, fault, kind, gist string, r result, bound time.Duration) {
	obsMu.Lock()
	defer obsMu.Unlock()
	obs = append(obs, observation{order: order, fault: fault, kind: kind, gist: gist, code: r.Code, wall: r.Dur, bound: bound, test: t.Name()})
}

// observeNote records a row that is not one scan (e.g. a family of runs).
func observeNote(order int, fault, kind, gist string, code int) {
	obsMu.Lock()
	defer obsMu.Unlock()
	obs = append(obs, observation{order: order, fault: fault, kind: kind, gist: gist, code: code, wall: -1})
}

// observeBug records a run that showed a kaudit bug.
func observeBug(t *testing.T, order int, fault string, r result, kind, msg string) {
	observe(t, order, fault, kind, msg+" — **BUG**, see below", r, 0)
}

// Run-specific details (temp paths, keys, addresses) are replaced so the
// table is stable from run to run.
var sanitizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`/tmp/\S*known_hosts`), "KNOWN_HOSTS"},
	{regexp.MustCompile(`SHA256:[A-Za-z0-9+/]{43}`), "SHA256:…"},
	{regexp.MustCompile(`198\.1[89]\.\d+\.\d+`), "ADDR"},
	{regexp.MustCompile(`\S*/inventory\.yaml`), "inventory.yaml"},
	{regexp.MustCompile(`/tmp/kc\d+-\d+`), "CANARY"},
}

func sanitize(s string) string {
	for _, x := range sanitizers {
		s = x.re.ReplaceAllString(s, x.with)
	}
	return s
}

func writeObservations(p string) error {
	obsMu.Lock()
	defer obsMu.Unlock()
	sort.SliceStable(obs, func(i, j int) bool { return obs[i].order < obs[j].order })
	var b strings.Builder
	b.WriteString("| Fault | kaudit reports (error kind) | Message gist | Exit | Wall time (bound) | Test |\n|---|---|---|---|---|---|\n")
	for _, o := range obs {
		kind := o.kind
		if kind == "" {
			kind = "— (audited)"
		} else if !strings.HasPrefix(kind, "—") {
			kind = "`" + kind + "`"
		}
		wall := fmt.Sprintf("%.1f s", o.wall.Seconds())
		switch {
		case o.wall < 0:
			wall = "< 0.1 s each"
		case o.bound > 0:
			wall += fmt.Sprintf(" (< %.0f s)", o.bound.Seconds())
		}
		test := ""
		if o.test != "" {
			test = "`" + o.test + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s |\n", o.fault, kind,
			strings.ReplaceAll(strings.ReplaceAll(sanitize(o.gist), "|", `\|`), "\n", " "), o.code, wall, test)
	}
	return os.WriteFile(p, []byte(b.String()), 0o644)
}
