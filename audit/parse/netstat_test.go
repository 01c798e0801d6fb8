package parse

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNetstat(t *testing.T) {
	tests := []struct {
		file    string
		prefix  string
		want    map[string]int64 // subset that must match
		absent  []string         // counters this kernel does not have
		columns int              // number of counters under prefix
	}{
		{
			file:   "netstat/linux-6.18-this-machine.txt",
			prefix: "TcpExt",
			want: map[string]int64{"SyncookiesSent": 0, "ListenOverflows": 0, "ListenDrops": 0,
				"TCPReqQFullDoCookies": 0, "TCPReqQFullDrop": 0, "TW": 16},
			columns: 135,
		},
		{
			file:    "netstat/centos7-linux-3.10.txt",
			prefix:  "TcpExt",
			want:    map[string]int64{"SyncookiesFailed": 9, "EmbryonicRsts": 9, "DelayedACKs": 242515, "TCPRcvCoalesce": 440152, "BusyPollRxPackets": 0, "TCPSpuriousRtxHostQueues": 45},
			absent:  []string{"TCPMigrateReqSuccess", "TCPAOGood", "TCPAutoCorking", "PFMemallocDrop"},
			columns: 95,
		},
		{
			file:    "netstat/node_exporter-fixture-linux-3.x.txt",
			prefix:  "TcpExt",
			want:    map[string]int64{"SyncookiesFailed": 2, "TW": 388812, "TCPPureAcks": 1433940, "TCPOFOQueue": 42, "TCPReqQFullDoCookies": 0},
			absent:  []string{"TCPRcvCoalesce", "TCPFastOpenActive", "BusyPollRxPackets"},
			columns: 83,
		},
		{
			file:    "netstat/node_exporter-fixture-linux-3.x.txt",
			prefix:  "IpExt",
			want:    map[string]int64{"InOctets": 6286396970, "OutOctets": 2786264347}, // > int32
			columns: 12,
		},
		{
			file:    "netstat/jc-fixture-linux-5.x-mptcp.txt",
			prefix:  "MPTcpExt",
			want:    map[string]int64{"MPCapableSYNRX": 0, "InfiniteMapRx": 0},
			columns: 13,
		},
		{
			file:    "netstat/jc-fixture-linux-5.x-mptcp.txt",
			prefix:  "TcpExt",
			want:    map[string]int64{"TCPHPHits": 2387, "TCPOrigDataSent": 119438, "TcpDuplicateDataRehash": 0},
			columns: 121,
		},
		{
			file:    "netstat/snmp-linux-6.18-this-machine.txt",
			prefix:  "Tcp",
			want:    map[string]int64{"RtoAlgorithm": 1, "MaxConn": -1},
			columns: 15,
		},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file)+"/"+tt.prefix, func(t *testing.T) {
			got, err := Netstat(readTestdata(t, tt.file))
			if err != nil {
				t.Fatalf("Netstat: %v", err)
			}
			m := got[tt.prefix]
			if len(m) != tt.columns {
				t.Errorf("%s has %d counters, want %d", tt.prefix, len(m), tt.columns)
			}
			for k, v := range tt.want {
				if g, ok := m[k]; !ok || g != v {
					t.Errorf("%s.%s = %d (present %v), want %d", tt.prefix, k, g, ok, v)
				}
			}
			for _, k := range tt.absent {
				if _, ok := m[k]; ok {
					t.Errorf("%s.%s present, want absent on this kernel", tt.prefix, k)
				}
			}
		})
	}
}

func TestNetstatByNameNotPosition(t *testing.T) {
	// The same counters in another order must give the same values.
	a := "TcpExt: SyncookiesSent ListenOverflows\nTcpExt: 5 7\n"
	b := "TcpExt: ListenOverflows SyncookiesSent\nTcpExt: 7 5\n"
	ga, err1 := Netstat(a)
	gb, err2 := Netstat(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if ga["TcpExt"]["SyncookiesSent"] != 5 || gb["TcpExt"]["SyncookiesSent"] != 5 || gb["TcpExt"]["ListenOverflows"] != 7 {
		t.Errorf("got %v and %v", ga, gb)
	}
}

func TestNetstatErrors(t *testing.T) {
	six := readTestdata(t, "netstat/linux-6.18-this-machine.txt")
	lines := strings.Split(six, "\n")
	tests := []struct {
		name, in, wantSub string
	}{
		{"empty", "", "empty input"},
		{"missing value", "TcpExt: A B C\nTcpExt: 1 2\n", "TcpExt: 3 names on line 1 but 2 values on line 2"},
		{"extra value", "IpExt: A\nIpExt: 1 2\n", "IpExt: 1 names"},
		{"not a number", "TcpExt: A B\nTcpExt: 1 x\n", `TcpExt: value "x" for B`},
		{"float", "TcpExt: A\nTcpExt: 1.5\n", `TcpExt: value "1.5" for A`},
		{"header alone", "TcpExt: A B\n", "TcpExt: header on line 1 has no value line"},
		{"prefix mismatch", "TcpExt: A\nIpExt: 1\n", `TcpExt: header on line 1 is followed by "IpExt" values`},
		{"truncated capture", strings.Join(lines[:3], "\n"), "IpExt: header on line 3 has no value line"},
		{"garbage", "cat: /proc/net/netstat: No such file or directory\n", "netstat: line 1"},
		{"no prefix", "hello world\n1 2\n", `expected "Prefix: fields…"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Netstat(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.wantSub) {
				t.Fatalf("Netstat error = %v, want it to contain %q", err, tt.wantSub)
			}
		})
	}
}

func TestNetstatAllSamplesParse(t *testing.T) {
	for _, p := range allSamples(t, "netstat") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Netstat(string(b)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func FuzzNetstat(f *testing.F) {
	for _, p := range allSamples(f, "netstat") {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("TcpExt: A\nTcpExt: 99999999999999999999\n")
	f.Add("TcpExt:\nTcpExt:\n")
	f.Fuzz(func(t *testing.T, in string) {
		m, err := Netstat(in)
		if err != nil && m != nil {
			t.Fatalf("non-nil map with error %v", err)
		}
	})
}
