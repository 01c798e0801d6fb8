package remediate

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
)

// feasibleHost is hostFacts with feasibility facts: a host where every
// /proc/sys entry is writable and every directory kaudit writes in
// exists on a writable mount.
func feasibleHost() *facts.Facts {
	f := hostFacts()
	modes := map[string]string{}
	for k := range f.Sysctl {
		modes[k] = "-rw-r--r--"
	}
	rw := facts.Dir{Exists: true, Mode: "drwxr-xr-x", Writable: true, Mount: "/", FSType: "ext4"}
	f.Feasibility = &facts.Feasibility{
		SysctlModes: modes,
		Dirs: map[string]facts.Dir{
			"/etc": rw, "/etc/sysctl.d": rw, "/etc/udev/rules.d": rw, "/etc/systemd/network": rw,
			"/opt/kafka/config": rw,
		},
	}
	return f
}

// The planner on facts for each shape of issue 12 (golden plans): a host
// whose net.core buffer limits are read-only (a container's network
// namespace), one without a udev rules directory (with and without
// --runtime-only-ok), one with a read-only /etc/sysctl.d, one whose
// server.properties directory is read-only, and a healthy one; plus the
// summary beside a host that could not be audited.
func TestPlanFeasibilityGolden(t *testing.T) {
	shapes := []struct {
		name string
		edit func(f *facts.Feasibility)
		sel  Selector
	}{
		{"healthy", func(*facts.Feasibility) {}, Selector{}},
		{"container", func(f *facts.Feasibility) {
			f.SysctlModes["net.core.rmem_max"] = "-r--r--r--"
			f.NetNS = facts.NetNSSameAsInit
		}, Selector{}},
		{"no-udev", func(f *facts.Feasibility) { f.Dirs["/etc/udev/rules.d"] = facts.Dir{Mount: "/", FSType: "ext4"} }, Selector{}},
		{"no-udev-runtime-ok", func(f *facts.Feasibility) { f.Dirs["/etc/udev/rules.d"] = facts.Dir{Mount: "/", FSType: "ext4"} }, Selector{RuntimeOnlyOK: true}},
		{"ro-sysctld", func(f *facts.Feasibility) {
			f.Dirs["/etc/sysctl.d"] = facts.Dir{Exists: true, Mode: "drwxr-xr-x", Mount: "/etc/sysctl.d", FSType: "ext4", ReadOnly: true}
		}, Selector{}},
		{"ro-sysctld-runtime-ok", func(f *facts.Feasibility) {
			f.Dirs["/etc/sysctl.d"] = facts.Dir{Exists: true, Mode: "drwxr-xr-x", Mount: "/etc/sysctl.d", FSType: "ext4", ReadOnly: true}
		}, Selector{RuntimeOnlyOK: true}},
		{"ro-kafka-config", func(f *facts.Feasibility) {
			f.Dirs["/opt/kafka/config"] = facts.Dir{Exists: true, Mode: "dr-xr-xr-x", Mount: "/", FSType: "ext4"}
		}, Selector{}},
		{"no-feasibility-facts", nil, Selector{}},
		{"selinux-no-chcon", func(f *facts.Feasibility) { f.SELinux = "enforcing" }, Selector{}},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			f := feasibleHost()
			f.Kafka.Version = "3.6.1" // socket.listen.backlog.size is configurable
			if sh.edit == nil {
				f.Feasibility = nil // as before the gather read them: everything planned
			} else {
				sh.edit(f.Feasibility)
			}
			p := PlanHost("b1", f, append(allFindings("pass"), backlogCfgF), sh.sel)
			var buf bytes.Buffer
			RenderPlan(&buf, []HostPlan{p}, PlanOptions{Unaudited: map[bool]int{true: 1}[sh.name == "healthy"]})
			checkGolden(t, filepath.Join("testdata", "feasible-"+sh.name+".golden"), buf.Bytes(), "TestPlanFeasibilityGolden")
			// An impossible change is never planned.
			for _, no := range p.Infeasible {
				for _, c := range p.Changes {
					if c.Target == no.Target {
						t.Errorf("%s is both planned and impossible", c.Target)
					}
				}
			}
		})
	}
}

