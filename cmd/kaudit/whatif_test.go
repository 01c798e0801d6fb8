package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/simhost"
)

// kaudit whatif's output, --fail-unsafe, -f json -o and usage errors are
// in testdata/script/whatif.txtar.

// emitWhatIf is what scan calls: it prints on stderr and leaves the report alone.
func TestEmitWhatIfHook(t *testing.T) {
	r, err := report.Load(reportFixture)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := json.Marshal(r)
	var stdout, stderr bytes.Buffer
	var a whatIfOpts
	app := &cli.App{Writer: &stdout, ErrWriter: &stderr, Commands: []*cli.Command{{
		Name: "x", Flags: a.flags(),
		Action: func(c *cli.Context) error {
			return pipeline.WriteWhatIf(&stderr, r, a.assume(), rules.DefaultProfile(), nil)
		},
	}}}
	if err := app.Run([]string{"kaudit", "x", "--assume-kernel", "6.1.0"}); err != nil {
		t.Fatal(err)
	}
	if stdout.Len() != 0 || !strings.Contains(stderr.String(), "What if: kernel 6.1.0") {
		t.Errorf("stdout %q\nstderr %s", stdout.String(), stderr.String())
	}
	if after, _ := json.Marshal(r); !bytes.Equal(before, after) {
		t.Error("the hook modified the report")
	}
	stderr.Reset()
	if err := app.Run([]string{"kaudit", "x"}); err != nil || stderr.Len() != 0 {
		t.Errorf("without flags: %v %q", err, stderr.String())
	}
}

