package parse

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

type LC = facts.LocalConns

func TestEstablishedCounts(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []LC
	}{
		{"conns/counted-est-0-this-machine.txt", []LC{}},
		{"conns/counted-est-1-this-machine.txt", []LC{{Addr: "[::ffff:10.210.0.1]", Port: 9092, Count: 1}}},
		{"conns/counted-est-1-H-this-machine.txt", []LC{{Addr: "[::ffff:10.210.0.1]", Port: 9092, Count: 1}}},
		{"conns/counted-est-2535-this-machine.txt", []LC{
			{Addr: "10.210.0.1", Port: 8080, Count: 5},
			{Addr: "[::ffff:10.210.0.1]", Port: 9092, Count: 2000},
			{Addr: "[fd10::1]", Port: 9092, Count: 500},
			{Addr: "10.210.0.1", Port: 9093, Count: 30},
		}},
	} {
		got, err := EstablishedCounts(readTestdata(t, tc.file))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, %v; want %+v", tc.file, got, err, tc.want)
		}
	}
	for _, bad := range []string{"9092 12", "10.0.0.1:9092", "10.0.0.1:9092 x", "10.0.0.1:http 3", "10.0.0.1:9092 -1"} {
		if _, err := EstablishedCounts(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// C builds a Conn; the scales are the side's own snd,rcv.
func C(local string, lport int, peer string, pport, snd, rcv int) facts.Conn {
	return facts.Conn{Local: local, LocalPort: lport, Peer: peer, PeerPort: pport, SndWscale: snd, RcvWscale: rcv}
}

func TestSSTCPInfo(t *testing.T) {
	broker := []facts.Conn{
		C("10.210.0.1", 9093, "10.210.0.2", 34396, 10, 10),
		C("10.210.0.1", 8080, "10.210.0.2", 42178, 10, 10),
		C("[fd10::1]", 9092, "[fd10::2]", 60772, 10, 1),
		C("[::ffff:10.210.0.1]", 9092, "[::ffff:10.210.0.2]", 38370, 10, 1),
		C("[::ffff:10.210.0.1]", 9092, "[::ffff:10.210.0.2]", 38400, 10, 1),
		C("[::ffff:10.210.0.1]", 9092, "[::ffff:10.210.0.2]", 38386, 10, 1),
		C("[fd10::1]", 9092, "[fd10::2]", 60766, 10, 1),
	}
	client := []facts.Conn{
		C("10.210.0.2", 38370, "10.210.0.1", 9092, 1, 10),
		C("10.210.0.2", 38386, "10.210.0.1", 9092, 1, 10),
		C("10.210.0.2", 38400, "10.210.0.1", 9092, 1, 10),
		C("10.210.0.2", 42178, "10.210.0.1", 8080, 10, 10),
		C("10.210.0.2", 34396, "10.210.0.1", 9093, 10, 10),
		C("[fd10::2]", 60766, "[fd10::1]", 9092, 1, 10),
		C("[fd10::2]", 60772, "[fd10::1]", 9092, 1, 10),
	}
	for _, tc := range []struct {
		file string
		want []facts.Conn
	}{
		{"conns/pair-broker-ss-tin-state-established-this-machine.txt", broker},
		{"conns/pair-client-ss-tin-state-established-this-machine.txt", client},
	} {
		got, err := SSTCPInfo(readTestdata(t, tc.file))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v\n got %+v\nwant %+v", tc.file, err, got, tc.want)
		}
	}
	shrunk, total, err := ConnsSection(readTestdata(t, "conns/pair-broker-shrunk-lim4-this-machine.txt"))
	if err != nil || total != 7 || !reflect.DeepEqual(shrunk, broker[:4]) {
		t.Errorf("conns.awk lim=4: %d %v %+v", total, err, shrunk)
	}
	if _, _, err := ConnsSection("0 0 1.1.1.1:1 2.2.2.2:2\n"); err == nil {
		t.Error("no total line accepted")
	}
	if _, _, err := ConnsSection("0 0 1.1.1.1:1 2.2.2.2:2\n\t wscale:1,1\ntotal=0\n"); err == nil {
		t.Error("total below the listed connections accepted")
	}
	// ss -tin with a State column: the same sockets, plus the LISTEN rows skipped.
	all, err := SSTCPInfo(readTestdata(t, "conns/pair-broker-ss-tin-this-machine.txt"))
	if err != nil || len(all) == 0 {
		t.Fatalf("ss -tin: %v %v", all, err)
	}
	// No wscale (window scaling off), and the talk's 7 in the shrunk form.
	got, err := SSTCPInfo("0 0 10.0.0.1:9092 10.0.0.2:5000\n\t cubic rto:204 mss:1448\n0 0 10.0.0.1:9092 10.0.0.2:5001\n\t wscale:1,7\n")
	want := []facts.Conn{C("10.0.0.1", 9092, "10.0.0.2", 5000, -1, -1), C("10.0.0.1", 9092, "10.0.0.2", 5001, 1, 7)}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v %v", got, err)
	}
	for _, bad := range []string{"0 0 10.0.0.1 10.0.0.2:5000\n", "ESTAB x y 1.1.1.1:1 2.2.2.2:2\n", "command not found\n"} {
		if _, err := SSTCPInfo(bad); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
