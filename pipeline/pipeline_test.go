package pipeline_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/simhost"
)

func startFleet(t testing.TB, hosts []*simhost.Host, unreachable ...string) *simhost.Fleet {
	t.Helper()
	f, err := simhost.Start(t.TempDir(), hosts, unreachable...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

func status(t *testing.T, r *report.Report, host, rule string) rules.Status {
	t.Helper()
	return finding(t, r, host, rule).Status
}

func finding(t *testing.T, r *report.Report, host, rule string) rules.Finding {
	t.Helper()
	f, ok := r.Finding(host, rule)
	if !ok {
		t.Fatalf("no finding %s on %s", rule, host)
	}
	return f
}

// Audit over real SSH to the demo fleet: every host in the report, findings
// evaluated, the unreachable host a value, the config recorded.
func TestScanDemoFleet(t *testing.T) {
	f := startFleet(t, simhost.DemoFleet(), "kafka-down-08")
	at := time.Date(2026, 12, 1, 8, 0, 0, 123456789, time.UTC)
	var done atomic.Int32
	r, err := pipeline.Audit(context.Background(), f.Hosts, pipeline.Config{
		Concurrency: 4, Timeout: 20 * time.Second, ConnectTimeout: 5 * time.Second,
		Profile: rules.DefaultProfile(), FailOn: rules.Medium, ToolVersion: "test-1",
		Progress: func(audit.Result) { done.Add(1) },
		Now:      func() time.Time { return at },
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary.Hosts != 10 || r.Summary.Audited != 9 || r.Summary.Unreachable != 1 || r.Interrupted {
		t.Fatalf("summary %+v interrupted %v", r.Summary, r.Interrupted)
	}
	if r.ToolVersion != "test-1" || r.FailOn != "medium" || !r.StartedAt.Equal(at.Truncate(time.Millisecond)) || r.DurationMS != 0 {
		t.Errorf("header: %q %q %v %d", r.ToolVersion, r.FailOn, r.StartedAt, r.DurationMS)
	}
	if n := done.Load(); n != 10 {
		t.Errorf("progress called %d times, want 10", n)
	}
	for host, want := range map[string]rules.Status{"kafka-centos7-01": rules.Fail, "kafka-bookworm-03": rules.Pass, "kafka-rhel8-04": rules.Unknown} {
		if got := status(t, r, host, "kernel-synack-wscale"); got != want {
			t.Errorf("%s kernel-synack-wscale: %s, want %s", host, got, want)
		}
	}
	// The fleet pass: the producer's side of the talk's broker's connections.
	for _, c := range []struct{ host, rule, observed string }{
		{"kafka-centos7-01", rules.RuleReconnectStorm, "1,840 clients on :9092 vs an effective backlog of 50: a restart sends ~37× the SYNs the queue holds"},
		{"kafka-centos7-01", rules.RuleClientWscaleMismatch, "3 connections matched from 1 client hosts, 1 with mismatched scale; 1 not matched"},
		{"kafka-focal-02", rules.RuleClientWscaleMismatch, "1 connections matched from 1 client hosts, 0 with mismatched scale"},
	} {
		if got := finding(t, r, c.host, c.rule).Observed; got != c.observed {
			t.Errorf("%s %s: %q, want %q", c.host, c.rule, got, c.observed)
		}
	}
	if got := status(t, r, "producer-10", rules.RuleKafkaBacklogHardcoded); got != rules.Skip {
		t.Errorf("producer-10: broker rule %s", got)
	}
	down := r.Hosts[len(r.Hosts)-1]
	if down.Name != "kafka-down-08" || down.Error == nil || down.Error.Kind != "unreachable" || len(down.Findings) != 0 || down.Score != 0 {
		t.Errorf("unreachable host: %+v", down)
	}
}

// A bad per-host profile override is an error before any connection.
func TestScanProfileError(t *testing.T) {
	hosts := []inventory.Host{{Name: "h1", Address: "192.0.2.1", Source: "inv.yaml:7", Profile: map[string]any{"no_such_threshold": 1}}}
	called := false
	_, err := pipeline.Audit(context.Background(), hosts, pipeline.Config{Profile: rules.DefaultProfile(), Progress: func(audit.Result) { called = true }})
	var pe *pipeline.ProfileError
	if !errors.As(err, &pe) || pe.Host != "h1" || !strings.HasPrefix(err.Error(), "inv.yaml:7: host h1: profile: ") {
		t.Fatalf("err %v", err)
	}
	if called {
		t.Error("a host was scanned despite the bad profile")
	}
}

// A context that ends mid-scan: the report covers what was gathered and
// is marked interrupted.
func TestScanInterrupted(t *testing.T) {
	hang := simhost.DemoFleet()[0]
	hang.Name, hang.Fault = "hung", simhost.FaultHang
	f := startFleet(t, []*simhost.Host{simhost.DemoFleet()[2], hang})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := pipeline.Audit(ctx, f.Hosts, pipeline.Config{
		Concurrency: 2, Timeout: time.Minute, ConnectTimeout: 5 * time.Second, Profile: rules.DefaultProfile(),
		Progress: func(res audit.Result) {
			if res.Err == nil {
				cancel() // the compliant host is done; the hung one waits
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted || r.Summary.Audited != 1 || r.Summary.Hosts != 2 {
		t.Fatalf("interrupted=%v summary %+v", r.Interrupted, r.Summary)
	}
}

func TestPlanFix(t *testing.T) {
	f := startFleet(t, simhost.DemoFleet(), "kafka-down-08")
	r, err := pipeline.Audit(context.Background(), f.Hosts, pipeline.Config{Concurrency: 8, Timeout: 20 * time.Second, ConnectTimeout: 5 * time.Second, Profile: rules.DefaultProfile()})
	if err != nil {
		t.Fatal(err)
	}
	fp := pipeline.PlanFix(r, f.Hosts, remediate.Selector{}, nil)
	if len(fp.Plans) != 9 || len(fp.Hosts) != 9 || len(fp.Unaudited) != 1 || fp.Unaudited[0].Name != "kafka-down-08" {
		t.Fatalf("plans %d, hosts %d, unaudited %+v", len(fp.Plans), len(fp.Hosts), fp.Unaudited)
	}
	planned := 0
	for i, p := range fp.Plans {
		planned += len(p.Changes)
		h := fp.Hosts[i]
		if h.Inv.Name != p.Host || h.Inv.Address == "" || h.Plan.Host != p.Host || h.Facts == nil || len(h.Findings) == 0 {
			t.Errorf("host %d: %s for plan %s (address %q)", i, h.Inv.Name, p.Host, h.Inv.Address)
		}
	}
	// The compliant host has nothing to change; the demo plans nothing apply skips.
	if fp.Changing != 7 || len(fp.Skipped) != 0 || fp.Changes != planned || planned == 0 {
		t.Errorf("changes %d of %d planned on %d hosts, skipped %+v", fp.Changes, planned, fp.Changing, fp.Skipped)
	}
	// The host that could not be audited is named, with why, and never
	// counted as having nothing to change.
	var plan, applying strings.Builder
	pipeline.WritePlan(&plan, r, remediate.Selector{Rules: []string{"window-scaling"}}, nil, 0)
	pipeline.WriteFixPlan(&applying, pipeline.PlanFix(r, f.Hosts, remediate.Selector{Rules: []string{"window-scaling"}}, nil), 0)
	for _, out := range []string{plan.String(), applying.String()} {
		if !strings.HasPrefix(out, "kafka-down-08: not audited (unreachable: ") || !strings.HasSuffix(out, "nothing to change on 9 audited hosts; 1 host not audited: no plan for it; nothing changed\n") {
			t.Errorf("plan with an unaudited host:\n%s", out)
		}
	}
	// Confluent 7.1.7 has socket.listen.backlog.size backported: one line of server.properties.
	for _, p := range fp.Plans {
		if p.Host != "kafka-cp717-09" {
			continue
		}
		var got []string
		for _, c := range p.Changes {
			got = append(got, c.Target+"="+c.To+"@"+c.PersistPath)
		}
		if !slices.Contains(got, "socket.listen.backlog.size=4096@/etc/kafka/server.properties") || len(p.Manual) != 0 {
			t.Errorf("CP 7.1.7 plan: changes %v, manual %+v", got, p.Manual)
		}
	}
	// --rules narrows the plan.
	fp = pipeline.PlanFix(r, f.Hosts, remediate.Selector{Rules: []string{"somaxconn"}}, nil)
	if fp.Changing != 3 {
		t.Errorf("somaxconn only: %d hosts change, want 3 (centos7, rhel8, bionic)", fp.Changing)
	}
}

func TestFailedHosts(t *testing.T) {
	j := &remediate.Journal{Hosts: []remediate.HostJournal{
		{Host: "a", Status: remediate.StatusVerified},
		{Host: "b", Status: remediate.StatusRolledBack},
		{Host: "c", Status: remediate.StatusFailed},
		{Host: "d", Status: remediate.StatusUnchanged},
		{Host: "e", Status: remediate.StatusUnchanged, Error: "already as planned: nothing to do", NoOp: true},
		{Host: "f", Status: remediate.StatusUnchanged, Error: "connect: connection refused"},
	}}
	if n := pipeline.FailedHosts(j); n != 3 {
		t.Errorf("FailedHosts = %d, want 3 (b, c, f)", n)
	}
}

func TestRollbackTargets(t *testing.T) {
	j := &remediate.Journal{Hosts: []remediate.HostJournal{
		{Host: "a", Backups: []remediate.Backup{{Path: "/etc/sysctl.d/99-kaudit.conf"}}},
		{Host: "b", Runtime: []remediate.RuntimeValue{{Key: "net.core.somaxconn"}}},
		{Host: "c"},
		{Host: "d", Backups: []remediate.Backup{{Path: "/x"}}},
	}}
	hosts := []inventory.Host{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	if n := pipeline.RollbackTargets(j, hosts); n != 2 {
		t.Errorf("RollbackTargets = %d, want 2 (a, b: d is not selected, c changed nothing)", n)
	}
}

func TestLoadRun(t *testing.T) {
	dir := t.TempDir()
	id := "20260101T000000Z-00000002"
	cfg := pipeline.RollbackConfig{JournalPath: filepath.Join(dir, id+".json")}
	if _, err := pipeline.LoadRun(context.Background(), nil, id, false, cfg); !errors.Is(err, pipeline.ErrNoJournal) {
		t.Errorf("no journal: %v", err)
	}
	j := &remediate.Journal{RunID: id, Hosts: []remediate.HostJournal{{Host: "a"}}}
	if err := j.Save(cfg.JournalPath); err != nil {
		t.Fatal(err)
	}
	run, err := pipeline.LoadRun(context.Background(), nil, id, false, cfg)
	if err != nil || run.Rebuilt || run.Journal.RunID != id || len(run.Journal.Hosts) != 1 {
		t.Errorf("local journal: %+v %v", run, err)
	}
	if _, err := pipeline.LoadRun(context.Background(), nil, id, true, cfg); !errors.Is(err, pipeline.ErrJournalExists) {
		t.Errorf("--from-hosts with a local journal: %v", err)
	}
	other := "20260101T000000Z-00000003"
	var mm *pipeline.RunMismatchError
	_, err = pipeline.LoadRun(context.Background(), nil, other, false, cfg)
	if !errors.As(err, &mm) || mm.Got != id || err.Error() != cfg.JournalPath+" holds run "+id+", not "+other {
		t.Errorf("another run's journal: %v", err)
	}
}

func TestParseSelector(t *testing.T) {
	sel, err := pipeline.ParseSelector(" somaxconn, ,syn-backlog")
	if err != nil || len(sel.Rules) != 2 || sel.Rules[0] != "somaxconn" || sel.Rules[1] != "syn-backlog" {
		t.Errorf("ParseSelector = %+v, %v", sel, err)
	}
	var ue *pipeline.UnknownRuleError
	if _, err := pipeline.ParseSelector("somaxconn,nope"); !errors.As(err, &ue) || ue.ID != "nope" || err.Error() != `no rule "nope"` {
		t.Errorf("unknown rule: %v", err)
	}
}
