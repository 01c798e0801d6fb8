package remediate

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
)

// openFilesFinding stands in for the broker-open-files rule's failing
// finding (written by the broker-process work): what the planner reads
// of it is its Fix.NoFile, the soft limit the broker needs.
func openFilesFinding(n int64) rules.Finding {
	return rules.Finding{Rule: "broker-open-files", Status: rules.Fail, Fix: &rules.Fix{Summary: "raise the broker's open-files limit", NoFile: n, Restart: true}}
}

// unitFacts is a broker (pid 42, soft 4096) in kafka.service whose unit
// gives unit at its next start, on a host where /etc/systemd/system is
// writable.
func unitFacts(unit facts.Limit, mod func(f *facts.Facts)) *facts.Facts {
	rw := facts.Dir{Exists: true, Mode: "drwxr-xr-x", Writable: true, Mount: "/", FSType: "ext4"}
	f := &facts.Facts{
		Kafka: &facts.Kafka{PID: 42,
			Process: &facts.BrokerProcess{NoFile: &facts.Limit{Soft: 4096, Hard: 4096}, FDs: 300},
			Unit:    &facts.BrokerUnit{Name: "kafka.service", Cgroup: "/system.slice/kafka.service", NoFile: &unit, FragmentPath: "/etc/systemd/system/kafka.service"}},
		Feasibility: &facts.Feasibility{Dirs: map[string]facts.Dir{"/etc/systemd/system": rw}},
		Sections:    map[string]facts.SectionStatus{},
	}
	if mod != nil {
		mod(f)
	}
	return f
}

func TestPlanNoFileDropIn(t *testing.T) {
	low := facts.Limit{Soft: 4096, Hard: 4096}
	notService := func(f *facts.Facts) {
		f.Kafka.Unit = nil
		f.Sections[facts.SecBrokerUnit] = facts.SectionStatus{State: "absent", Message: "the broker (pid 42) runs in cgroup /docker/ab: no systemd service in the cgroup path (a container, or started outside systemd)"}
	}
	tests := []struct {
		name       string
		f          *facts.Facts
		wantTo     string // "" when no change is planned
		wantManual string // a substring of the one manual action; "" for none
		wantInfeas string // a substring of the one infeasible reason
	}{
		{"unit 4096: drop-in", unitFacts(low, nil), "100000", "", ""},
		{"higher hard kept", unitFacts(facts.Limit{Soft: 1024, Hard: 524288}, nil), "100000:524288", "", ""},
		{"unlimited hard kept", unitFacts(facts.Limit{Soft: 1024, Hard: facts.Unlimited}, nil), "100000:infinity", "", ""},
		{"process hard higher", unitFacts(low, func(f *facts.Facts) { f.Kafka.Process.NoFile.Hard = 200000 }), "100000:200000", "", ""},
		{"existing drop-in dir used", unitFacts(low, func(f *facts.Facts) {
			f.Feasibility.Dirs["/etc/systemd/system/kafka.service.d"] = facts.Dir{Exists: true, Writable: true, Mount: "/", FSType: "ext4"}
		}), "100000", "", ""},
		{"already configured: pending restart", unitFacts(facts.Limit{Soft: 100000, Hard: 100000}, nil), "", "pending broker restart: kafka.service gives 100000 open files at its next start, the running broker (pid 42) still has its old limit", ""},
		{"unit unlimited: pending restart", unitFacts(facts.Limit{Soft: facts.Unlimited, Hard: facts.Unlimited}, nil), "", "gives infinity open files", ""},
		{"not a service", unitFacts(low, notService), "", "the broker (pid 42) runs in cgroup /docker/ab: no systemd service in the cgroup path (a container, or started outside systemd): raise its limit where it is started: `ulimit -n 100000` before kafka-server-start, or the container runtime's --ulimit nofile=100000:100000", ""},
		{"unit unreadable", unitFacts(low, func(f *facts.Facts) {
			f.Kafka.Unit = nil
			f.Sections[facts.SecBrokerUnit] = facts.SectionStatus{State: "denied", Message: "/proc/42/cgroup: denied"}
		}), "", "could not be read (denied: /proc/42/cgroup: denied)", ""},
		{"no systemd", unitFacts(low, func(f *facts.Facts) {
			f.Kafka.Unit.NoFile = nil
			f.Sections[facts.SecBrokerUnit] = facts.SectionStatus{State: "partial", Message: "systemd does not run here"}
		}), "", "kafka.service: what systemd gives it could not be read (systemd does not run here)", ""},
		{"read-only /etc", unitFacts(low, func(f *facts.Facts) {
			f.Feasibility.Dirs["/etc/systemd/system"] = facts.Dir{Exists: true, Writable: true, ReadOnly: true, Mount: "/", FSType: "ext4"}
		}), "", "", "cannot write the drop-in: /etc/systemd/system is on a read-only mount (/, ext4)"},
		{"drop-in dir not writable", unitFacts(low, func(f *facts.Facts) {
			f.Feasibility.Dirs["/etc/systemd/system/kafka.service.d"] = facts.Dir{Exists: true, Writable: false, Mount: "/", FSType: "ext4"}
		}), "", "", "/etc/systemd/system/kafka.service.d is not writable"},
		{"bad unit name never planned", unitFacts(low, func(f *facts.Facts) { f.Kafka.Unit.Name = "k;rm -rf.service" }), "", "is not one kaudit writes a drop-in for", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := PlanHost("b1", tt.f, []rules.Finding{openFilesFinding(100000)}, Selector{})
			checkNoFilePlan(t, plan, tt.wantTo, tt.wantManual, tt.wantInfeas)
		})
	}
}

