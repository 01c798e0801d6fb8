package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/simhost"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLIAt(t, time.Now, args...)
}

// runCLIAt is runCLI with the clock now.
func runCLIAt(t *testing.T, now func() time.Time, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = runEnv(append([]string{"kaudit"}, args...), env{Stdin: os.Stdin, Stdout: &o, Stderr: &e, Now: now})
	return code, o.String(), e.String()
}

func decode(t *testing.T, s string) *report.Report {
	t.Helper()
	var r report.Report
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return &r
}

func finding(t *testing.T, r *report.Report, host, rule string) rules.Finding {
	t.Helper()
	for _, h := range r.Hosts {
		if h.Name != host {
			continue
		}
		for _, f := range h.Findings {
			if f.Rule == rule {
				return f
			}
		}
	}
	t.Fatalf("no finding %s on %s", rule, host)
	return rules.Finding{}
}

func TestDemoJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "demo", "--format", "json")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d (stderr %s)", code, ExitFindings, errOut)
	}
	r := decode(t, out)
	if r.SchemaVersion != 1 || r.Summary.Hosts != 10 || r.Summary.Audited != 9 || r.Summary.Unreachable != 1 {
		t.Fatalf("summary %+v", r.Summary)
	}
	nRules := len(rules.Catalog())
	for _, h := range r.Hosts {
		if h.Error != nil {
			if h.Name != "kafka-down-08" || h.Error.Kind != "unreachable" || len(h.Findings) != 0 {
				t.Errorf("%s: error %+v with %d findings", h.Name, h.Error, len(h.Findings))
			}
			continue
		}
		if len(h.Findings) != nRules {
			t.Errorf("%s: %d findings, want one per rule (%d)", h.Name, len(h.Findings), nRules)
		}
		for _, f := range h.Findings {
			if f.Reason == "" {
				t.Errorf("%s/%s: no reason", h.Name, f.Rule)
			}
		}
	}
	want := []struct {
		host, rule string
		status     rules.Status
		severity   rules.Severity
	}{
		{"kafka-centos7-01", "kafka-backlog-hardcoded", rules.Fail, rules.High},
		{"kafka-centos7-01", "syncookies-fired", rules.Fail, rules.Critical},
		{"kafka-centos7-01", "listen-backlog-effective", rules.Fail, rules.High},
		{"kafka-centos7-01", "somaxconn", rules.Fail, rules.Medium},
		{"kafka-focal-02", "kernel-synack-wscale", rules.Pass, rules.Critical},
		{"kafka-focal-02", "kafka-backlog-hardcoded", rules.Fail, rules.High},
		{"kafka-bookworm-03", "kernel-synack-wscale", rules.Pass, rules.Critical},
		{"kafka-bookworm-03", "listen-backlog-effective", rules.Pass, rules.High},
		{"kafka-rhel8-04", "kernel-synack-wscale", rules.Fail, rules.Critical}, // settled by the simulated probe: 1 vs 7
		{"kafka-rhel8-04", "kafka-backlog-hardcoded", rules.Fail, rules.High},
		{"kafka-bionic-05", "kernel-synack-wscale", rules.Pass, rules.Critical}, // settled by the simulated probe: consistent
		{"kafka-bionic-05", "nic-offload", rules.Fail, rules.Medium},
		{"kafka-amzn2-06", "kernel-synack-wscale", rules.Warn, rules.Low},
		{"kafka-buster-07", "kernel-synack-wscale", rules.Fail, rules.Critical},
		{"kafka-buster-07", "sysctl-persisted", rules.Fail, rules.Medium},
	}
	for _, w := range want {
		f := finding(t, r, w.host, w.rule)
		if f.Status != w.status || f.Severity != w.severity {
			t.Errorf("%s %s: %s/%s, want %s/%s (%s)", w.host, w.rule, f.Status, f.Severity, w.status, w.severity, f.Reason)
		}
	}
	// The demo probes: which evidence decided the kernel rule on each host.
	for host, src := range map[string]rules.Source{
		"kafka-centos7-01": rules.SourceChangelog, // 3.10: never probed (tcp_syncookies is host-wide)
		"kafka-focal-02":   rules.SourceVersion,   // no root on the simulated login: probe skipped
		"kafka-rhel8-04":   rules.SourceProbe,
		"kafka-bionic-05":  rules.SourceProbe,
		"kafka-amzn2-06":   rules.SourceVersion,
	} {
		if f := finding(t, r, host, "kernel-synack-wscale"); f.Source != src {
			t.Errorf("%s kernel-synack-wscale: source %q, want %q (%s)", host, f.Source, src, f.Reason)
		}
	}
	for _, h := range r.Hosts {
		if h.Name == "kafka-bookworm-03" && h.Score != 100 {
			t.Errorf("compliant host scored %d: %+v", h.Score, h.Deductions)
		}
	}
}

