package remediate

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/remediate/sysctld"
	"github.com/kaudit/kaudit/rules"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

const serverProps = "/opt/kafka/config/server.properties"

// hostFacts is a Kafka 2.8 broker on an unfixed Debian 4.19 kernel with
// small queues, a 512-slot ring and GRO off.
func hostFacts() *facts.Facts {
	return &facts.Facts{
		KafkaPort: 9092,
		Kernel:    facts.Kernel{Release: "4.19.0-12-amd64", Distro: "debian"},
		Sysctl: map[string]string{
			keySyncookies:                 "1",
			keySomaxconn:                  "128",
			keySynBacklog:                 "512",
			"net.core.rmem_max":           "212992",
			"net.ipv4.tcp_rmem":           "4096 131072 6291456",
			"net.ipv4.tcp_timestamps":     "1",
			"net.ipv4.tcp_window_scaling": "1",
		},
		Persisted: map[string]facts.PersistedSysctl{
			"net.ipv4.tcp_timestamps": {Value: "0", File: "/etc/sysctl.d/10-hardening.conf", Line: 4},
		},
		Listeners: []facts.Listener{{Addr: "0.0.0.0", Port: 9092, Backlog: 50}},
		Kafka: &facts.Kafka{
			Version: "2.8.1", Distribution: "apache", Config: serverProps,
			Properties: map[string]string{propRcvbuf: "102400"},
		},
		NICs: []facts.NIC{{
			Name: "eth0", Driver: "ixgbe",
			Ring: &facts.Ring{RXMax: 4096, TXMax: 2048, RX: 512, TX: 512},
			Features: map[string]facts.Feature{
				"tso": {On: true}, "gso": {On: true}, "gro": {On: false}, "lro": {On: false, Fixed: true},
			},
		}},
	}
}

func kernelFinding(status rules.Status) rules.Finding {
	return rules.Finding{
		Rule: ruleKernel, Status: status, Severity: rules.Critical,
		Fix: &rules.Fix{
			Summary: "disable SYN cookies until the kernel is upgraded",
			Sysctl:  map[string]string{keySyncookies: "0"},
			Manual:  "upgrade the kernel to a release with commit 909172a (Debian: 4.19.160-2 or later)",
			// as rules' kernel-synack-wscale: planned while unknown; the
			// socket.receive.buffer.bytes=-1 alternative offered (in the
			// planner's words: no text of its own)
			Alternatives: []rules.Alternative{{KafkaProperties: map[string]string{propRcvbuf: "-1"}, Restart: true, Offer: true}},
			WhenUnknown:  true,
		},
	}
}

func fail(rule string, fx rules.Fix) rules.Finding {
	return rules.Finding{Rule: rule, Status: rules.Fail, Severity: rules.Medium, Fix: &fx}
}

// atLeast marks keys as lower bounds, as the rules' fixes do.
func atLeast(keys ...string) map[string]rules.Bound {
	m := map[string]rules.Bound{}
	for _, k := range keys {
		m[k] = rules.Bound{Dir: rules.AtLeast}
	}
	return m
}

var (
	somaxconnF  = fail("somaxconn", rules.Fix{Sysctl: map[string]string{keySomaxconn: "4096"}, Bounds: atLeast(keySomaxconn)})
	effectiveF  = fail("listen-backlog-effective", rules.Fix{Sysctl: map[string]string{keySomaxconn: "1024"}, KafkaProperties: map[string]string{propBacklog: "1024"}, Bounds: atLeast(keySomaxconn, propBacklog)})
	hardcodedF  = fail("kafka-backlog-hardcoded", rules.Fix{Manual: "upgrade Kafka to ≥ 3.2 (KIP-764): before 3.2 the listen backlog is fixed at 50", KafkaProperties: map[string]string{propBacklog: "4096"}, Bounds: atLeast(propBacklog)})
	backlogCfgF = fail("kafka-backlog-config", rules.Fix{KafkaProperties: map[string]string{propBacklog: "4096"}, Restart: true, Bounds: atLeast(propBacklog)})
	synBacklogF = fail("syn-backlog", rules.Fix{Sysctl: map[string]string{keySynBacklog: "8192"}, Bounds: atLeast(keySynBacklog)})
	buffersF    = fail("socket-buffers", rules.Fix{Sysctl: map[string]string{"net.core.rmem_max": "134217728", "net.ipv4.tcp_rmem": "4096 87380 134217728"},
		Bounds: map[string]rules.Bound{"net.core.rmem_max": {Dir: rules.AtLeast}, "net.ipv4.tcp_rmem": {Dir: rules.AtLeast, Field: 3}}})
	persistedF   = fail("sysctl-persisted", rules.Fix{Sysctl: map[string]string{"net.ipv4.tcp_timestamps": "1"}})
	ringF        = fail("nic-ring", rules.Fix{NIC: map[string]map[string]string{"eth0": {"rx": "8192", "tx": "4096"}}})
	offloadF     = fail("nic-offload", rules.Fix{NIC: map[string]map[string]string{"eth0": {"gro": "on", "lro": "on", "tso": "on"}}})
	cookiesFired = fail("syncookies-fired", rules.Fix{Sysctl: map[string]string{keySyncookies: "0"}})
)

func allFindings(kernel rules.Status) []rules.Finding {
	return []rules.Finding{kernelFinding(kernel), somaxconnF, effectiveF, hardcodedF, synBacklogF, buffersF, persistedF, ringF, offloadF}
}

func find(p HostPlan, kind ChangeKind, target string) *Change {
	for i := range p.Changes {
		if p.Changes[i].Kind == kind && p.Changes[i].Target == target {
			return &p.Changes[i]
		}
	}
	return nil
}

