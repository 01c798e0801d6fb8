package pipeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/probe"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/simhost"
)

// bookworm is the demo's Debian 12 broker (6.1.0-13: fixed by the version
// table), as name on boot id with a kernel that answers the probe so.
func bookworm(t *testing.T, name, bootID string, answer simhost.ProbeAnswer) *simhost.Host {
	t.Helper()
	for _, h := range simhost.DemoFleet() {
		if h.Name == "kafka-bookworm-03" {
			h.Name, h.BootID, h.Probe = name, bootID, &answer
			// SO_RCVBUF set, as Kafka's default: exposed when the kernel is not fixed.
			h.Kafka.ConfigBody = strings.Replace(h.Kafka.ConfigBody, "socket.receive.buffer.bytes=-1", "socket.receive.buffer.bytes=102400", 1)
			return h
		}
	}
	t.Fatal("no kafka-bookworm-03 in the demo fleet")
	return nil
}

// The probe's truth reaches fix: a kernel whose release reads fixed but
// whose probe proved the bug on this boot gets tcp_syncookies=0 planned by
// a fix that runs no probe; its stock twin never does; after a reboot the
// record is stale and says so, and a "fixed" release that the same
// release's earlier probe contradicted is not believed (unknown, cookies
// still off).
func TestFixUsesTheProbesVerdictOfThisBoot(t *testing.T) {
	reverted := bookworm(t, "reverted", "11111111-1111-4111-8111-111111111111", simhost.ProbeAnswer{Client: 1, Server: 7, Python: "3.11.2 /usr/bin/python3"})
	stock := bookworm(t, "stock", "22222222-2222-4222-8222-222222222222", simhost.ProbeAnswer{Client: 7, Server: 7, Python: "3.11.2 /usr/bin/python3"})
	f := startFleet(t, []*simhost.Host{reverted, stock})
	at := time.Date(2026, 12, 5, 10, 2, 0, 0, time.UTC)
	clock := at
	recs := &probe.Records{Dir: t.TempDir() + "/probes", Now: func() time.Time { return clock }}
	scan := func(withProbe bool) *report.Report {
		t.Helper()
		cfg := pipeline.Config{Concurrency: 2, Timeout: 20 * time.Second, ConnectTimeout: 5 * time.Second, Profile: rules.DefaultProfile(),
			ProbeRecords: recs, ProbeRecordsErr: func(err error) { t.Errorf("probe records: %v", err) }}
		if withProbe {
			cfg.Probe = &probe.Options{Budget: 2 * time.Second}
		}
		r, err := pipeline.Audit(context.Background(), f.Hosts, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cookies := func(r *report.Report, host string) *remediate.Change {
		t.Helper()
		for _, p := range pipeline.PlanFix(r, f.Hosts, remediate.Selector{}, nil).Plans {
			for i, c := range p.Changes {
				if p.Host == host && c.Target == rules.KeySyncookies {
					return &p.Changes[i]
				}
			}
		}
		return nil
	}

	// Without any probe: the version table says fixed for both.
	r := scan(false)
	for _, h := range []string{"reverted", "stock"} {
		if fd := finding(t, r, h, rules.RuleKernelSynackWscale); fd.Status != rules.Pass || fd.Source != rules.SourceVersion {
			t.Fatalf("%s before any probe: %s by %s", h, fd.Status, fd.Source)
		}
	}
	// scan --probe proves the bug on reverted, the fix on stock, and keeps both.
	r = scan(true)
	if fd := finding(t, r, "reverted", rules.RuleKernelSynackWscale); fd.Status != rules.Fail || fd.Source != rules.SourceProbe {
		t.Fatalf("reverted with the probe: %s by %s", fd.Status, fd.Source)
	}

	// A minute later, fix without --probe: as the probe proved it.
	clock = at.Add(time.Minute)
	r = scan(false)
	fd := finding(t, r, "reverted", rules.RuleKernelSynackWscale)
	if fd.Status != rules.Fail || fd.Source != rules.SourceProbe || !strings.Contains(fd.Reason, "proven by probe at 2026-12-05 10:02 UTC on this boot (boot id 11111111…, 1m0s before this gather") {
		t.Fatalf("reverted, recorded probe: %s by %s: %s", fd.Status, fd.Source, fd.Reason)
	}
	if st := finding(t, r, "stock", rules.RuleKernelSynackWscale); st.Status != rules.Pass || st.Source != rules.SourceProbe {
		t.Fatalf("stock, recorded probe: %s by %s", st.Status, st.Source)
	}
	c := cookies(r, "reverted")
	if c == nil || c.To != "0" || !strings.Contains(c.Note, remediate.SyncookiesTradeOff) {
		t.Fatalf("reverted: tcp_syncookies change %+v, want to 0 with its trade-off", c)
	}
	if c := cookies(r, "stock"); c != nil && c.To == "0" {
		t.Fatalf("stock: cookies turned off on a kernel the probe proved fixed: %+v", c)
	}

	// Reboot both (new boot ids, same kernels): the records are stale.
	reverted.BootID, stock.BootID = "33333333-3333-4333-8333-333333333333", "44444444-4444-4444-8444-444444444444"
	r = scan(false)
	fd = finding(t, r, "reverted", rules.RuleKernelSynackWscale)
	if fd.Status != rules.Unknown || !strings.Contains(fd.Reason, "found the bug on an earlier boot of this kernel (boot id 11111111…)") || !strings.Contains(fd.Reason, "run kaudit probe to settle this boot") {
		t.Fatalf("reverted after a reboot: %s by %s: %s", fd.Status, fd.Source, fd.Reason)
	}
	if c := cookies(r, "reverted"); c == nil || c.To != "0" || !strings.Contains(c.Note, "could not be settled as fixed") {
		t.Fatalf("reverted after a reboot: tcp_syncookies change %+v, want to 0 (unknown kernel)", c)
	}
	st := finding(t, r, "stock", rules.RuleKernelSynackWscale)
	if st.Status != rules.Pass || st.Source != rules.SourceVersion || !strings.Contains(st.Reason, "stale probe record") || !strings.Contains(st.Reason, "the verdict above is the version table's") {
		t.Fatalf("stock after a reboot: %s by %s: %s", st.Status, st.Source, st.Reason)
	}
}
