package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

const testMarker = "kaudit-0123456789abcdef01234567"

func TestParseSamples(t *testing.T) {
	tests := []struct {
		file   string
		state  string
		reason string // substring
		cases  int
		pairs  [][2]int // client snd, server rcv per case
	}{
		{"ok-6.18-this-machine.txt", facts.ProbeOK, "", 3, [][2]int{{1, 1}, {1, 1}, {7, 7}}},
		{"mismatch-4.18.0-240.el8-reconstructed.txt", facts.ProbeOK, "", 3, [][2]int{{1, 7}, {1, 7}, {2, 7}}},
		{"no-cookie-reconstructed.txt", facts.ProbeOK, "", 1, [][2]int{{1, 1}}},
		{"needs-root-this-machine.txt", facts.ProbeNeedsRoot, "uid 65534", 0, nil},
		{"no-python-this-machine.txt", facts.ProbeNoPython, "/nonexistent/python3", 0, nil},
		{"killed-this-machine.txt", facts.ProbeTimeout, "exit 137", 0, nil},
		{"host-changed-reconstructed.txt", facts.ProbeHostChanged, "restored to 1", 0, nil},
		{"truncated.txt", facts.ProbeError, "truncated", 0, nil},
		{"garbage.txt", facts.ProbeError, "client_snd_wscale=99 above the TCP maximum", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			p := Parse(b, testMarker)
			if p.State != tt.state || !strings.Contains(p.Reason, tt.reason) {
				t.Fatalf("state %q reason %q, want %q containing %q", p.State, p.Reason, tt.state, tt.reason)
			}
			if len(p.Cases) != tt.cases {
				t.Fatalf("%d cases, want %d", len(p.Cases), tt.cases)
			}
			for i, c := range p.Cases {
				if got := [2]int{c.ClientSndWscale, c.ServerRcvWscale}; got != tt.pairs[i] {
					t.Errorf("case %d: wscale %v, want %v", i, got, tt.pairs[i])
				}
			}
		})
	}
}

func TestParseOKFields(t *testing.T) {
	b, err := os.ReadFile("testdata/mismatch-4.18.0-240.el8-reconstructed.txt")
	if err != nil {
		t.Fatal(err)
	}
	p := Parse(b, testMarker)
	want := facts.ProbeCase{RcvBuf: 102400, Effective: 204800, ClientSndWscale: 1, ClientRcvWscale: 7, ServerSndWscale: 7,
		ServerRcvWscale: 7, CookiesSent: 1, CookiesRecv: 1, Bytes: 393216, Flowed: 393216, MS: 41}
	if p.Cases[0] != want {
		t.Errorf("case 0 = %+v, want %+v", p.Cases[0], want)
	}
	if p.Release != "4.18.0-240.el8.x86_64" || p.Python != "3.6.8 /usr/libexec/platform-python" || p.RmemMax != 212992 ||
		p.HostSyncookiesBefore != "1" || p.HostSyncookiesDuring != "1" || p.HostSyncookiesAfter != "1" ||
		p.NetnsHost != "net:[4026531992]" || p.NetnsProbe != "net:[4026532301]" || p.RemoteMS != 131 {
		t.Errorf("fields: %+v", p)
	}
}

func TestParseRejects(t *testing.T) {
	frame := func(body string) []byte {
		return []byte(testMarker + " begin probe\n" + body + "\n\n" + testMarker + " end probe ok\n" + testMarker + " done\n")
	}
	for name, body := range map[string]string{
		"unknown key":         "state=ok\nfoo=bar",
		"unknown state":       "state=rooted",
		"case missing field":  "state=ok\ncase=rcvbuf=1 effective=2",
		"case repeated field": "state=ok\ncase=rcvbuf=1 rcvbuf=1",
		"negative":            "state=ok\nrmem_max=-5",
		"same netns":          "netns_host=net:[1]\nnetns_probe=net:[1]\nstate=ok",
		"host moved after":    "host_syncookies_before=1\nstate=ok\nhost_syncookies_after=2",
		"no state":            "release=6.1.0\nexit=1",
		"alarm":               "release=6.1.0\nexit=142",
		"sysctl not a number": "host_syncookies_before=1; rm -rf /\nstate=ok",
	} {
		t.Run(name, func(t *testing.T) {
			if p := Parse(frame(body), testMarker); p.State == facts.ProbeOK {
				t.Errorf("accepted: %+v", p)
			}
		})
	}
	if p := Parse([]byte("nothing here"), testMarker); p.State != facts.ProbeError || !strings.Contains(p.Reason, "no kaudit sections") {
		t.Errorf("no sections: %+v", p)
	}
}
