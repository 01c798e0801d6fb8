package parse

import (
	"github.com/kaudit/kaudit/internal/safe"
	"reflect"
	"testing"
)

func TestParseCgroup(t *testing.T) {
	tests := []struct {
		file     string
		unit     string
		cgroup   string
		whyEmpty bool
	}{
		{"cgroup/v1-hybrid-this-machine-root.txt", "", "/", false},
		{"cgroup/v2-system-service.txt", "kafka.service", "/system.slice/kafka.service", true},
		{"cgroup/v2-debian12-vm-lab-kafka.txt", "kafka.service", "/system.slice/kafka.service", true},
		{"cgroup/v2-user-session.txt", "", "/user.slice/user-1000.slice/user@1000.service/app.slice/app-org.gnome.Terminal.slice/vte-spawn-2c4a7f5e.scope", false},
		{"cgroup/v2-docker-scope.txt", "", "/system.slice/docker-0123456789abcdef0123456789abcdef.scope", false},
		{"cgroup/hybrid-docker-cgroupfs.txt", "", "/docker/ba3398f7201b5ececf439dcadea00569d5213ae83f94135b89c3bcc7dadb2136", false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParseCgroup(readTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got.Unit != tt.unit || got.Cgroup != tt.cgroup || (got.Why == "") != tt.whyEmpty {
				t.Errorf("got %+v, want unit %q cgroup %q (why empty %v)", got, tt.unit, tt.cgroup, tt.whyEmpty)
			}
		})
	}
}

func TestParseCgroupCases(t *testing.T) {
	tests := []struct {
		name, text, unit string
		err              bool
	}{
		{"v1 only", "1:name=systemd:/system.slice/confluent-server.service\n", "confluent-server.service", false},
		{"other slice", "0::/kafka.slice/kafka@1.service\n", "kafka@1.service", false},
		{"nested under service", "0::/system.slice/kafka.service/payload\n", "kafka.service", false},
		{"bad unit name", "0::/system.slice/ka$fka.service\n", "", false},
		{"kubepods", "0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-ab.scope\n", "", false},
		{"garbage", "not a cgroup line\n", "", true},
		{"no systemd line", "4:memory:/x\n", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCgroup(tt.text)
			if (err != nil) != tt.err || got.Unit != tt.unit {
				t.Errorf("got %+v, %v; want unit %q err %v", got, err, tt.unit, tt.err)
			}
		})
	}
}

func TestServiceName(t *testing.T) {
	for name, want := range map[string]bool{
		"kafka.service": true, "kafka@1.service": true, "cp-kafka_2:x.service": true,
		"kafka": false, "kafka.scope": false, "../x.service": false, "a b.service": false,
		"a;rm.service": false, "a\n.service": false, "-x.service": true,
	} {
		if got := safe.ServiceName(name); got != want {
			t.Errorf("safe.ServiceName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestParseUnitShow(t *testing.T) {
	tests := []struct {
		file string
		want UnitShow
	}{
		{"systemctl-show/debian12-vm-lab-unit-4096.txt", UnitShow{4096, 4096, "/etc/systemd/system/kafka.service", nil}},
		{"systemctl-show/reconstructed-debian-default.txt", UnitShow{524288, 1024, "/lib/systemd/system/cron.service",
			[]string{"/etc/systemd/system/cron.service.d/10-a.conf", "/run/systemd/system/cron.service.d/50-b.conf"}}},
		{"systemctl-show/reconstructed-infinity.txt", UnitShow{-1, -1, "/etc/systemd/system/kafka.service",
			[]string{"/etc/systemd/system/kafka.service.d/90-kaudit-nofile.conf"}}},
	}
	for _, tt := range tests {
		got, err := ParseUnitShow(readTestdata(t, tt.file))
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, %v; want %+v", tt.file, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "LimitNOFILE=4096\n", "LimitNOFILE=x\nLimitNOFILESoft=1\n", "junk\n"} {
		if _, err := ParseUnitShow(bad); err == nil {
			t.Errorf("ParseUnitShow(%q): no error", bad)
		}
	}
}
