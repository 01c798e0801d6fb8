package gather

import (
	"reflect"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/remote"
)

func TestBrokerUnitSection(t *testing.T) {
	svc := "pid=42\ncgroup=0::/system.slice/kafka.service\nsystemd=yes\nunit=kafka.service\n"
	tests := []struct {
		name      string
		state     remote.State
		body      string
		want      *facts.BrokerUnit
		wantState string // the section's noted state; "" when not noted
	}{
		{"service", "ok", svc + "show=LimitNOFILE=8192\nshow=LimitNOFILESoft=4096\nshow=FragmentPath=/etc/systemd/system/kafka.service\nshow=DropInPaths=\n",
			&facts.BrokerUnit{Name: "kafka.service", Cgroup: "/system.slice/kafka.service", SystemdRuns: true, NoFile: &facts.Limit{Soft: 4096, Hard: 8192},
				FragmentPath: "/etc/systemd/system/kafka.service"}, ""},
		{"infinity", "ok", svc + "show=LimitNOFILE=infinity\nshow=LimitNOFILESoft=infinity\n",
			&facts.BrokerUnit{Name: "kafka.service", Cgroup: "/system.slice/kafka.service", SystemdRuns: true, NoFile: &facts.Limit{Soft: facts.Unlimited, Hard: facts.Unlimited}}, ""},
		{"not a service (this machine)", "ok", "pid=42\ncgroup=9:name=systemd:/\ncgroup=4:memory:/x\ncgroup=0::/\nsystemd=no\n", nil, "absent"},
		{"container scope", "ok", "pid=42\ncgroup=0::/system.slice/docker-ab.scope\nsystemd=yes\n", nil, "absent"},
		{"no systemd", "ok", "pid=42\ncgroup=1:name=systemd:/system.slice/kafka.service\nsystemd=no\n",
			&facts.BrokerUnit{Name: "kafka.service", Cgroup: "/system.slice/kafka.service"}, "partial"},
		{"show failed", "ok", svc + "show=Failed to connect to bus: No such file or directory\n",
			&facts.BrokerUnit{Name: "kafka.service", Cgroup: "/system.slice/kafka.service", SystemdRuns: true}, "partial"},
		{"script and cgroup disagree", "ok", "pid=42\ncgroup=0::/system.slice/kafka.service\nsystemd=yes\nunit=other.service\nshow=LimitNOFILE=1\nshow=LimitNOFILESoft=1\n",
			&facts.BrokerUnit{Name: "kafka.service", Cgroup: "/system.slice/kafka.service", SystemdRuns: true}, "error"},
		{"denied", "denied", "pid=42\n", nil, "denied"},
		{"no broker", "absent", "", nil, "absent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &assembler{f: &facts.Facts{Kafka: &facts.Kafka{PID: 42}, Sections: map[string]facts.SectionStatus{}}}
			a.brokerUnit(remote.Section{Name: facts.SecBrokerUnit, State: tt.state, Body: tt.body})
			if !reflect.DeepEqual(a.f.Kafka.Unit, tt.want) {
				t.Errorf("unit = %+v, want %+v", a.f.Kafka.Unit, tt.want)
			}
			if got := a.f.Sections[facts.SecBrokerUnit].State; string(got) != tt.wantState {
				t.Errorf("section state %q, want %q (%s)", got, tt.wantState, a.f.Sections[facts.SecBrokerUnit].Message)
			}
		})
	}
}
