package parse

import (
	"reflect"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func TestSysctlFiles(t *testing.T) {
	tests := []struct {
		file string
		want map[string]facts.PersistedSysctl
	}{
		{
			file: "sysctl/ubuntu-like-gather.txt",
			want: map[string]facts.PersistedSysctl{
				// 10-network-security.conf (etc) then 50-default.conf (usr/lib) by name.
				"net.ipv4.conf.default.rp_filter": {Value: "2", File: "/usr/lib/sysctl.d/50-default.conf", Line: 20,
					Overridden: []string{"/etc/sysctl.d/10-network-security.conf:5=2"}},
				"net.ipv4.conf.all.rp_filter": {Value: "1", File: "/usr/lib/sysctl.d/50-default.conf", Line: 22,
					Overridden: []string{"/etc/sysctl.d/10-network-security.conf:6=2"}},
				// 50-default (128) < 60-kafka in /etc (4096; masks /usr/lib's 60-kafka) < 99-sysctl → /etc/sysctl.conf (1024).
				"net.core.somaxconn": {Value: "1024", File: "/etc/sysctl.conf", Line: 12,
					Overridden: []string{"/usr/lib/sysctl.d/50-default.conf:21=128", "/etc/sysctl.d/60-kafka.conf:3=4096"}},
				"net.ipv4.tcp_max_syn_backlog": {Value: "8192", File: "/etc/sysctl.d/60-kafka.conf", Line: 4},
				"net.ipv4.tcp_rmem":            {Value: "4096 87380 134217728", File: "/etc/sysctl.d/60-kafka.conf", Line: 5},
				"net.ipv4.tcp_syncookies": {Value: "1", File: "/etc/sysctl.conf", Line: 7,
					Overridden: []string{"/etc/sysctl.d/60-kafka.conf:6=0"}},
				// 80-local.conf: /usr/local/lib masks /lib.
				"net.ipv4.tcp_tw_reuse": {Value: "1", File: "/usr/local/lib/sysctl.d/80-local.conf", Line: 2},
				// 70-masked.conf is masked by /etc's link to /dev/null: tcp_fin_timeout never set.
			},
		},
		{
			file: "sysctl/centos7-no-99-link-gather.txt",
			want: map[string]facts.PersistedSysctl{
				"net.bridge.bridge-nf-call-ip6tables": {Value: "0", File: "/usr/lib/sysctl.d/00-system.conf", Line: 7},
				"net.bridge.bridge-nf-call-iptables":  {Value: "0", File: "/usr/lib/sysctl.d/00-system.conf", Line: 8},
				"kernel.sysrq":                        {Value: "16", File: "/usr/lib/sysctl.d/50-default.conf", Line: 15},
				// No link to /etc/sysctl.conf: it is applied last.
				"net.core.somaxconn": {Value: "2048", File: "/etc/sysctl.conf", Line: 11,
					Overridden: []string{"/etc/sysctl.d/90-kafka.conf:1=4096"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got := SysctlFiles(readTestdata(t, tt.file))
			if !reflect.DeepEqual(got, tt.want) {
				for k, v := range got {
					if !reflect.DeepEqual(tt.want[k], v) {
						t.Errorf("%s = %+v, want %+v", k, v, tt.want[k])
					}
				}
				for k := range tt.want {
					if _, ok := got[k]; !ok {
						t.Errorf("%s missing", k)
					}
				}
			}
		})
	}
}

func TestSysctlFilesCorners(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]facts.PersistedSysctl
	}{
		{"empty", "", map[string]facts.PersistedSysctl{}},
		{
			name: "relative link to sysctl.conf",
			in:   "@link /etc/sysctl.d/99-sysctl.conf ../sysctl.conf\n3:vm.swappiness=10\n@file /etc/sysctl.d/zz-late.conf\n1:vm.swappiness = 1\n@file /etc/sysctl.conf\n3:vm.swappiness=10\n",
			want: map[string]facts.PersistedSysctl{"vm.swappiness": {Value: "1", File: "/etc/sysctl.d/zz-late.conf", Line: 1,
				Overridden: []string{"/etc/sysctl.conf:3=10"}}},
		},
		{
			name: "interface name with a dot in slash form",
			in:   "@file /etc/sysctl.d/10-vlan.conf\n1:net/ipv4/conf/eth0.100/forwarding = 1\n",
			want: map[string]facts.PersistedSysctl{"net.ipv4.conf.eth0/100.forwarding": {Value: "1", File: "/etc/sysctl.d/10-vlan.conf", Line: 1}},
		},
		{
			name: "not .conf, unknown dir, comments, no assignment, glob",
			in: "@file /etc/sysctl.d/README\n1:vm.a=1\n@file /opt/sysctl.d/x.conf\n1:vm.b=1\n" +
				"@file /etc/sysctl.d/a.conf\n1:# vm.c=1\n2:; vm.d=1\n3:vm.e\n4:net.ipv4.conf.*.rp_filter=0\n5:=7\n6: vm.f =  a   b \n",
			want: map[string]facts.PersistedSysctl{"vm.f": {Value: "a b", File: "/etc/sysctl.d/a.conf", Line: 6}},
		},
		{
			name: "same file twice in one file",
			in:   "@file /etc/sysctl.d/a.conf\n1:vm.x=1\n2:vm.x=2\n",
			want: map[string]facts.PersistedSysctl{"vm.x": {Value: "2", File: "/etc/sysctl.d/a.conf", Line: 2, Overridden: []string{"/etc/sysctl.d/a.conf:1=1"}}},
		},
		{
			name: "garbage lines ignored",
			in:   "ls: cannot access '/run/sysctl.d': No such file or directory\n@file /etc/sysctl.d/a.conf\nx:vm.y=1\n2:vm.z=1\n",
			want: map[string]facts.PersistedSysctl{"vm.z": {Value: "1", File: "/etc/sysctl.d/a.conf", Line: 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SysctlFiles(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
