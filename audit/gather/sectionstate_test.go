package gather_test

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/gather"
	"github.com/kaudit/kaudit/internal/remote"
)

// A section end line's state is input from the host: one kaudit knows is
// noted as it is, any other is noted as an error saying so, never kept.
func TestAssembleSectionEndState(t *testing.T) {
	for _, tt := range []struct {
		end     remote.State
		want    facts.SectionState
		message string // substring
	}{
		{"denied", facts.SectionDenied, "x"},
		{"missing", facts.SectionMissing, "x"},
		{"absent", facts.SectionAbsent, "x"},
		{"error", facts.SectionError, "x"},
		{"partial", facts.SectionPartial, "x"},
		{"bogus", facts.SectionError, `unknown section state "bogus"`},
		{"Denied", facts.SectionError, `unknown section state "Denied"`},
	} {
		t.Run(string(tt.end), func(t *testing.T) {
			f := gather.Assemble(map[string]remote.Section{facts.SecNetstat: {Name: facts.SecNetstat, State: tt.end, Body: "x"}}, 9092)
			st, ok := f.Sections[facts.SecNetstat]
			if !ok || st.State != tt.want || !strings.Contains(st.Message, tt.message) {
				t.Errorf("noted %+v (present %v), want state %q with %q", st, ok, tt.want, tt.message)
			}
		})
	}
}

// A sysctl the script could not read is kept by key with why, typed, so
// that a rule tells a module not loaded ("absent") from a read refused;
// the section's message still names them for the reader.
func TestAssembleSysctlUnread(t *testing.T) {
	body := "net.core.somaxconn=4096\nnet.netfilter.nf_conntrack_max!absent\nvm.zone_reclaim_mode!denied\nno separator"
	f := gather.Assemble(map[string]remote.Section{facts.SecSysctl: {Name: facts.SecSysctl, State: "ok", Body: body}}, 9092)
	if f.Sysctl["net.core.somaxconn"] != "4096" || len(f.Sysctl) != 1 {
		t.Errorf("Sysctl = %v", f.Sysctl)
	}
	want := map[string]string{"net.netfilter.nf_conntrack_max": "absent", "vm.zone_reclaim_mode": "denied"}
	if len(f.SysctlUnread) != len(want) || f.SysctlUnread["net.netfilter.nf_conntrack_max"] != "absent" || f.SysctlUnread["vm.zone_reclaim_mode"] != "denied" {
		t.Errorf("SysctlUnread = %v, want %v", f.SysctlUnread, want)
	}
	if st := f.Sections[facts.SecSysctl]; st.State != facts.SectionPartial || !strings.Contains(st.Message, "vm.zone_reclaim_mode (denied)") {
		t.Errorf("section noted %+v", st)
	}
}