// writeInventory serves hosts and writes a kaudit inventory for them.
func writeInventory(t *testing.T, hosts []*simhost.Host, unreachable ...string) string {
	t.Helper()
	dir := t.TempDir()
	f, err := simhost.Start(dir, hosts, unreachable...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	var b strings.Builder
	fmt.Fprintf(&b, "defaults:\n  user: kafka\n  use_agent: false\n  identity_files: [%s]\n  known_hosts: [%s]\n  connect_timeout: 2s\nhosts:\n", f.KeyFile, f.KnownHosts)
	for _, h := range f.Hosts {
		fmt.Fprintf(&b, "  %s: {address: 127.0.0.1, port: %d}\n", h.Name, h.Port)
	}
	path := filepath.Join(dir, "inventory.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func compliant() *simhost.Host { return simhost.DemoFleet()[2] }

func TestInterruptReportsPartial(t *testing.T) {
	hang := simhost.DemoFleet()[0]
	hang.Name, hang.Fault = "hung", simhost.FaultHang
	inv := writeInventory(t, []*simhost.Host{compliant(), hang})
	out := filepath.Join(t.TempDir(), "partial.json")
	done := make(chan int, 1)
	go func() {
		code, _, _ := runCLI(t, "scan", inv, "-f", "json", "-o", out, "--timeout", "1m")
		done <- code
	}()
	time.Sleep(700 * time.Millisecond) // the compliant host is done, the hung one is waiting
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != ExitInterrupted {
			t.Fatalf("exit %d, want %d", code, ExitInterrupted)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ctrl-C did not stop the scan within 10s")
	}
	r, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted || r.Summary.Audited != 1 {
		t.Fatalf("interrupted=%v audited=%d", r.Interrupted, r.Summary.Audited)
	}
	for _, h := range r.Hosts {
		if h.Name == "hung" && (h.Error == nil || !strings.Contains(h.Error.Message, "interrupted")) {
			t.Errorf("hung host: %+v", h.Error)
		}
	}
}

// TestScanAnsibleInventory scans the simulated fleet through an Ansible
// YAML inventory as teams keep them (all/children/hosts, ansible_* vars,
// free-form vars ignored, kaudit_* vars honoured).
func TestScanAnsibleInventory(t *testing.T) {
	dir := t.TempDir()
	f, err := simhost.Start(dir, []*simhost.Host{compliant(), simhost.DemoFleet()[0]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	inv := fmt.Sprintf(`all:
  vars:
    ansible_user: kafka
    ansible_ssh_private_key_file: %s
    kaudit_known_hosts: [%s]
    kafka_heap_opts: "-Xmx6g"          # a free-form var: ignored
  children:
    kafka_brokers:
      children:
        east:
          hosts:
            broker-east-1: {ansible_host: 127.0.0.1, ansible_port: %d}
        west:
          hosts:
            broker-west-1: {ansible_host: 127.0.0.1, ansible_port: %d, broker_id: 7}
`, f.KeyFile, f.KnownHosts, f.Hosts[0].Port, f.Hosts[1].Port)
	path := filepath.Join(dir, "hosts.yml")
	if err := os.WriteFile(path, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "scan", path, "-f", "json", "--limit", "east")
	if code != ExitOK {
		t.Fatalf("east only (compliant): exit %d\n%s", code, errOut)
	}
	if r := decode(t, out); r.Summary.Hosts != 1 || r.Hosts[0].Name != "broker-east-1" || r.Hosts[0].Error != nil {
		t.Fatalf("east: %+v", r.Hosts)
	}
	code, out, _ = runCLI(t, "scan", path, "-f", "json")
	r := decode(t, out)
	if code != ExitFindings || r.Summary.Audited != 2 {
		t.Fatalf("whole inventory: exit %d, %+v", code, r.Summary)
	}
	for _, h := range r.Hosts {
		if !strings.Contains(strings.Join(h.Groups, ","), "kafka_brokers") {
			t.Errorf("%s groups %v lack the parent group", h.Name, h.Groups)
		}
	}
	if f := finding(t, r, "broker-west-1", "kafka-backlog-hardcoded"); f.Status != rules.Fail {
		t.Errorf("west (Kafka 2.8.1): %s", f.Status)
	}
}

func TestProfileOverrides(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "profile.yaml")
	_ = os.WriteFile(prof, []byte("somaxconn: 128\n"), 0o600)
	code, out, errOut := runCLI(t, "demo", "-f", "json", "--profile", prof)
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if f := finding(t, decode(t, out), "kafka-centos7-01", "somaxconn"); f.Status != rules.Pass {
		t.Errorf("--profile somaxconn: 128: centos somaxconn=128 is %s (%s)", f.Status, f.Reason)
	}
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(bad, []byte("somaxcon: 128\n"), 0o600)
	if code, _, errOut := runCLI(t, "demo", "--profile", bad); code != ExitUsage || !strings.Contains(errOut, "bad.yaml:1") {
		t.Errorf("unknown profile key: exit %d, %s", code, errOut)
	}
	// Per host in the inventory: only that host's threshold changes.
	inv := writeInventory(t, []*simhost.Host{simhost.DemoFleet()[0]})
	data, _ := os.ReadFile(inv)
	withProf := strings.Replace(string(data), "}\n", ", profile: {somaxconn: 128}}\n", 1)
	_ = os.WriteFile(inv, []byte(withProf), 0o600)
	code, out, errOut = runCLI(t, "scan", inv, "-f", "json")
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if f := finding(t, decode(t, out), "kafka-centos7-01", "somaxconn"); f.Status != rules.Pass {
		t.Errorf("inventory profile: somaxconn is %s", f.Status)
	}
	// A typo in an inventory profile is an inventory error before any connection.
	_ = os.WriteFile(inv, []byte(strings.Replace(withProf, "somaxconn: 128", "somaxcon: 128", 1)), 0o600)
	if code, _, errOut := runCLI(t, "scan", inv); code != ExitUsage || !strings.Contains(errOut, "somaxcon") {
		t.Errorf("bad inventory profile key: exit %d, %s", code, errOut)
	}
}

// Every report carries the version --version prints (a build without
// -ldflags left tool_version empty).
func TestReportCarriesToolVersion(t *testing.T) {
	_, out, _ := runCLI(t, "demo", "-f", "json")
	if r := decode(t, out); r.ToolVersion == "" || r.ToolVersion != toolVersion() {
		t.Errorf("tool_version %q, want %q", r.ToolVersion, toolVersion())
	}
}
