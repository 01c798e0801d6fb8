//go:build e2e

// Package e2e runs kaudit serve against real OpenSSH hosts
// (test/testfleet: network namespaces, root) and a real Prometheus
// (the distribution's prometheus package) that scrapes it on loopback:
//
//	go test -tags e2e -count=1 -v ./serve/e2e/
//
// Set KAUDIT_SERVE_E2E_OUT=DIR to keep the /metrics it scraped and the
// answers of Prometheus's HTTP API.
package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

// moduleRoot is the directory of go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	gotool, err := testfleet.GoTool()
	if err != nil {
		t.Skipf("e2e: %v", err)
	}
	out, err := exec.Command(gotool, "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" || strings.TrimSpace(string(out)) == os.DevNull {
		t.Fatalf("go env GOMOD: %v %q", err, out)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func buildKaudit(t *testing.T, root string) string {
	t.Helper()
	gotool, _ := testfleet.GoTool()
	bin := filepath.Join(t.TempDir(), "kaudit")
	cmd := exec.Command(gotool, "build", "-o", bin, "./cmd/kaudit")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// syncBuffer is a bytes.Buffer safe for a process writing and a test reading.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// daemon is a process the test started and stops by its PID.
type daemon struct {
	name   string
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{}
	err    error
}

func startDaemon(t *testing.T, name string, env []string, bin string, args ...string) *daemon {
	t.Helper()
	d := &daemon{name: name, cmd: exec.Command(bin, args...), stderr: &syncBuffer{}, done: make(chan struct{})}
	d.cmd.Env = env
	d.cmd.Stdout, d.cmd.Stderr = d.stderr, d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	go func() {
		d.err = d.cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() { d.stop(t, 10*time.Second) })
	return d
}

// stop sends SIGTERM to the PID and waits (SIGKILL after limit); it
// returns how long the process took to exit and its error.
func (d *daemon) stop(t *testing.T, limit time.Duration) (time.Duration, error) {
	select {
	case <-d.done:
		return 0, d.err
	default:
	}
	start := time.Now()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
		return time.Since(start), d.err
	case <-time.After(limit):
		_ = d.cmd.Process.Kill()
		<-d.done
		t.Errorf("%s (PID %d) did not stop within %v of SIGTERM\n%s", d.name, d.cmd.Process.Pid, limit, d.stderr.String())
		return time.Since(start), d.err
	}
}

func (d *daemon) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := d.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%s: %v: %v", d.name, sig, err)
	}
}

