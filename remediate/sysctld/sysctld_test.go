package sysctld

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

const header = HeaderLine + "\n"

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing string
		set      map[string]string
		want     string
	}{
		{
			name: "new file",
			set:  map[string]string{"net.ipv4.tcp_syncookies": "0", "net.core.somaxconn": "4096"},
			want: header + "# Last run: r2\nnet.core.somaxconn = 4096\nnet.ipv4.tcp_syncookies = 0\n",
		},
		{
			name:     "keeps other keys, replaces a changed value",
			existing: header + "# Last run: r1\nnet.core.somaxconn = 1024\nnet.ipv4.tcp_max_syn_backlog = 8192\n",
			set:      map[string]string{"net.core.somaxconn": "4096"},
			want:     header + "# Last run: r2\nnet.core.somaxconn = 4096\nnet.ipv4.tcp_max_syn_backlog = 8192\n",
		},
		{
			name:     "hand edits re-sorted and normalised, comments dropped",
			existing: "; old\r\nnet.ipv4.tcp_rmem=4096   87380\t134217728\r\n# note\r\nnet.core.rmem_max = 1\r\n\r\nnet.core.rmem_max=2\r\n",
			set:      map[string]string{"net.ipv4.tcp_congestion_control": "bbr"},
			want:     header + "# Last run: r2\nnet.core.rmem_max = 2\nnet.ipv4.tcp_congestion_control = bbr\nnet.ipv4.tcp_rmem = 4096 87380 134217728\n",
		},
		{
			name:     "multi-value folded",
			existing: "",
			set:      map[string]string{"net.ipv4.tcp_wmem": "4096  65536   134217728"},
			want:     header + "# Last run: r2\nnet.ipv4.tcp_wmem = 4096 65536 134217728\n",
		},
		{
			name: "nothing to set",
			want: header + "# Last run: r2\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Render([]byte(tc.existing), tc.set, "r2")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			again, err := Render(got, tc.set, "r2")
			if err != nil {
				t.Fatal(err)
			}
			if string(again) != string(got) {
				t.Fatalf("not idempotent:\n%s\nthen\n%s", got, again)
			}
			back, err := Parse(got)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.set {
				if back[k] != Fold(v) {
					t.Errorf("%s reads back %q", k, back[k])
				}
			}
		})
	}
}

func TestRenderRejects(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing string
		set      map[string]string
		runID    string
		want     string
	}{
		{name: "key with slash", set: map[string]string{"net/core/somaxconn": "1"}, want: "sysctl key"},
		{name: "upper-case key", set: map[string]string{"NET.core.somaxconn": "1"}, want: "sysctl key"},
		{name: "ignore-error prefix", set: map[string]string{"-net.core.somaxconn": "1"}, want: "sysctl key"},
		{name: "newline in value", set: map[string]string{"a.b": "1\nkernel.core_pattern = |/tmp/x"}, want: "value"},
		{name: "pipe in value", set: map[string]string{"kernel.core_pattern": "|/bin/sh"}, want: "value"},
		{name: "slash in value", set: map[string]string{"a.b": "/x"}, want: "value"},
		{name: "tab in value", set: map[string]string{"a.b": "1\t2"}, want: "value"},
		{name: "empty value", set: map[string]string{"a.b": ""}, want: "value"},
		{name: "blank value", set: map[string]string{"a.b": "   "}, want: "value"},
		{name: "bad run id", set: map[string]string{"a.b": "1"}, runID: "r1\nx = y", want: "run id"},
		{name: "bad existing line", existing: header + "kernel.core_pattern = |/bin/sh\n", want: "line 2"},
		{name: "existing not an assignment", existing: "hello\n", want: "line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := tc.runID
			if id == "" {
				id = "r1"
			}
			_, err := Render([]byte(tc.existing), tc.set, id)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestOverriders(t *testing.T) {
	persisted := map[string]facts.PersistedSysctl{
		"net.core.somaxconn":           {Value: "128", File: "/etc/sysctl.d/99-sysctl.conf", Line: 3},
		"net.ipv4.tcp_syncookies":      {Value: "1", File: "/etc/sysctl.conf", Line: 20},
		"net.ipv4.tcp_max_syn_backlog": {Value: "512", File: "/usr/lib/sysctl.d/50-default.conf", Line: 9},
		"net.core.rmem_max":            {Value: "212992", File: "/etc/sysctl.d/zz-tuning.conf", Line: 1},
		"net.core.wmem_max":            {Value: "134217728", File: "/etc/sysctl.d/zz-tuning.conf", Line: 2}, // agrees
		"net.ipv4.tcp_timestamps":      {Value: "0", File: ManagedPath, Line: 4},                            // ours already
		"net.ipv4.tcp_rmem":            {Value: "4096 87380 6291456", File: "/run/sysctl.d/99-kaudit.conf", Line: 1},
		"net.ipv4.tcp_window_scaling":  {Value: "0", File: "/etc/sysctl.d/99-kaudit.conf.d", Line: 1},
	}
	set := map[string]string{
		"net.core.somaxconn":           "4096",
		"net.ipv4.tcp_syncookies":      "0",
		"net.ipv4.tcp_max_syn_backlog": "8192",
		"net.core.rmem_max":            "134217728",
		"net.core.wmem_max":            "134217728",
		"net.ipv4.tcp_timestamps":      "1",
		"net.ipv4.tcp_rmem":            "4096 87380 134217728",
		"net.ipv4.tcp_window_scaling":  "1",
		"net.core.default_qdisc":       "fq", // not persisted anywhere
	}
	got := Overriders(persisted, set, ManagedPath)
	want := []Override{
		{Key: "net.core.rmem_max", File: "/etc/sysctl.d/zz-tuning.conf", Line: 1, Value: "212992"},
		{Key: "net.core.somaxconn", File: "/etc/sysctl.d/99-sysctl.conf", Line: 3, Value: "128"},
		{Key: "net.ipv4.tcp_syncookies", File: "/etc/sysctl.conf", Line: 20, Value: "1"},
		{Key: "net.ipv4.tcp_window_scaling", File: "/etc/sysctl.d/99-kaudit.conf.d", Line: 1, Value: "0"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func TestWinsOver(t *testing.T) {
	for _, tc := range []struct {
		file string
		want bool
	}{
		{"/etc/sysctl.conf", true},
		{"/etc/sysctl.d/99-sysctl.conf", true},
		{"/usr/lib/sysctl.d/99-sysctl.conf", true},
		{"/etc/sysctl.d/99-zzz.conf", true},
		{"/etc/sysctl.d/99-kaudit.conf", false},
		{"/usr/lib/sysctl.d/99-kaudit.conf", false}, // masked by ours in /etc
		{"/etc/sysctl.d/99-k.conf", false},
		{"/etc/sysctl.d/10-network.conf", false},
		{"/usr/lib/sysctl.d/50-default.conf", false},
		{"/etc/sysctl.d/99-Zed.conf", false}, // 'Z' < 'k' in byte order
	} {
		if got := WinsOver(tc.file, ManagedPath); got != tc.want {
			t.Errorf("WinsOver(%s) = %v, want %v", tc.file, got, tc.want)
		}
	}
}
