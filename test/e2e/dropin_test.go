//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

// The broker-unit section on real sshd hosts: the fleet runs no systemd,
// so a broker is "not a service" (its cgroup is this machine's, with no
// .service in it), and the open-files fix plans the manual action with
// the exact change; a host without a broker beside it scans completely.
//
// The broker-open-files rule is written elsewhere: its failing finding is
// stood in for here (a Fix with NoFile 100000), only in this test.
func TestBrokerUnitNotAService(t *testing.T) {
	requireEnv(t)
	kauditBin(t)
	f := testfleet.Start(t, []testfleet.HostSpec{
		{Name: "broker", Sysctls: base(), Kafka: &testfleet.BrokerSpec{Version: "3.6.1"}},
		{Name: "healthy", Sysctls: base()},
	})
	inv := writeInventory(t, f, entry(f.Host("broker")), entry(f.Host("healthy"), "interfaces: auto"))
	r := scan(t, runOpts{}, inv, "--timeout", "30s", "--connect-timeout", "5s")
	if r.Report.Summary.Audited != 2 {
		t.Fatalf("summary %+v, want both hosts audited; stderr:\n%s", r.Report.Summary, r.Stderr)
	}
	stand := rules.Finding{Rule: "broker-open-files", Status: rules.Fail, Fix: &rules.Fix{Summary: "raise the open-files limit", NoFile: 100000}}

	b := r.host(t, "broker")
	if b.Facts == nil || b.Facts.Kafka == nil || b.Facts.Kafka.PID <= 0 {
		t.Fatalf("broker not found: %+v", b.Facts)
	}
	st := b.Facts.Sections[facts.SecBrokerUnit]
	if b.Facts.Kafka.Unit != nil || st.State != "absent" || !strings.Contains(st.Message, "runs in cgroup") {
		t.Fatalf("broker unit %+v, section %+v: want not a service", b.Facts.Kafka.Unit, st)
	}
	plan := remediate.PlanHost("broker", b.Facts, []rules.Finding{stand}, remediate.Selector{})
	if len(plan.Changes) != 0 || len(plan.Manual) != 1 || !strings.Contains(plan.Manual[0].Action, "`ulimit -n 100000` before kafka-server-start") {
		t.Errorf("plan %+v: want only the manual action", plan)
	}

	h := r.host(t, "healthy")
	assertComplete(t, h)
	if _, noted := h.Facts.Sections[facts.SecBrokerUnit]; !noted || h.Facts.Kafka != nil {
		t.Errorf("healthy host: kafka %+v, broker-unit section %+v: want no broker, the section absent", h.Facts.Kafka, h.Facts.Sections[facts.SecBrokerUnit])
	}
}