// eventually polls cond every 200 ms until it is true or limit passes.
func eventually(t *testing.T, limit time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	last := ""
	for time.Now().Before(deadline) {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v (last: %s)", what, limit, last)
}

func httpGet(addr, path string) (int, []byte, time.Duration, error) {
	start := time.Now()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, nil, time.Since(start), err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, time.Since(start), err
}

// metrics scrapes /metrics and parses it.
func metrics(t *testing.T, addr string) (map[string]*dto.MetricFamily, string, time.Duration) {
	t.Helper()
	code, body, took, err := httpGet(addr, "/metrics")
	if err != nil || code != 200 {
		t.Fatalf("GET /metrics: %d %v", code, err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics: %v\n%s", err, body)
	}
	return fams, string(body), took
}

// val is the one series of name whose labels include match (-1: none).
func val(fams map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	for _, m := range f.GetMetric() {
		ok := true
		for k, v := range match {
			got := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == k {
					got = l.GetValue()
				}
			}
			ok = ok && got == v
		}
		if ok {
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return -1
}

// promSample is one answer of Prometheus's /api/v1/query.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s promSample) float() float64 {
	str, _ := s.Value[1].(string)
	f, _ := strconv.ParseFloat(str, 64)
	return f
}

// query asks Prometheus's HTTP API; it returns the samples and the raw answer.
func query(t *testing.T, prom, q string) ([]promSample, string) {
	t.Helper()
	code, body, _, err := httpGet(prom, "/api/v1/query?query="+url.QueryEscape(q))
	if err != nil || code != 200 {
		t.Fatalf("prometheus query %s: %d %v %s", q, code, err, body)
	}
	var ans struct {
		Status string `json:"status"`
		Data   struct {
			Result []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ans); err != nil || ans.Status != "success" {
		t.Fatalf("prometheus query %s: %v %s", q, err, body)
	}
	return ans.Data.Result, string(body)
}

// oneShot runs kaudit scan -f json and counts, per rule, the hosts it fails on.
func oneShot(t *testing.T, bin string, env []string, inv string) map[string]int {
	t.Helper()
	out := filepath.Join(t.TempDir(), "scan.json")
	cmd := exec.Command(bin, "scan", inv, "-f", "json", "-o", out)
	cmd.Env = env
	msg, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() == 2) {
		t.Fatalf("kaudit scan: %v\n%s", err, msg)
	}
	r, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	failing := map[string]int{}
	for _, ru := range rules.Catalog() {
		failing[ru.ID] = 0
	}
	for _, h := range r.Hosts {
		if h.Error != nil {
			t.Fatalf("one-shot scan: %s not audited: %v", h.Name, h.Error.Message)
		}
		for _, f := range h.Findings {
			if f.Status == rules.Fail {
				failing[f.Rule]++
			}
		}
	}
	return failing
}

// promFailing is sum by (rule) (kaudit_rule_failing_hosts) as Prometheus answers it.
func promFailing(t *testing.T, prom string) (map[string]int, string) {
	t.Helper()
	samples, raw := query(t, prom, "sum by (rule) (kaudit_rule_failing_hosts)")
	out := map[string]int{}
	for _, s := range samples {
		out[s.Metric["rule"]] = int(s.float())
	}
	return out, raw
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

var listeningRE = regexp.MustCompile(`listening on http://([0-9.:]+)/`)

func startPrometheus(t *testing.T, root, target string) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("e2e: prometheus not installed (apt-get install prometheus; .ci/serve-e2e does)")
	}
	dir := t.TempDir()
	port := freePort(t)
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - %s
scrape_configs:
  - job_name: kaudit
    static_configs:
      - targets: ['%s']
`, filepath.Join(root, "deploy/prometheus/kaudit-rules.yml"), target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	d := startDaemon(t, "prometheus", []string{"PATH=/usr/bin:/bin", "HOME=" + dir}, bin,
		"--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	eventually(t, 60*time.Second, "prometheus ready", func() (bool, string) {
		select {
		case <-d.done:
			t.Fatalf("prometheus exited: %v\n%s", d.err, d.stderr.String())
		default:
		}
		code, _, _, err := httpGet(addr, "/-/ready")
		return code == 200, fmt.Sprint(code, err)
	})
	t.Logf("prometheus (PID %d) on %s scrapes %s every 1s", d.cmd.Process.Pid, addr, target)
	return addr
}

// keep writes name under $KAUDIT_SERVE_E2E_OUT when set.
func keep(t *testing.T, name, content string) {
	if dir := os.Getenv("KAUDIT_SERVE_E2E_OUT"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err == nil {
			_ = os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
		}
	}
}

func TestServeWithPrometheus(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("e2e: needs root (the test fleet uses network namespaces)")
	}
	if _, err := exec.LookPath("prometheus"); err != nil {
		t.Skip("e2e: prometheus not installed (apt-get install prometheus; .ci/serve-e2e does)")
	}
	root := moduleRoot(t)
	bin := buildKaudit(t, root)
	f := testfleet.Start(t, []testfleet.HostSpec{
		{Name: "srv-ok", Sysctls: map[string]string{"net.ipv4.tcp_syncookies": "1", "net.core.somaxconn": "4096"},
			Kafka: &testfleet.BrokerSpec{Version: "3.6.1", Properties: map[string]string{"socket.listen.backlog.size": "4096"}}},
		{Name: "srv-drift", Sysctls: map[string]string{"net.ipv4.tcp_syncookies": "1", "net.core.somaxconn": "128"},
			Kafka: &testfleet.BrokerSpec{Version: "3.6.1", Properties: map[string]string{"socket.listen.backlog.size": "4096"}}},
	})
	inv := f.Inventory(t)
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + t.TempDir(), "LANG=C"}

	want := oneShot(t, bin, env, inv)
	if want["somaxconn"] != 1 {
		t.Fatalf("one-shot scan: somaxconn fails on %d hosts, want 1 (srv-drift: 128)", want["somaxconn"])
	}

	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	state := t.TempDir()
	serveArgs := []string{"serve", inv, "--interval", "1h", "--jitter", "0", "--listen", addr, "--state-dir", state, "--connect-timeout", "30s"}
	srv := startDaemon(t, "kaudit serve", env, bin, serveArgs...)
	eventually(t, 60*time.Second, "first scan served (/readyz 200)", func() (bool, string) {
		code, body, _, err := httpGet(addr, "/readyz")
		return code == 200, fmt.Sprintf("%d %s %v; stderr: %s", code, body, err, srv.stderr.String())
	})
	if m := listeningRE.FindStringSubmatch(srv.stderr.String()); m == nil || m[1] != addr {
		t.Errorf("serve did not say where it listens: %s", srv.stderr.String())
	}

	prom := startPrometheus(t, root, addr)

	// 1. Prometheus's answer for every rule is the one-shot scan's.
	var raw string
	eventually(t, 30*time.Second, "Prometheus has the one-shot scan's failing hosts per rule", func() (bool, string) {
		var got map[string]int
		got, raw = promFailing(t, prom)
		return sameCounts(got, want), fmt.Sprintf("prometheus %v, scan %v", got, want)
	})
	somax, rawSomax := query(t, prom, `kaudit_rule_failing_hosts{rule="somaxconn"}`)
	t.Logf("query kaudit_rule_failing_hosts{rule=\"somaxconn\"}: %s", rawSomax)
	keep(t, "query-somaxconn-before.json", rawSomax)
	keep(t, "query-failing-by-rule.json", raw)
	if len(somax) != 1 || somax[0].float() != 1 || somax[0].Metric["severity"] != "medium" || somax[0].Metric["job"] != "kaudit" {
		t.Errorf("somaxconn series: %s", rawSomax)
	}
	_, body, _ := metrics(t, addr)
	keep(t, "metrics-first.txt", body)

	// 2. The host changes, a reload (SIGHUP) scans again: the series follows.
	f.Host("srv-drift").Exec(t, "sh", "-c", "echo 4096 > /proc/sys/net/core/somaxconn")
	srv.signal(t, syscall.SIGHUP)
	eventually(t, 60*time.Second, "second scan", func() (bool, string) {
		fams, _, _ := metrics(t, addr)
		n := val(fams, "kaudit_scans_total", map[string]string{"result": "success"})
		return n == 2, fmt.Sprint("scans ", n)
	})
	want2 := oneShot(t, bin, env, inv)
	if want2["somaxconn"] != 0 {
		t.Fatalf("one-shot scan after the change: somaxconn fails on %d hosts", want2["somaxconn"])
	}
	eventually(t, 30*time.Second, "Prometheus follows the changed host", func() (bool, string) {
		got, _ := promFailing(t, prom)
		return sameCounts(got, want2), fmt.Sprintf("prometheus %v, scan %v", got, want2)
	})
	_, rawSomax = query(t, prom, `kaudit_rule_failing_hosts{rule="somaxconn"}`)
	t.Logf("after the change: %s", rawSomax)
	keep(t, "query-somaxconn-after.json", rawSomax)

	// 3. A scrape during a scan returns at once, with the last report: a
	// host whose sshd is stopped (SIGSTOP) holds the scan for its timeout.
	f.Host("srv-ok").StopSSHD(t)
	stopped := true
	defer func() {
		if stopped {
			f.Host("srv-ok").ContSSHD(t)
		}
	}()
	srv.signal(t, syscall.SIGHUP)
	eventually(t, 15*time.Second, "scan running", func() (bool, string) {
		fams, _, _ := metrics(t, addr)
		return val(fams, "kaudit_scan_running", nil) == 1, "not yet"
	})
	var slowest time.Duration
	for range 5 {
		fams, body, took := metrics(t, addr)
		slowest = max(slowest, took)
		if val(fams, "kaudit_scan_running", nil) != 1 || val(fams, "kaudit_scans_total", map[string]string{"result": "success"}) != 2 ||
			val(fams, "kaudit_rule_failing_hosts", map[string]string{"rule": "somaxconn", "severity": "medium"}) != 0 {
			t.Errorf("scrape during a scan does not serve the last report:\n%s", body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("5 scrapes during a scan: slowest %v", slowest)
	if slowest > time.Second {
		t.Errorf("a scrape during a scan took %v", slowest)
	}
	eventually(t, 15*time.Second, "Prometheus sees the scan running", func() (bool, string) {
		s, raw := query(t, prom, "kaudit_scan_running")
		return len(s) == 1 && s[0].float() == 1, raw
	})

	// 4. SIGTERM mid-scan: serve stops at once; the scan is not served.
	took, err := srv.stop(t, 10*time.Second)
	t.Logf("SIGTERM mid-scan: exited in %v (%v)", took, err)
	if err != nil || took > 5*time.Second || !strings.Contains(srv.stderr.String(), "scan interrupted") {
		t.Errorf("SIGTERM mid-scan: %v after %v\n%s", err, took, srv.stderr.String())
	}
	f.Host("srv-ok").ContSSHD(t)
	stopped = false

	// 5. A restart serves the state file's report before any new scan
	// (the report is younger than --interval: no scan for an hour).
	srv2 := startDaemon(t, "kaudit serve (restarted)", env, bin, serveArgs...)
	eventually(t, 10*time.Second, "restarted serve answers", func() (bool, string) {
		code, _, _, err := httpGet(addr, "/readyz")
		return code == 200, fmt.Sprint(code, err, srv2.stderr.String())
	})
	fams, body, _ := metrics(t, addr)
	keep(t, "metrics-restarted.txt", body)
	for _, c := range []struct {
		name  string
		match map[string]string
		want  float64
	}{
		{"kaudit_report_from_state", nil, 1},
		{"kaudit_scans_total", map[string]string{"result": "success"}, 0},
		{"kaudit_hosts", map[string]string{"state": "audited"}, 2},
		{"kaudit_rule_failing_hosts", map[string]string{"rule": "somaxconn", "severity": "medium"}, 0},
		{"kaudit_host_up", map[string]string{"host": "srv-drift"}, 1},
	} {
		if got := val(fams, c.name, c.match); got != c.want {
			t.Errorf("after a restart: %s%v = %v, want %v", c.name, c.match, got, c.want)
		}
	}
	eventually(t, 15*time.Second, "Prometheus sees the state file's report", func() (bool, string) {
		s, raw := query(t, prom, "kaudit_report_from_state")
		got, _ := promFailing(t, prom)
		return len(s) == 1 && s[0].float() == 1 && sameCounts(got, want2), raw
	})

	// 6. A change of the inventory file reloads and scans.
	b, err := os.ReadFile(inv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inv, append(b, "# touched by the test\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "scan after the inventory changed", func() (bool, string) {
		fams, _, _ := metrics(t, addr)
		return val(fams, "kaudit_scans_total", map[string]string{"result": "success"}) == 1 && val(fams, "kaudit_report_from_state", nil) == 0, srv2.stderr.String()
	})
	_, body, _ = metrics(t, addr)
	keep(t, "metrics-last.txt", body)
	if _, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command("promtool", "check", "metrics")
		cmd.Stdin = strings.NewReader(body)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
	// The alerting rules loaded and were evaluated.
	code, rulesBody, _, err := httpGet(prom, "/api/v1/rules")
	if err != nil || code != 200 || !strings.Contains(string(rulesBody), "KauditCriticalRuleFailing") || !strings.Contains(string(rulesBody), `"health":"ok"`) {
		t.Errorf("prometheus rules: %d %v %.400s", code, err, rulesBody)
	}
	if took, err := srv2.stop(t, 10*time.Second); err != nil {
		t.Errorf("stop: %v after %v", err, took)
	}
	t.Logf("serve stderr:\n%s", srv2.stderr.String())
}