// writePlannedInventory serves three simulated hosts and writes a kaudit
// inventory in which group east plans an upgrade (kafka-focal-02 opts out)
// and group west plans none.
func writePlannedInventory(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	fleet := simhost.DemoFleet()
	f, err := simhost.Start(dir, []*simhost.Host{fleet[0], fleet[1], fleet[2]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	port := map[string]int{}
	for _, h := range f.Hosts {
		port[h.Name] = h.Port
	}
	inv := fmt.Sprintf(`defaults:
  user: kafka
  use_agent: false
  identity_files: [%s]
  known_hosts: [%s]
  connect_timeout: 2s
groups:
  east:
    vars:
      assume_kernel: 6.1.0-13-amd64
      assume_kafka: "3.6.1"
    hosts:
      kafka-centos7-01: {address: 127.0.0.1, port: %d}
      kafka-focal-02: {address: 127.0.0.1, port: %d, assume_kernel: "", assume_kafka: ""}
  west:
    hosts:
      kafka-bookworm-03: {address: 127.0.0.1, port: %d}
`, f.KeyFile, f.KnownHosts, port["kafka-centos7-01"], port["kafka-focal-02"], port["kafka-bookworm-03"])
	path := filepath.Join(dir, "inventory.yaml")
	if err := os.WriteFile(path, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The inventory alone (no flag) triggers the what-if, for the hosts that plan an upgrade.
func TestScanWhatIfFromInventory(t *testing.T) {
	inv := writePlannedInventory(t)
	code, stdout, stderr := runCLI(t, "scan", inv, "-f", "json")
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if r := decode(t, stdout); r.Summary.Hosts != 3 {
		t.Errorf("the report on stdout has %d hosts", r.Summary.Hosts)
	}
	sections := whatIfSections(stderr)
	for _, want := range []string{
		"What if: upgrades planned per host (1 planned, 2 without)",
		"kernel 6.1.0-13-amd64 (inventory), Kafka 3.6.1 (inventory) on kafka-centos7-01",
		"no upgrade planned on kafka-focal-02, kafka-bookworm-03",
	} {
		if !strings.Contains(sections["head"], want) {
			t.Errorf("what-if header lacks %q:\n%s", want, stderr)
		}
	}
	// What the planned upgrade fixes on the east host; nothing on the others.
	fixes := sections["The upgrade would fix"]
	for _, rule := range []string{"kernel-synack-wscale", "kafka-backlog-hardcoded"} {
		if !hasRow(fixes, "kafka-centos7-01", rule, "fail → pass") {
			t.Errorf("fixes lack kafka-centos7-01 %s:\n%s", rule, fixes)
		}
	}
	for name, body := range sections {
		if name != "head" && (strings.Contains(body, "kafka-focal-02  ") || strings.Contains(body, "kafka-bookworm-03  ")) && name != "Safe to rolling-restart?" {
			t.Errorf("a host without a planned upgrade appears in %q:\n%s", name, body)
		}
	}
	// The opted-out host still counts in east's verdict, with its current findings.
	verdict := sections["Safe to rolling-restart?"]
	if !hasRow(verdict, "east ", "2", "NOT SAFE", "NOT SAFE") || !hasRow(verdict, "west ", "1", "SAFE", "SAFE") || hasRow(verdict, "west ", "NOT") {
		t.Errorf("verdicts:\n%s", verdict)
	}
	if !strings.Contains(stderr, "kafka-focal-02: kafka-backlog-hardcoded fail (no upgrade planned)") {
		t.Errorf("east's blockers lack the opted-out host:\n%s", stderr)
	}

	// A flag wins over the inventory, on every host: --assume-kernel replaces
	// east's kernel and plans one for the others; assume_kafka still applies.
	code, _, stderr = runCLI(t, "scan", inv, "-f", "json", "--assume-kernel", "5.4.0-150-generic")
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sections = whatIfSections(stderr)
	for _, want := range []string{
		"What if: upgrades planned per host (3 planned, 0 without)",
		"kernel 5.4.0-150-generic (--assume-kernel), Kafka 3.6.1 (inventory) on kafka-centos7-01",
		"kernel 5.4.0-150-generic (--assume-kernel) on kafka-focal-02, kafka-bookworm-03",
	} {
		if !strings.Contains(sections["head"], want) {
			t.Errorf("what-if header lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "6.1.0-13-amd64 (inventory)") || hasRow(stderr, "kafka-centos7-01", "kernel.release", "6.1.0-13-amd64") {
		t.Errorf("the inventory kernel survived --assume-kernel:\n%s", stderr)
	}
	// Both flags: one plan for all, reported as before.
	_, _, stderr = runCLI(t, "scan", inv, "-f", "json", "--assume-kernel", "6.1.0", "--assume-kafka", "3.7.0")
	if !strings.Contains(stderr, "What if: kernel 6.1.0, Kafka 3.7.0\n") || strings.Contains(stderr, "(inventory)") {
		t.Errorf("both flags:\n%s", stderr)
	}
	// Without a plan anywhere, scan prints no what-if.
	plain := writeInventory(t, []*simhost.Host{compliant()})
	if _, _, stderr := runCLI(t, "scan", plain, "-f", "json"); strings.Contains(stderr, "What if") {
		t.Errorf("what-if without a plan:\n%s", stderr)
	}
}

// whatIfSections splits the what-if table into its titled sections ("head"
// is everything up to the first one), titles without the "(N)" count.
func whatIfSections(out string) map[string]string {
	i := strings.Index(out, "What if:")
	if i < 0 {
		return map[string]string{}
	}
	secs := map[string]string{}
	name := "head"
	for _, l := range strings.Split(out[i:], "\n") {
		if l != "" && !strings.HasPrefix(l, " ") {
			if j := strings.Index(l, " ("); j > 0 && !strings.HasPrefix(l, "What if") {
				name = l[:j]
			}
		}
		secs[name] += l + "\n"
	}
	return secs
}

// hasRow reports whether some line of table holds every cell, in order.
func hasRow(table string, cells ...string) bool {
	for _, l := range strings.Split(table, "\n") {
		rest, ok := l, true
		for _, c := range cells {
			j := strings.Index(rest, c)
			if j < 0 {
				ok = false
				break
			}
			rest = rest[j+len(c):]
		}
		if ok {
			return true
		}
	}
	return false
}

// The hook with inventory hosts and no flag: planned hosts only.
func TestEmitWhatIfHookInventory(t *testing.T) {
	r, err := report.Load(reportFixture)
	if err != nil {
		t.Fatal(err)
	}
	hosts := []inventory.Host{{Name: r.Hosts[0].Name, AssumeKafka: "3.6.1"}}
	var stdout, stderr bytes.Buffer
	var a whatIfOpts
	app := &cli.App{Writer: &stdout, ErrWriter: &stderr, Commands: []*cli.Command{{
		Name: "x", Flags: a.flags(),
		Action: func(c *cli.Context) error {
			return pipeline.WriteWhatIf(&stderr, r, a.assume(), rules.DefaultProfile(), hosts)
		},
	}}}
	if err := app.Run([]string{"kaudit", "x"}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("What if: upgrades planned per host (1 planned, %d without)", len(r.Hosts)-1)
	if !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "Kafka 3.6.1 (inventory) on "+r.Hosts[0].Name+"\n") {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
}
