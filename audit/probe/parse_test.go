package probe

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

const testMarker = "kaudit-0123456789abcdef01234567"

func TestParseSamples(t *testing.T) {
	tests := []struct {
		file      string
		state     facts.ProbeState
		reason    string   // substring
		pairs     [][2]int // client snd, server rcv per case
		transfers []int    // flowed bytes per case, -1 = no transfer line
	}{
		{"ok-6.18-this-machine.txt", facts.ProbeOK, "", [][2]int{{1, 1}, {1, 1}, {7, 7}}, []int{393216, 393216, 393216}},
		{"ok-python3-minimal-this-machine.txt", facts.ProbeOK, "", [][2]int{{1, 1}, {1, 1}, {7, 7}}, []int{393216, 393216, 393216}},
		{"mismatch-4.18.0-240.el8-reconstructed.txt", facts.ProbeOK, "", [][2]int{{1, 7}, {1, 7}, {2, 7}}, []int{13312, 13312, 13312}},
		{"reverted-6.1-ok-reconstructed.txt", facts.ProbeOK, "", [][2]int{{1, 7}, {1, 7}, {2, 7}}, []int{13312, 13312, 26624}},
		// The user's run: case 1 measured the bug, its transfer stalled, the budget ran out.
		{"reverted-6.1-cut-after-case1-reconstructed.txt", facts.ProbeTimeout, "spent before the case SO_RCVBUF=65536 (1 of 3 cases measured) (kept: 1 handshake(s))", [][2]int{{1, 7}}, []int{13312}},
		{"reverted-6.1-killed-mid-transfer-reconstructed.txt", facts.ProbeTimeout, "exit 137", [][2]int{{1, 7}}, []int{-1}},
		{"sigalrm-mid-transfer-harness-this-machine.txt", facts.ProbeTimeout, "SIGALRM: the probe's hard limit passed while transferring with SO_RCVBUF=102400 (limit 279 ms) (kept: 1 handshake(s), the transfer with SO_RCVBUF 102400 not finished)", [][2]int{{1, 1}}, []int{-1}},
		{"killed-mid-transfer-harness-this-machine.txt", facts.ProbeTimeout, "exit 137", [][2]int{{1, 1}}, []int{-1}},
		{"no-cookie-reconstructed.txt", facts.ProbeOK, "", [][2]int{{1, 1}}, []int{393216}},
		{"needs-root-this-machine.txt", facts.ProbeNeedsRoot, "uid 65534", nil, nil},
		{"no-python-this-machine.txt", facts.ProbeNoPython, "/nonexistent/python3", nil, nil},
		{"unsupported-no-unshare-no-ctypes-this-machine.txt", facts.ProbeUnsupported, "neither os.unshare nor ctypes", nil, nil},
		{"killed-this-machine.txt", facts.ProbeTimeout, "exit 137", nil, nil},
		{"host-changed-reconstructed.txt", facts.ProbeHostChanged, "restored to 1", nil, nil},
		{"truncated.txt", facts.ProbeError, "truncated (session cut?) (kept: 1 handshake(s), the transfer with SO_RCVBUF 102400 not finished)", [][2]int{{1, 7}}, []int{-1}},
		{"garbage.txt", facts.ProbeError, "client_snd_wscale=99 above the TCP maximum", nil, nil},
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
			if len(p.Cases) != len(tt.pairs) {
				t.Fatalf("%d cases, want %d", len(p.Cases), len(tt.pairs))
			}
			for i, c := range p.Cases {
				if got := [2]int{c.ClientSndWscale, c.ServerRcvWscale}; got != tt.pairs[i] {
					t.Errorf("case %d: wscale %v, want %v", i, got, tt.pairs[i])
				}
				flowed := c.Flowed
				if c.Bytes == 0 {
					flowed = -1
				}
				if flowed != tt.transfers[i] {
					t.Errorf("case %d: flowed %d (bytes %d), want %d", i, c.Flowed, c.Bytes, tt.transfers[i])
				}
			}
		})
	}
}

func TestParseOKFields(t *testing.T) {
	b, err := os.ReadFile("testdata/reverted-6.1-ok-reconstructed.txt")
	if err != nil {
		t.Fatal(err)
	}
	p := Parse(b, testMarker)
	want := facts.ProbeCase{RcvBuf: 102400, Effective: 204800, ClientSndWscale: 1, ClientRcvWscale: 7, ServerSndWscale: 7,
		ServerRcvWscale: 7, CookiesSent: 1, CookiesRecv: 1, Bytes: 393216, Flowed: 13312, MS: 907, LimitMS: 906}
	if p.Cases[0] != want {
		t.Errorf("case 0 = %+v, want %+v", p.Cases[0], want)
	}
	if p.Release != "6.1.0-kaudit-revert" || p.Python != "3.11.2 /usr/bin/python3" || p.RmemMax != 212992 ||
		p.HostSyncookiesBefore != "1" || p.HostSyncookiesDuring != "1" || p.HostSyncookiesAfter != "1" || p.Unshare != "unshare(1)" ||
		p.NetnsHost != "net:[4026531840]" || p.NetnsProbe != "net:[4026532164]" || p.RemoteMS != 2851 {
		t.Errorf("fields: %+v", p)
	}
}