// A host that could not be audited is never counted as "nothing to
// change".
func TestRenderPlanUnaudited(t *testing.T) {
	plans := []HostPlan{{Host: "b1", Changes: []Change{}}, {Host: "b2", Changes: []Change{}}}
	for _, tc := range []struct {
		opts PlanOptions
		want string
	}{
		{PlanOptions{}, "nothing to change on 2 hosts; nothing changed\n"},
		{PlanOptions{Unaudited: 1}, "nothing to change on 2 audited hosts; 1 host not audited: no plan for it; nothing changed\n"},
		{PlanOptions{Unaudited: 3, Applying: true}, "nothing to change on 2 audited hosts; 3 hosts not audited: no plan for them; nothing changed\n"},
	} {
		var buf bytes.Buffer
		RenderPlan(&buf, plans, tc.opts)
		if got := buf.String(); !strings.HasSuffix(got, "\n\n"+tc.want) {
			t.Errorf("%+v: summary\n%q\nwant\n%q", tc.opts, got, tc.want)
		}
	}
}

// A file that would override kaudit's sysctl file at boot is worth a
// warning only for what kaudit persists: not on a read-only /etc/sysctl.d.
func TestOverriderWarningOnlyWhenPersisted(t *testing.T) {
	for _, ro := range []bool{false, true} {
		f := feasibleHost()
		f.Persisted[keySomaxconn] = facts.PersistedSysctl{Value: "128", File: "/etc/sysctl.conf", Line: 3}
		if ro {
			f.Feasibility.Dirs["/etc/sysctl.d"] = facts.Dir{Exists: true, Mode: "drwxr-xr-x", Mount: "/etc/sysctl.d", FSType: "ext4", ReadOnly: true}
		}
		p := PlanHost("b1", f, []rules.Finding{somaxconnF}, Selector{})
		warned := strings.Contains(strings.Join(p.Warnings, "\n"), "/etc/sysctl.conf line 3 sets 128 and wins over")
		if warned == ro {
			t.Errorf("read-only sysctl.d %v: warnings %q", ro, p.Warnings)
		}
	}
}

// TestPlanInAContainer: a container shares its kernel with the node, so a
// kernel-wide sysctl (vm.*) written in it changes the node and everything
// on it: never planned there, even where /proc/sys lets root write it (a
// privileged container), while a per-namespace net.* key still is. With
// /proc/sys mounted read-only (Docker's default) no sysctl is planned. The
// same host outside a container plans both.
func TestPlanInAContainer(t *testing.T) {
	fail := func(rule, key, value string) rules.Finding {
		return rules.Finding{Rule: rule, Status: rules.Fail, Fix: &rules.Fix{
			Summary: "set " + key, Sysctl: map[string]string{key: value}, Bounds: map[string]rules.Bound{key: {Dir: rules.AtMost}}}}
	}
	findings := []rules.Finding{fail("vm-swappiness", "vm.swappiness", "1"), fail("somaxconn", "net.core.somaxconn", "4096")}
	rw := facts.Dir{Exists: true, Mode: "drwxr-xr-x", Writable: true, Mount: "/", FSType: "ext4"}
	for _, tc := range []struct {
		name      string
		container string
		procSysRO bool
		planned   []string // sysctl keys planned
		reason    string   // of the infeasible vm.swappiness
	}{
		{"a host", "", false, []string{"net.core.somaxconn", "vm.swappiness"}, ""},
		{"a privileged container", "docker (/.dockerenv)", false, []string{"net.core.somaxconn"},
			"vm.swappiness is kernel-wide and this host is a container (docker (/.dockerenv)): writing it here would change the node's kernel for everything that runs on it"},
		{"docker's read-only /proc/sys", "docker (/.dockerenv)", true, nil, "/proc/sys is mounted read-only here (a container)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &facts.Facts{Sysctl: map[string]string{"vm.swappiness": "60", "net.core.somaxconn": "128"}, Persisted: map[string]facts.PersistedSysctl{},
				Feasibility: &facts.Feasibility{SysctlModes: map[string]string{"vm.swappiness": "-rw-r--r--", "net.core.somaxconn": "-rw-r--r--"},
					Dirs: map[string]facts.Dir{"/etc": rw, "/etc/sysctl.d": rw}, Container: tc.container, ProcSysReadOnly: tc.procSysRO}}
			p := PlanHost("h", f, findings, Selector{})
			var got []string
			for _, c := range p.Changes {
				got = append(got, c.Target)
			}
			if strings.Join(got, ",") != strings.Join(tc.planned, ",") {
				t.Errorf("planned %v, want %v (infeasible %+v)", got, tc.planned, p.Infeasible)
			}
			var reason string
			for _, no := range p.Infeasible {
				if no.Target == "vm.swappiness" {
					reason = no.Reason
					if !strings.Contains(no.Instead, "vm.swappiness = 1") {
						t.Errorf("instead %q does not say what to set where", no.Instead)
					}
				}
			}
			if reason != tc.reason {
				t.Errorf("vm.swappiness: %q, want %q", reason, tc.reason)
			}
		})
	}
}