func checkNoFilePlan(t *testing.T, plan HostPlan, wantTo, wantManual, wantInfeas string) {
	t.Helper()
	if wantTo == "" {
		if len(plan.Changes) != 0 {
			t.Errorf("changes %+v, want none", plan.Changes)
		}
	} else {
		want := []Change{{Host: "b1", Rules: []string{"broker-open-files"}, Kind: KindUnitDropIn, Target: "kafka.service LimitNOFILE",
			From: plan.Changes[0].From, To: wantTo, Persist: true, PersistPath: "/etc/systemd/system/kafka.service.d/90-kaudit-nofile.conf",
			RestartRequired: true, Note: plan.Changes[0].Note}}
		if !reflect.DeepEqual(plan.Changes, want) {
			t.Errorf("changes\n%+v\nwant\n%+v", plan.Changes, want)
		}
		if !plan.RestartRequired() {
			t.Error("plan does not require a broker restart")
		}
	}
	switch {
	case wantManual == "" && len(plan.Manual) != 0:
		t.Errorf("manual %+v, want none", plan.Manual)
	case wantManual != "" && (len(plan.Manual) != 1 || !strings.Contains(plan.Manual[0].Action, wantManual)):
		t.Errorf("manual %+v, want one with %q", plan.Manual, wantManual)
	}
	switch {
	case wantInfeas == "" && len(plan.Infeasible) != 0:
		t.Errorf("infeasible %+v, want none", plan.Infeasible)
	case wantInfeas != "" && (len(plan.Infeasible) != 1 || !strings.Contains(plan.Infeasible[0].Reason, wantInfeas)):
		t.Errorf("infeasible %+v, want one with %q", plan.Infeasible, wantInfeas)
	}
}

func TestPlanNoFileFromAndLaterDropIns(t *testing.T) {
	f := unitFacts(facts.Limit{Soft: 1024, Hard: 524288}, func(f *facts.Facts) {
		f.Kafka.Unit.DropIns = []string{"/etc/systemd/system/kafka.service.d/10-a.conf", "/etc/systemd/system/kafka.service.d/99-site.conf"}
	})
	plan := PlanHost("b1", f, []rules.Finding{openFilesFinding(100000)}, Selector{})
	if len(plan.Changes) != 1 {
		t.Fatalf("changes %+v", plan.Changes)
	}
	c := plan.Changes[0]
	if c.From != "1024:524288" {
		t.Errorf("From %q, want 1024:524288", c.From)
	}
	if !strings.Contains(c.Note, "/etc/systemd/system/kafka.service.d/99-site.conf sorts after 90-kaudit-nofile.conf") || strings.Contains(c.Note, "10-a.conf") {
		t.Errorf("note %q: want the later drop-in only", c.Note)
	}
	if DropInText(c.To) != "[Service]\nLimitNOFILE=100000:524288\n" {
		t.Errorf("drop-in text %q", DropInText(c.To))
	}
}

// The rendered plan of each shape of the open-files fix (golden files
// testdata/dropin-*.golden): the change, its file and its restart; the
// manual action; the refusal on a read-only /etc.
func TestPlanNoFileGolden(t *testing.T) {
	shapes := []struct {
		name string
		f    *facts.Facts
	}{
		{"service", unitFacts(facts.Limit{Soft: 1024, Hard: 524288}, nil)},
		{"not-service", unitFacts(facts.Limit{}, func(f *facts.Facts) {
			f.Kafka.Unit = nil
			f.Sections[facts.SecBrokerUnit] = facts.SectionStatus{State: "absent", Message: "the broker (pid 42) runs in cgroup /: no systemd service in the cgroup path (a container, or started outside systemd)"}
		})},
		{"pending-restart", unitFacts(facts.Limit{Soft: 100000, Hard: 100000}, nil)},
		{"ro-etc", unitFacts(facts.Limit{Soft: 4096, Hard: 4096}, func(f *facts.Facts) {
			f.Feasibility.Dirs["/etc/systemd/system"] = facts.Dir{Exists: true, ReadOnly: true, Mount: "/", FSType: "ext4"}
		})},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			p := PlanHost("b1", sh.f, []rules.Finding{openFilesFinding(100000)}, Selector{})
			var buf bytes.Buffer
			RenderPlan(&buf, []HostPlan{p}, PlanOptions{})
			checkGolden(t, filepath.Join("testdata", "dropin-"+sh.name+".golden"), buf.Bytes(), "TestPlanNoFileGolden")
		})
	}
}