// A probe's output cut at any point (a line boundary, or inside a line)
// keeps exactly the handshakes and transfers whose lines are complete, and
// is never ok.
func TestParseTruncatedEveryLine(t *testing.T) {
	b, err := os.ReadFile("testdata/reverted-6.1-ok-reconstructed.txt")
	if err != nil {
		t.Fatal(err)
	}
	end := bytes.Index(b, []byte("\n"+testMarker+" end probe"))
	for cut := 1; cut <= end; cut++ {
		in := b[:cut]
		complete := in[:bytes.LastIndexByte(in, '\n')+1]
		hs := bytes.Count(complete, []byte("\nhandshake="))
		tr := bytes.Count(complete, []byte("\ntransfer="))
		p := Parse(in, testMarker)
		if !bytes.Contains(complete, []byte(testMarker+" begin probe\n")) {
			if p.State != facts.ProbeError || len(p.Cases) != 0 {
				t.Fatalf("cut at %d (before the section): %s %d cases", cut, p.State, len(p.Cases))
			}
			continue
		}
		if p.State != facts.ProbeError || !strings.Contains(p.Reason, "truncated") {
			t.Fatalf("cut at %d: state %s (%s), want error truncated", cut, p.State, p.Reason)
		}
		if len(p.Cases) != hs {
			t.Fatalf("cut at %d: %d cases, want %d", cut, len(p.Cases), hs)
		}
		got := 0
		for i, c := range p.Cases {
			if [2]int{c.ClientSndWscale, c.ServerRcvWscale} != [2]int{[]int{1, 1, 2}[i], 7} {
				t.Fatalf("cut at %d: case %d %+v", cut, i, c)
			}
			if c.Bytes > 0 {
				got++
			}
		}
		if got != tr {
			t.Fatalf("cut at %d: %d transfers, want %d", cut, got, tr)
		}
	}
}

func TestParseRejects(t *testing.T) {
	const (
		hs = "handshake=rcvbuf=1 effective=2 client_snd_wscale=1 client_rcv_wscale=7 server_snd_wscale=7 server_rcv_wscale=1 cookies_sent=1 cookies_recv=1"
		tr = "transfer=rcvbuf=1 bytes=1 flowed=1 ms=1 limit_ms=1"
	)
	if p := Parse([]byte(testMarker+" begin probe\n"+hs+"\n"+tr+"\nstate=ok\n\n"+testMarker+" end probe ok\n"+testMarker+" done\n"), testMarker); p.State != facts.ProbeOK {
		t.Fatalf("the valid base of the rejects is not ok: %+v", p)
	}
	frame := func(body string) []byte {
		return []byte(testMarker + " begin probe\n" + body + "\n\n" + testMarker + " end probe ok\n" + testMarker + " done\n")
	}
	for name, body := range map[string]string{
		"unknown key":                "state=ok\nfoo=bar",
		"unknown state":              "state=rooted",
		"handshake missing field":    "handshake=rcvbuf=1 effective=2\nstate=ok",
		"handshake repeated field":   "handshake=rcvbuf=1 rcvbuf=1\nstate=ok",
		"handshake not a number":     "handshake=rcvbuf=1 effective=2 client_snd_wscale=x client_rcv_wscale=7 server_snd_wscale=7 server_rcv_wscale=1 cookies_sent=1 cookies_recv=1\nstate=ok",
		"handshake signed number":    "handshake=rcvbuf=1 effective=2 client_snd_wscale=+1 client_rcv_wscale=7 server_snd_wscale=7 server_rcv_wscale=1 cookies_sent=1 cookies_recv=1\nstate=ok",
		"handshake wscale 15":        "handshake=rcvbuf=1 effective=2 client_snd_wscale=1 client_rcv_wscale=7 server_snd_wscale=15 server_rcv_wscale=1 cookies_sent=1 cookies_recv=1\nstate=ok",
		"handshake unknown field":    "handshake=rcvbuf=1 effective=2 client_snd_wscale=1 client_rcv_wscale=7 server_snd_wscale=7 server_rcv_wscale=1 cookies_sent=1 cookies_recv=1 x=1\nstate=ok",
		"transfer without handshake": "transfer=rcvbuf=1 bytes=1 flowed=1 ms=1 limit_ms=1\nstate=ok",
		"transfer of another case":   hs + "\ntransfer=rcvbuf=2 bytes=1 flowed=1 ms=1 limit_ms=1\nstate=ok",
		"transfer twice":             hs + "\n" + tr + "\n" + tr + "\nstate=ok",
		"transfer flowed > bytes":    hs + "\ntransfer=rcvbuf=1 bytes=1 flowed=2 ms=1 limit_ms=1\nstate=ok",
		"transfer missing field":     hs + "\ntransfer=rcvbuf=1 bytes=1 flowed=1 ms=1\nstate=ok",
		"handshake before transfer":  hs + "\n" + hs + "\nstate=ok",
		"ok without transfer":        hs + "\nstate=ok",
		"ok without case":            "state=ok",
		"case after state":           "state=ok\n" + hs + "\n" + tr,
		"old case line":              "state=ok\ncase=rcvbuf=102400 effective=204800 client_snd_wscale=1 client_rcv_wscale=7 server_snd_wscale=7 server_rcv_wscale=7 cookies_sent=1 cookies_recv=1 bytes=1 flowed=1 ms=1",
		"key repeated":               hs + "\n" + tr + "\nrelease=6.1.0\nrelease=6.1.1\nstate=ok",
		"unknown unshare":            hs + "\n" + tr + "\nunshare=magic\nstate=ok",
		"negative":                   hs + "\n" + tr + "\nstate=ok\nrmem_max=-5",
		"same netns":                 hs + "\n" + tr + "\nnetns_host=net:[1]\nnetns_probe=net:[1]\nstate=ok",
		"host moved after":           hs + "\n" + tr + "\nhost_syncookies_before=1\nstate=ok\nhost_syncookies_after=2",
		"no state":                   "release=6.1.0\nexit=1",
		"alarm":                      "release=6.1.0\nexit=142",
		"sysctl not a number":        hs + "\n" + tr + "\nhost_syncookies_before=1; rm -rf /\nstate=ok",
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