func hasText(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func manualTexts(p HostPlan) []string {
	var out []string
	for _, m := range p.Manual {
		out = append(out, strings.Join(m.Rules, ",")+": "+m.Action)
	}
	return out
}

func TestPlanHost(t *testing.T) {
	for _, tc := range []struct {
		name     string
		facts    func(*facts.Facts)
		findings []rules.Finding
		sel      Selector
		check    func(t *testing.T, p HostPlan)
	}{
		{
			name:     "affected kernel, Kafka 2.8: cookies off, backlog cannot grow",
			findings: allFindings(rules.Fail),
			check: func(t *testing.T, p HostPlan) {
				c := find(p, KindSysctl, keySyncookies)
				if c == nil || c.To != "0" || c.From != "1" || !c.Runtime || !c.Persist || c.PersistPath != sysctld.ManagedPath {
					t.Fatalf("syncookies change: %+v", c)
				}
				if !strings.Contains(c.Note, "SYNs are dropped instead of answered with cookies while the queue is full; clients retry after ~1 s") {
					t.Errorf("trade-off missing from note: %q", c.Note)
				}
				if find(p, KindKafkaProperty, propBacklog) != nil {
					t.Error("socket.listen.backlog.size planned on Kafka 2.8")
				}
				if !hasText(manualTexts(p), "kafka-backlog-hardcoded: upgrade Kafka to ≥ 3.2 (KIP-764)") {
					t.Errorf("the Fix's upgrade text is not a manual action: %v", manualTexts(p))
				}
				if !hasText(p.Warnings, "listen backlog stays at 50") {
					t.Errorf("no warning that the backlog stays at 50: %v", p.Warnings)
				}
				if !hasText(manualTexts(p), "socket.receive.buffer.bytes=-1") {
					t.Errorf("rcvbuf alternative not offered: %v", manualTexts(p))
				}
				for _, c := range p.Changes {
					if c.Target == propRcvbuf {
						t.Errorf("socket.receive.buffer.bytes changed: %+v", c)
					}
				}
			},
		},
		{
			name:     "kernel rule not evaluated: never syncookies=0, and the warning says so",
			findings: []rules.Finding{cookiesFired, somaxconnF},
			check: func(t *testing.T, p HostPlan) {
				if c := find(p, KindSysctl, keySyncookies); c != nil {
					t.Fatalf("syncookies planned without the kernel rule: %+v", c)
				}
				if !hasText(p.Warnings, "kernel-synack-wscale is not evaluated, and on a fixed kernel") {
					t.Errorf("warnings: %v", p.Warnings)
				}
			},
		},
		{
			name:     "fixed kernel: never syncookies=0, whoever asks",
			findings: []rules.Finding{kernelFinding(rules.Pass), cookiesFired, somaxconnF},
			check: func(t *testing.T, p HostPlan) {
				if c := find(p, KindSysctl, keySyncookies); c != nil {
					t.Fatalf("syncookies planned on a fixed kernel: %+v", c)
				}
				if !hasText(p.Warnings, "not disabling SYN cookies (syncookies-fired asks") {
					t.Errorf("warnings: %v", p.Warnings)
				}
				if find(p, KindSysctl, keySomaxconn) == nil {
					t.Error("somaxconn not planned")
				}
			},
		},
		{
			name:     "kernel rule not evaluated: no syncookies=0",
			findings: []rules.Finding{cookiesFired},
			check: func(t *testing.T, p HostPlan) {
				if find(p, KindSysctl, keySyncookies) != nil || !hasText(p.Warnings, "kernel-synack-wscale is not evaluated") {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name:     "kernel warn status is not actionable",
			findings: []rules.Finding{func() rules.Finding { f := kernelFinding(rules.Warn); return f }()},
			check: func(t *testing.T, p HostPlan) {
				if len(p.Changes) != 0 || len(p.Manual) != 0 {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "unknown kernel, Kafka 3.5: cookies off pulls in the backlog fixes",
			facts: func(f *facts.Facts) {
				f.Kafka.Version = "3.5.1"
			},
			findings: []rules.Finding{kernelFinding(rules.Unknown), somaxconnF, backlogCfgF, synBacklogF, buffersF},
			sel:      Selector{Rules: []string{ruleKernel}},
			check: func(t *testing.T, p HostPlan) {
				c := find(p, KindSysctl, keySyncookies)
				if c == nil || !strings.Contains(c.Note, "could not be settled") {
					t.Fatalf("syncookies change: %+v", c)
				}
				s := find(p, KindSysctl, keySomaxconn)
				if s == nil || s.To != "4096" || !strings.Contains(s.Note, "included because tcp_syncookies=0") || !s.RestartRequired {
					t.Errorf("somaxconn not pulled in: %+v", s)
				}
				k := find(p, KindKafkaProperty, propBacklog)
				if k == nil || k.To != "4096" || !k.RestartRequired || k.PersistPath != serverProps || k.Runtime || !k.Persist || k.From != "" {
					t.Errorf("backlog property: %+v", k)
				}
				if find(p, KindSysctl, keySynBacklog) == nil {
					t.Error("tcp_max_syn_backlog not pulled in")
				}
				if find(p, KindSysctl, "net.core.rmem_max") != nil {
					t.Error("unselected, unrelated rule planned")
				}
				if hasText(p.Warnings, "listen backlog stays") {
					t.Errorf("backlog warning although it grows: %v", p.Warnings)
				}
			},
		},
		{
			name: "cookies off, backlog already large enough: no warning",
			facts: func(f *facts.Facts) {
				f.Kafka.Version = "3.5.1"
				f.Sysctl[keySomaxconn] = "4096"
				f.Kafka.Properties[propBacklog] = "4096"
				f.Listeners[0].Backlog = 4096
			},
			findings: []rules.Finding{kernelFinding(rules.Fail), {Rule: ruleListenEffective, Status: rules.Pass}},
			check: func(t *testing.T, p HostPlan) {
				if find(p, KindSysctl, keySyncookies) == nil || len(p.Warnings) != 0 {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "cookies off, Kafka version unknown",
			facts: func(f *facts.Facts) {
				f.Kafka.Version = ""
			},
			findings: []rules.Finding{kernelFinding(rules.Fail), backlogCfgF},
			check: func(t *testing.T, p HostPlan) {
				if find(p, KindKafkaProperty, propBacklog) != nil {
					t.Error("property planned without a version")
				}
				if !hasText(manualTexts(p), "could not be read") || !hasText(p.Warnings, "no larger listen backlog could be planned") {
					t.Errorf("manual %v warnings %v", manualTexts(p), p.Warnings)
				}
			},
		},
		{
			name:     "dedup: two rules, one change, the higher target",
			facts:    func(f *facts.Facts) { f.Kafka = nil },
			findings: []rules.Finding{effectiveF, somaxconnF, fail("other", rules.Fix{Sysctl: map[string]string{"net.ipv4.tcp_rmem": "8192 65536 16777216"}, Bounds: atLeast("net.ipv4.tcp_rmem")}), buffersF},
			check: func(t *testing.T, p HostPlan) {
				n := 0
				for _, c := range p.Changes {
					if c.Target == keySomaxconn {
						n++
					}
				}
				c := find(p, KindSysctl, keySomaxconn)
				if n != 1 || c.To != "4096" || strings.Join(c.Rules, ",") != "listen-backlog-effective,somaxconn" || c.RestartRequired {
					t.Fatalf("somaxconn: %d changes, %+v", n, c)
				}
				if r := find(p, KindSysctl, "net.ipv4.tcp_rmem"); r == nil || r.To != "8192 65536 134217728" {
					t.Errorf("tcp_rmem merged field by field (socket-buffers bounds only the third): %+v", r)
				}
				if !hasText(manualTexts(p), "no Kafka broker found") {
					t.Errorf("manual: %v", manualTexts(p))
				}
			},
		},
		{
			name:     "two exact values: a conflict, nothing planned (no first pick)",
			findings: []rules.Finding{fail("a", rules.Fix{Sysctl: map[string]string{"net.ipv4.tcp_congestion_control": "bbr"}}), fail("b", rules.Fix{Sysctl: map[string]string{"net.ipv4.tcp_congestion_control": "cubic"}})},
			check: func(t *testing.T, p HostPlan) {
				if c := find(p, KindSysctl, "net.ipv4.tcp_congestion_control"); c != nil || len(p.Conflicts) != 1 || !slices.Equal(p.Conflicts[0].Rules, []string{"a", "b"}) ||
					!strings.Contains(p.Conflicts[0].Reason, "no value satisfies a: exactly bbr and b: exactly cubic") {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name:     "runtime fine, boot value wrong: persist only",
			findings: []rules.Finding{persistedF},
			check: func(t *testing.T, p HostPlan) {
				c := find(p, KindSysctl, "net.ipv4.tcp_timestamps")
				if c == nil || c.Runtime || !c.Persist || c.From != "1" {
					t.Fatalf("change %+v", c)
				}
			},
		},
		{
			name: "already right at runtime and at boot: nothing",
			facts: func(f *facts.Facts) {
				f.Sysctl[keySomaxconn] = "4096"
				f.Persisted[keySomaxconn] = facts.PersistedSysctl{Value: "4096", File: "/etc/sysctl.d/50-kafka.conf"}
			},
			findings: []rules.Finding{somaxconnF},
			check: func(t *testing.T, p HostPlan) {
				if len(p.Changes) != 0 {
					t.Fatalf("changes %+v", p.Changes)
				}
			},
		},
		{
			name: "a later file overrides the managed file: warned",
			facts: func(f *facts.Facts) {
				f.Persisted[keySomaxconn] = facts.PersistedSysctl{Value: "128", File: "/etc/sysctl.d/99-sysctl.conf", Line: 7}
			},
			findings: []rules.Finding{somaxconnF},
			check: func(t *testing.T, p HostPlan) {
				if !hasText(p.Warnings, "net.core.somaxconn: /etc/sysctl.d/99-sysctl.conf line 7 sets 128 and wins over /etc/sysctl.d/99-kaudit.conf at boot") {
					t.Fatalf("warnings %v", p.Warnings)
				}
			},
		},
		{
			name: "Confluent 7.1 is Kafka 3.1: manual",
			facts: func(f *facts.Facts) {
				f.Kafka.Version, f.Kafka.Distribution = "7.1.0", "confluent"
			},
			findings: []rules.Finding{fail("kafka-backlog-config", rules.Fix{KafkaProperties: map[string]string{propBacklog: "4096"}})},
			check: func(t *testing.T, p HostPlan) {
				if len(p.Changes) != 0 || !hasText(manualTexts(p), "Confluent Platform 7.1.0, where the listen backlog is fixed at 50") {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "Confluent 7.2 is Kafka 3.2: planned",
			facts: func(f *facts.Facts) {
				f.Kafka.Version, f.Kafka.Distribution = "7.2.1", "confluent"
				f.Kafka.Properties[propBacklog] = "50"
			},
			findings: []rules.Finding{backlogCfgF},
			check: func(t *testing.T, p HostPlan) {
				c := find(p, KindKafkaProperty, propBacklog)
				if c == nil || c.From != "50" || c.To != "4096" {
					t.Fatalf("plan %+v", p)
				}
				if !hasText(p.Warnings, "capped at net.core.somaxconn=128") {
					t.Errorf("warnings %v", p.Warnings)
				}
			},
		},
		{
			name:     "server.properties unknown: manual",
			facts:    func(f *facts.Facts) { f.Kafka.Version, f.Kafka.Config = "3.6.0", "" },
			findings: []rules.Finding{backlogCfgF},
			check: func(t *testing.T, p HostPlan) {
				if len(p.Changes) != 0 || !hasText(manualTexts(p), "server.properties not found") {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name:     "socket.receive.buffer.bytes=-1 is only an alternative",
			facts:    func(f *facts.Facts) { f.Kafka.Version = "3.6.0" },
			findings: []rules.Finding{fail("x", rules.Fix{KafkaProperties: map[string]string{propRcvbuf: "-1"}})},
			check: func(t *testing.T, p HostPlan) {
				if len(p.Changes) != 0 || !hasText(manualTexts(p), "alternative") {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name:     "NIC: ring capped at the maximum, fixed feature skipped",
			findings: []rules.Finding{ringF, offloadF},
			check: func(t *testing.T, p HostPlan) {
				rx, tx := find(p, KindNICRing, "eth0 rx"), find(p, KindNICRing, "eth0 tx")
				if rx == nil || rx.From != "512" || rx.To != "4096" || !strings.Contains(rx.Note, "pre-set maximum") {
					t.Errorf("rx: %+v", rx)
				}
				if tx == nil || tx.To != "2048" || rx.PersistPath != NICPersistPath {
					t.Errorf("tx: %+v", tx)
				}
				if g := find(p, KindNICOffload, "eth0 gro"); g == nil || g.From != "off" || g.To != "on" {
					t.Errorf("gro: %+v", g)
				}
				if find(p, KindNICOffload, "eth0 lro") != nil || len(p.Infeasible) != 1 || p.Infeasible[0].Target != "eth0 lro" ||
					p.Infeasible[0].Reason != "lro cannot be turned on: it is off [fixed] by the ixgbe driver" {
					t.Errorf("lro: infeasible %+v", p.Infeasible)
				}
				if find(p, KindNICOffload, "eth0 tso") != nil {
					t.Error("tso already on but planned")
				}
			},
		},
		{
			name: "NIC without ring support or maximum",
			facts: func(f *facts.Facts) {
				f.NICs = []facts.NIC{
					{Name: "eth0", RingErr: "Operation not supported"},
					{Name: "eth1", Ring: &facts.Ring{RXMax: -1, TXMax: -1, RX: 256, TX: 256}},
				}
			},
			findings: []rules.Finding{fail("nic-ring", rules.Fix{NIC: map[string]map[string]string{"eth0": {"rx": "4096"}, "eth1": {"rx": "4096"}, "eth9": {"rx": "4096"}}})},
			check: func(t *testing.T, p HostPlan) {
				// No ring settings, or no maximum: listed as impossible;
				// an interface not gathered: a warning.
				if len(p.Changes) != 0 || len(p.Warnings) != 1 || !hasText(p.Warnings, "eth9 is not in the gathered facts") || len(p.Infeasible) != 2 {
					t.Fatalf("plan %+v", p)
				}
				if r := p.Infeasible[0].Reason; p.Infeasible[0].Target != "eth0 rx" || !strings.Contains(r, "Operation not supported") {
					t.Errorf("eth0: %+v", p.Infeasible[0])
				}
				if r := p.Infeasible[1].Reason; p.Infeasible[1].Target != "eth1 rx" || !strings.Contains(r, "no rx ring maximum (Pre-set maximums RX: n/a)") {
					t.Errorf("eth1: %+v", p.Infeasible[1])
				}
			},
		},
		{
			name:     "values kaudit will not write",
			findings: []rules.Finding{fail("x", rules.Fix{Sysctl: map[string]string{"kernel.core_pattern": "|/bin/sh"}, KafkaProperties: map[string]string{"log.dirs": `C:\kafka`}})},
			check: func(t *testing.T, p HostPlan) {
				if len(p.Changes) != 0 || len(p.Warnings) != 2 {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name:     "selector",
			findings: allFindings(rules.Fail),
			sel:      Selector{Rules: []string{"socket-buffers"}},
			check: func(t *testing.T, p HostPlan) {
				if len(p.Changes) != 2 || p.Changes[0].Target != "net.core.rmem_max" || p.Changes[1].Target != "net.ipv4.tcp_rmem" {
					t.Fatalf("changes %+v", p.Changes)
				}
			},
		},
		{
			name: "skip, error, warn and pass findings contribute nothing",
			findings: []rules.Finding{
				{Rule: "somaxconn", Status: rules.Pass, Fix: somaxconnF.Fix},
				{Rule: "somaxconn", Status: rules.Skip, Fix: somaxconnF.Fix},
				{Rule: "somaxconn", Status: rules.Error, Fix: somaxconnF.Fix},
				{Rule: "somaxconn", Status: rules.Unknown, Fix: somaxconnF.Fix},
				{Rule: "somaxconn", Status: rules.Fail},
			},
			check: func(t *testing.T, p HostPlan) {
				if len(p.Changes)+len(p.Manual)+len(p.Warnings) != 0 {
					t.Fatalf("plan %+v", p)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := hostFacts()
			if tc.facts != nil {
				tc.facts(f)
			}
			p := PlanHost("broker-1", f, tc.findings, tc.sel)
			tc.check(t, p)
			for _, c := range p.Changes {
				if c.Host != "broker-1" || len(c.Rules) == 0 || c.Kind == "" || c.Target == "" {
					t.Errorf("incomplete change %+v", c)
				}
			}
			// Deterministic: the same input plans the same output.
			f2 := hostFacts()
			if tc.facts != nil {
				tc.facts(f2)
			}
			if again := PlanHost("broker-1", f2, tc.findings, tc.sel); !reflect.DeepEqual(p, again) {
				t.Errorf("not deterministic:\n%+v\n%+v", p, again)
			}
		})
	}
}

func TestManualMerged(t *testing.T) {
	same := rules.Fix{Manual: "upgrade Kafka to ≥ 3.2 so socket.listen.backlog.size can be raised (KIP-764)"}
	p := PlanHost("b", hostFacts(), []rules.Finding{fail("syncookies-fired", same), fail("listen-overflows", same), fail("a", rules.Fix{Manual: "other"})}, Selector{})
	want := []Manual{
		{Host: "b", Rules: []string{"a"}, Action: "other"},
		{Host: "b", Rules: []string{"listen-overflows", "syncookies-fired"}, Action: same.Manual},
	}
	if !reflect.DeepEqual(p.Manual, want) {
		t.Fatalf("manual %+v", p.Manual)
	}
}

func TestPlanHostNilFacts(t *testing.T) {
	p := PlanHost("down", nil, allFindings(rules.Fail), Selector{})
	if len(p.Changes) != 0 || len(p.Warnings) != 1 {
		t.Fatalf("plan %+v", p)
	}
}

func TestChangesSorted(t *testing.T) {
	f := hostFacts()
	f.Kafka.Version = "3.3.2"
	p := PlanHost("b", f, append(allFindings(rules.Fail), backlogCfgF), Selector{})
	for i := 1; i < len(p.Changes); i++ {
		a, b := p.Changes[i-1], p.Changes[i]
		if a.Kind > b.Kind || (a.Kind == b.Kind && a.Target >= b.Target) {
			t.Fatalf("not sorted at %d: %s %s, %s %s", i, a.Kind, a.Target, b.Kind, b.Target)
		}
	}
}

func TestResolve(t *testing.T) {
	at := func(rule, v string, d rules.Direction, field int) ask {
		return ask{rule: rule, value: v, bound: rules.Bound{Dir: d, Field: field}}
	}
	for _, tc := range []struct {
		name string
		asks []ask
		want string // "" with err
		err  string
	}{
		{"at least, larger wins", []ask{at("a", "128", rules.AtLeast, 0), at("b", "4096", rules.AtLeast, 0)}, "4096", ""},
		{"at least, order does not matter", []ask{at("a", "4096", rules.AtLeast, 0), at("b", "1024", rules.AtLeast, 0)}, "4096", ""},
		{"at most, smaller wins", []ask{at("a", "10", rules.AtMost, 0), at("b", "1", rules.AtMost, 0)}, "1", ""},
		{"at least 1 and at most 10: compatible, the lower bound", []ask{at("a", "1", rules.AtLeast, 0), at("b", "10", rules.AtMost, 0)}, "1", ""},
		{"at least 10 and at most 5: conflict", []ask{at("a", "10", rules.AtLeast, 0), at("b", "5", rules.AtMost, 0)}, "", "no value satisfies a: at least 10 and b: at most 5"},
		{"exactly within a bound", []ask{at("a", "30", rules.Exactly, 0), at("b", "10", rules.AtLeast, 0)}, "30", ""},
		{"exactly outside a bound", []ask{at("a", "3", rules.Exactly, 0), at("b", "10", rules.AtLeast, 0)}, "", "no value satisfies"},
		{"two exact values", []ask{at("a", "bbr", rules.Exactly, 0), at("b", "cubic", rules.Exactly, 0)}, "", "no value satisfies a: exactly bbr and b: exactly cubic"},
		{"same exact value", []ask{at("a", "fq", rules.Exactly, 0), at("b", "fq", rules.Exactly, 0)}, "fq", ""},
		{"a word cannot be at least", []ask{at("a", "bbr", rules.AtLeast, 0), at("b", "bbr", rules.AtLeast, 0)}, "", "is not a number"},
		{"field 3 at least, the first request's other fields kept", []ask{at("a", "4096 87380 6291456", rules.AtLeast, 3), at("b", "4096 131072 134217728", rules.AtLeast, 3)}, "4096 87380 134217728", ""},
		{"field 3 at most and at least", []ask{at("a", "4096 87380 134217728", rules.AtLeast, 3), at("b", "4096 87380 6291456", rules.AtMost, 3)}, "", "field 3 at least 134217728 and b: field 3 at most 6291456"},
		{"plain multi-field at least: field by field", []ask{at("a", "4096 87380 6291456", rules.AtLeast, 0), at("b", "4096 131072 134217728", rules.AtLeast, 0)}, "4096 131072 134217728", ""},
		{"exact whole value and a field bound it meets", []ask{at("a", "4096 87380 134217728", rules.Exactly, 0), at("b", "1 1 6291456", rules.AtLeast, 3)}, "4096 87380 134217728", ""},
		{"exact whole value and a field bound it misses", []ask{at("a", "4096 87380 6291456", rules.Exactly, 0), at("b", "1 1 134217728", rules.AtLeast, 3)}, "", "no value satisfies"},
		{"field beyond the value", []ask{at("a", "1 2", rules.AtLeast, 3)}, "", "no field 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolve(tc.asks)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("resolve = %q, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("resolve = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestPlanOppositeDirections: two rules ask for one key in opposite
// directions. Compatible bounds plan the tighter value; incompatible ones
// are a conflict in the plan, rendered loudly, and nothing is planned for
// the key (the other changes still are).
func TestPlanOppositeDirections(t *testing.T) {
	f := &facts.Facts{Sysctl: map[string]string{"vm.swappiness": "60", "net.core.somaxconn": "128"}, Persisted: map[string]facts.PersistedSysctl{}}
	fail := func(rule, key, value string, d rules.Direction) rules.Finding {
		return rules.Finding{Rule: rule, Status: rules.Fail, Fix: &rules.Fix{
			Summary: "set " + key, Sysctl: map[string]string{key: value}, Bounds: map[string]rules.Bound{key: {Dir: d}}}}
	}
	for _, tc := range []struct {
		name     string
		findings []rules.Finding
		want     string // planned value of vm.swappiness, "" for none
		conflict string
	}{
		{"at most 10 and at most 1", []rules.Finding{fail("swap-a", "vm.swappiness", "10", rules.AtMost), fail("swap-b", "vm.swappiness", "1", rules.AtMost)}, "1", ""},
		{"at least 1 and at most 10", []rules.Finding{fail("swap-a", "vm.swappiness", "1", rules.AtLeast), fail("swap-b", "vm.swappiness", "10", rules.AtMost)}, "1", ""},
		{"at most 1 then at least 10 (higher() took 10)", []rules.Finding{fail("swap-a", "vm.swappiness", "1", rules.AtMost), fail("swap-b", "vm.swappiness", "10", rules.AtLeast)}, "",
			"no value satisfies swap-a: at most 1 and swap-b: at least 10"},
		{"at least 10 and at most 5", []rules.Finding{fail("swap-a", "vm.swappiness", "10", rules.AtLeast), fail("swap-b", "vm.swappiness", "5", rules.AtMost)}, "",
			"no value satisfies swap-a: at least 10 and swap-b: at most 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := append(tc.findings, fail("somaxconn", "net.core.somaxconn", "4096", rules.AtLeast))
			p := PlanHost("h", f, fs, Selector{})
			c := find(p, KindSysctl, "vm.swappiness")
			if tc.want != "" {
				if c == nil || c.To != tc.want || strings.Join(c.Rules, ",") != "swap-a,swap-b" || len(p.Conflicts) != 0 {
					t.Fatalf("planned %+v, conflicts %+v; want vm.swappiness → %s", c, p.Conflicts, tc.want)
				}
				return
			}
			if c != nil {
				t.Fatalf("a conflicting key was planned: %+v", c)
			}
			if len(p.Conflicts) != 1 || p.Conflicts[0].Target != "vm.swappiness" || !slices.Equal(p.Conflicts[0].Rules, []string{"swap-a", "swap-b"}) || !strings.Contains(p.Conflicts[0].Reason, tc.conflict) {
				t.Fatalf("conflicts %+v, want one on vm.swappiness with %q", p.Conflicts, tc.conflict)
			}
			if find(p, KindSysctl, "net.core.somaxconn") == nil {
				t.Fatal("the other change was dropped with the conflict")
			}
			var buf bytes.Buffer
			RenderPlan(&buf, []HostPlan{p}, PlanOptions{})
			out := buf.String()
			for _, want := range []string{"CONFLICT: rules ask for incompatible values (not planned):", "swap-a,swap-b: vm.swappiness: " + tc.conflict, "1 target asked for in incompatible directions, not planned (CONFLICT above)"} {
				if !strings.Contains(out, want) {
					t.Errorf("rendered plan lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// TestRenderPlanGolden renders a small fleet: an affected Kafka 2.8 host,
// a Kafka 3.5 host with an unknown kernel, a clean host, and an empty fleet.
var nicFindings = []rules.Finding{ringF, offloadF}

func TestPlanNICPersistenceNMOffloadOnly(t *testing.T) {
	f := nicPersistFacts(&facts.NICPersist{Mechanism: facts.PersistNetworkManager, Connection: "eth0", ConnectionUUID: "16b7676e-40b8-3b51-b414-7d7c32c7969a", NMVersion: "1.22.8"})
	p := PlanHost("b1", f, []rules.Finding{offloadF}, Selector{})
	if c := find(p, KindNICOffload, "eth0 gro"); c == nil || c.NM != "16b7676e-40b8-3b51-b414-7d7c32c7969a" || c.PersistMatch != "" || len(p.Manual) != 0 {
		t.Errorf("NetworkManager 1.22 takes offloads: %+v %+v", c, p.Manual)
	}
}

func TestRenderPlanGolden(t *testing.T) {
	newer := hostFacts()
	newer.Kafka.Version = "3.5.1"
	newer.Kafka.Config = "/etc/kafka/server.properties"
	newer.Persisted[keySomaxconn] = facts.PersistedSysctl{Value: "128", File: "/etc/sysctl.conf", Line: 31}
	clean := hostFacts()

	for _, tc := range []struct {
		name  string
		plans []HostPlan
	}{
		{"fleet", []HostPlan{
			PlanHost("broker-1.dc1", hostFacts(), allFindings(rules.Fail), Selector{}),
			PlanHost("broker-2.dc1", newer, []rules.Finding{kernelFinding(rules.Unknown), somaxconnF, backlogCfgF, ringF}, Selector{Rules: []string{ruleKernel, "nic-ring"}}),
			PlanHost("broker-3.dc1", clean, []rules.Finding{kernelFinding(rules.Pass)}, Selector{}),
		}},
		{"single-change", []HostPlan{
			PlanHost("broker-1.dc1", hostFacts(), []rules.Finding{persistedF}, Selector{}),
		}},
		{"nothing", []HostPlan{
			PlanHost("broker-3.dc1", clean, nil, Selector{}),
		}},
		{"nic-persist", []HostPlan{
			PlanHost("deb-ifupdown", nicPersistFacts(&facts.NICPersist{Mechanism: facts.PersistIfupdown, File: "/etc/network/interfaces", Line: 12}), nicFindings, Selector{}),
			PlanHost("rhel-ifcfg", nicPersistFacts(&facts.NICPersist{Mechanism: facts.PersistIfcfg, File: "/etc/sysconfig/network-scripts/ifcfg-eth0", Line: 9, EthtoolOpts: "-K eth0 tso on"}), nicFindings, Selector{}),
			PlanHost("networkd", nicPersistFacts(&facts.NICPersist{Mechanism: facts.PersistSystemdLink, MAC: "52:54:00:aa:bb:cc"}), nicFindings, Selector{}),
			PlanHost("netplan-link", nicPersistFacts(&facts.NICPersist{Mechanism: facts.PersistSystemdLink, MAC: "52:54:00:aa:bb:cc", File: "/run/systemd/network/10-netplan-eth0.link"}), nicFindings, Selector{}),
			PlanHost("nm", nicPersistFacts(&facts.NICPersist{Mechanism: facts.PersistNetworkManager, Connection: "System eth0", ConnectionUUID: "5fb06bd0-0bb0-7ffb-45f1-d6edd65f3e03", NMVersion: "1.40.16"}), nicFindings, Selector{}),
			PlanHost("nm-old", nicPersistFacts(&facts.NICPersist{Mechanism: facts.PersistNetworkManager, Connection: "System eth0", ConnectionUUID: "5fb06bd0-0bb0-7ffb-45f1-d6edd65f3e03", NMVersion: "1.20.0"}), nicFindings, Selector{}),
			PlanHost("plain", nicPersistFacts(&facts.NICPersist{Mechanism: facts.PersistUdev}), nicFindings, Selector{}),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			RenderPlan(&buf, tc.plans, PlanOptions{})
			checkGolden(t, filepath.Join("testdata", "plan-"+tc.name+".golden"), buf.Bytes(), "TestRenderPlanGolden")
		})
	}
}

func TestPlanAccessors(t *testing.T) {
	f := hostFacts()
	f.Kafka.Version = "3.5.1"
	p := PlanHost("b", f, []rules.Finding{somaxconnF, persistedF, backlogCfgF, ringF}, Selector{})
	want := map[string]string{keySomaxconn: "4096", "net.ipv4.tcp_timestamps": "1"}
	if got := p.PersistedSysctls(); !reflect.DeepEqual(got, want) {
		t.Errorf("PersistedSysctls = %v", got)
	}
	if got := p.KafkaProperties(); !reflect.DeepEqual(got, map[string]map[string]string{serverProps: {propBacklog: "4096"}}) {
		t.Errorf("KafkaProperties = %v", got)
	}
	// The managed file renders from the plan.
	if _, err := sysctld.Render(nil, p.PersistedSysctls(), "r1"); err != nil {
		t.Fatal(err)
	}
}

// nicPersistFacts is hostFacts with eth0 persisted by p.
func nicPersistFacts(p *facts.NICPersist) *facts.Facts {
	f := hostFacts()
	f.NICs[0].Persist = p
	return f
}

func TestPlanNICPersistence(t *testing.T) {
	const mac = "52:54:00:aa:bb:cc"
	nm := func(v string) *facts.NICPersist {
		return &facts.NICPersist{Mechanism: facts.PersistNetworkManager, Connection: "Wired connection 1", NMVersion: v}
	}
	const uuid = "16b7676e-40b8-3b51-b414-7d7c32c7969a"
	nmu := func(v string) *facts.NICPersist {
		p := nm(v)
		p.ConnectionUUID = uuid
		return p
	}
	for _, tc := range []struct {
		name    string
		persist *facts.NICPersist
		driver  string
		path    string
		match   PersistMatch
		nm      NMConnection
		note    string // in every NIC change's note
		manual  string // a manual action containing it ("" none)
	}{
		{name: "not gathered: udev", path: NICPersistPath},
		{name: "udev", persist: &facts.NICPersist{Mechanism: facts.PersistUdev}, path: NICPersistPath},
		{name: "ifupdown", persist: &facts.NICPersist{Mechanism: facts.PersistIfupdown, File: "/etc/network/interfaces", Line: 7},
			path: "/etc/network/interfaces", note: `post-up lines in the "iface eth0" stanza of /etc/network/interfaces (line 7`},
		{name: "ifupdown, path kaudit will not edit", persist: &facts.NICPersist{Mechanism: facts.PersistIfupdown, File: "/etc/network/interfaces.d/my eth0", Line: 1},
			path: NICPersistPath},
		// ifcfg is read only: the udev rule, and how to keep the settings
		// in ETHTOOL_OPTS instead.
		{name: "ifcfg", persist: &facts.NICPersist{Mechanism: facts.PersistIfcfg, File: "/etc/sysconfig/network-scripts/ifcfg-eth0", EthtoolOpts: "-K eth0 tso on"},
			path: NICPersistPath, note: "ETHTOOL_OPTS there, if it sets them, wins at ifup",
			manual: `add "-K eth0 gro on; -G eth0 rx 4096; -G eth0 tx 2048" to its ETHTOOL_OPTS`},
		{name: "ifcfg legacy ETHTOOL_OPTS", persist: &facts.NICPersist{Mechanism: facts.PersistIfcfg, File: "/etc/sysconfig/network-scripts/ifcfg-eth0", Line: 4, EthtoolOpts: "autoneg off speed 1000"},
			path: NICPersistPath, manual: "it reads ETHTOOL_OPTS but does not edit it"},
		{name: "systemd-link", persist: &facts.NICPersist{Mechanism: facts.PersistSystemdLink, MAC: mac},
			path: "/etc/systemd/network/10-kaudit-eth0.link", match: "MACAddress=" + mac + " Driver=ixgbe", note: "systemd applies it when the interface next appears"},
		{name: "systemd-link without MAC", persist: &facts.NICPersist{Mechanism: facts.PersistSystemdLink}, path: NICPersistPath},
		{name: "systemd-link without driver", persist: &facts.NICPersist{Mechanism: facts.PersistSystemdLink, MAC: mac}, driver: "-", path: NICPersistPath},
		{name: "systemd-link, another .link matches", persist: &facts.NICPersist{Mechanism: facts.PersistSystemdLink, MAC: mac, File: "/run/systemd/network/10-netplan-eth0.link"},
			path: NICPersistPath, manual: "/run/systemd/network/10-netplan-eth0.link already matches eth0 and applies before any .link kaudit could add: kaudit persisted the settings in /etc/udev/rules.d/99-kaudit-ethtool.rules; to keep them in systemd instead add GenericReceiveOffload=true RxBufferSize=4096 TxBufferSize=2048 to its [Link] section"},
		{name: "NetworkManager ≥ 1.26", persist: nmu("1.26.0"), path: `NetworkManager connection "Wired connection 1"`, nm: uuid,
			note: "nmcli connection modify " + uuid + " ethtool.feature-gro on ethtool.ring-rx 4096 ethtool.ring-tx 2048; the previous values are journalled"},
		{name: "NetworkManager without connection UUID", persist: nm("1.30.0"), path: NICPersistPath, note: "managed by NetworkManager",
			manual: "`nmcli connection modify 'Wired connection 1' ethtool.feature-gro on ethtool.ring-rx 4096 ethtool.ring-tx 2048`"},
		{name: "NetworkManager < 1.26: no rings", persist: nmu("1.22.8"), path: NICPersistPath, manual: "NetworkManager takes ring sizes only from 1.26 on"},
		{name: "NetworkManager version unknown", persist: nmu(""), path: NICPersistPath, manual: "NetworkManager (version unknown)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := nicPersistFacts(tc.persist)
			switch tc.driver {
			case "-":
				f.NICs[0].Driver = ""
			case "":
			default:
				f.NICs[0].Driver = tc.driver
			}
			p := PlanHost("b1", f, []rules.Finding{ringF, offloadF}, Selector{})
			n := 0
			for _, c := range p.Changes {
				if c.Kind != KindNICRing && c.Kind != KindNICOffload {
					continue
				}
				n++
				if c.PersistPath != tc.path || c.PersistMatch != tc.match || c.NM != tc.nm || !c.Persist || !c.Runtime {
					t.Errorf("%s: persist %q match %q nm %q, want %q %q %q", c.Target, c.PersistPath, c.PersistMatch, c.NM, tc.path, tc.match, tc.nm)
				}
				if !strings.Contains(c.Note, tc.note) {
					t.Errorf("%s: note %q, want %q", c.Target, c.Note, tc.note)
				}
			}
			if n != 3 {
				t.Fatalf("%d NIC changes: %+v", n, p.Changes)
			}
			var nicManual []string
			for _, m := range p.Manual {
				if strings.Contains(strings.Join(m.Rules, ","), "nic-") {
					nicManual = append(nicManual, m.Action)
					if !slices.Equal(m.Rules, []string{"nic-offload", "nic-ring"}) {
						t.Errorf("manual rules %q", m.Rules)
					}
				}
			}
			switch {
			case tc.manual == "" && len(nicManual) > 0:
				t.Errorf("unexpected manual actions %q", nicManual)
			case tc.manual != "" && (len(nicManual) != 1 || !strings.Contains(nicManual[0], tc.manual)):
				t.Errorf("manual actions %q, want one with %q", nicManual, tc.manual)
			}
		})
	}
}

// TestPlanNICBeaten: a setting that something applied after the udev rule
// at boot sets to another value (ifup's ETHTOOL_OPTS here) is not planned
// through the udev rule, which would not persist it: it is listed as
// cannot apply, naming the source that wins.
func TestPlanNICBeaten(t *testing.T) {
	f := nicPersistFacts(&facts.NICPersist{Mechanism: facts.PersistIfcfg, File: "/etc/sysconfig/network-scripts/ifcfg-eth0", Line: 9, EthtoolOpts: "-G eth0 rx 512"})
	f.NICs[0].Boot = &facts.NICBoot{Settings: map[string]facts.NICBootValue{
		"rx":  {Value: "512", Mechanism: facts.PersistIfcfg, Source: "/etc/sysconfig/network-scripts/ifcfg-eth0:9"},
		"gro": {Value: "off", Mechanism: facts.PersistUdev, Source: "/etc/udev/rules.d/60-x.rules:1"},
	}}
	p := PlanHost("b1", f, []rules.Finding{ringF, offloadF}, Selector{})
	var planned []string
	for _, c := range p.Changes {
		planned = append(planned, c.Target)
	}
	if slices.Contains(planned, "eth0 rx") || !slices.Contains(planned, "eth0 gro") || !slices.Contains(planned, "eth0 tx") {
		t.Errorf("planned %q: want eth0 gro and tx (the udev rule wins over an earlier rule), not rx", planned)
	}
	var no []string
	for _, x := range p.Infeasible {
		if x.Target == "eth0 rx" && strings.Contains(x.Reason, "ifcfg-eth0:9 sets rx 512 at boot") {
			no = append(no, x.Target)
		}
	}
	if len(no) != 1 {
		t.Errorf("cannot apply: %+v, want eth0 rx naming ifcfg-eth0:9", p.Infeasible)
	}
}

// TestRenderPlanApplying: with Applying the closing "(run with --apply)"
// line is left out, the rest of the text is the dry run's; "nothing to
// change" is kept.
func TestRenderPlanApplying(t *testing.T) {
	plans := []HostPlan{{Host: "h1", Changes: []Change{{Host: "h1", Rules: []string{"somaxconn"}, Kind: KindSysctl, Target: keySomaxconn, From: "128", To: "4096", Runtime: true}}}}
	var dry, applying bytes.Buffer
	RenderPlan(&dry, plans, PlanOptions{})
	RenderPlan(&applying, plans, PlanOptions{Applying: true})
	want := "h1:\n  somaxconn: net.core.somaxconn 128 → 4096 (runtime only)\n\n"
	if applying.String() != want {
		t.Errorf("applying:\n%q\nwant\n%q", applying.String(), want)
	}
	if !strings.HasPrefix(dry.String(), want) || !strings.HasSuffix(dry.String(), "nothing changed (run with --apply)\n") {
		t.Errorf("dry run:\n%s", dry.String())
	}
	var none bytes.Buffer
	RenderPlan(&none, []HostPlan{{Host: "h1", Changes: []Change{}}}, PlanOptions{Applying: true})
	if none.String() != "h1: nothing to change\n\nnothing to change on 1 host; nothing changed\n" {
		t.Errorf("nothing: %q", none.String())
	}
}

// checkGolden compares got with the golden file (rewritten with -update);
// test names the test to rerun with -update.
func checkGolden(t *testing.T, golden string, got []byte, test string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("differs from %s (go test -run %s -update)\n--- got ---\n%s\n--- want ---\n%s", golden, test, got, want)
	}
}
