package parse

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

type L = facts.Listener

func TestSSListeners(t *testing.T) {
	newLtn := []L{
		{Addr: "127.0.0.1", Port: 2181, Backlog: 128, Queue: 1},
		{Addr: "0.0.0.0", Port: 9092, Backlog: 50},
		{Addr: "127.0.0.53%lo", Port: 53, Backlog: 4096},
		{Addr: "[::ffff:127.0.0.1]", Port: 9094, Backlog: 200},
		{Addr: "[::1]", Port: 9999, Backlog: 3},
		{Addr: "*", Port: 9093, Backlog: 1024},
		{Addr: "[::]", Port: 9092, Backlog: 50},
	}
	withPID := func(ls []L) []L {
		out := make([]L, len(ls))
		for i, l := range ls {
			l.PID, l.Process = 3939, "python3"
			out[i] = l
		}
		return out
	}
	tests := []struct {
		file string
		want []L
	}{
		{"ss/iproute2-6.1-ltn-this-machine.txt", newLtn},
		{"ss/iproute2-6.1-ltnH-this-machine.txt", newLtn},
		{"ss/iproute2-6.1-ltnp-this-machine.txt", withPID(newLtn)},
		{"ss/iproute2-6.1-tn-state-listening-no-state-column-this-machine.txt", newLtn},
		{"ss/iproute2-6.1-tnpH-state-listening-this-machine.txt", withPID(newLtn)},
		{"ss/iproute2-6.1-tan-mixed-states-this-machine.txt", newLtn},
		{"ss/iproute2-6.1-ltnp-two-users-this-machine.txt", []L{
			{Addr: "0.0.0.0", Port: 9095, Backlog: 100, PID: 4065, Process: "python3"},
		}},
		{"ss/ubuntu-iproute2-tulpn-netid-two-users.txt", []L{
			{Addr: "127.0.0.54", Port: 53, Backlog: 4096, PID: 8515, Process: "systemd-resolve"},
			{Addr: "0.0.0.0", Port: 22, Backlog: 4096, PID: 2952, Process: "sshd"},
			{Addr: "127.0.0.1", Port: 9000, Backlog: 5, PID: 9163, Process: "python3"},
			{Addr: "127.0.0.53%lo", Port: 53, Backlog: 4096, PID: 8515, Process: "systemd-resolve"},
			{Addr: "[::]", Port: 22, Backlog: 4096, PID: 2952, Process: "sshd"},
		}},
		{"ss/centos7-iproute3.10-tln-header.txt", []L{{Addr: "*", Port: 8140, Backlog: 128}}},
		{"ss/centos7-iproute3.10-ntl-kafka-grep.txt", []L{{Addr: "::", Port: 9092, Backlog: 50}}},
		{"ss/centos7-iproute3.10-tnlp-grep-no-header.txt", []L{
			{Addr: "::", Port: 8080, Backlog: 100, PID: 27023, Process: "java"},
			{Addr: "::", Port: 8081, Backlog: 100, PID: 28687, Process: "java"},
			{Addr: "::", Port: 8082, Backlog: 100, PID: 28708, Process: "java"},
			{Addr: "::ffff:127.0.0.1", Port: 8091, Backlog: 1, PID: 28687, Process: "java"},
			{Addr: "::ffff:127.0.0.1", Port: 8092, Backlog: 1, PID: 28708, Process: "java"},
			{Addr: "::ffff:127.0.0.1", Port: 8005, Backlog: 1, PID: 27023, Process: "java"},
		}},
		{"ss/old-iproute-tulnp-netid.txt", []L{
			{Addr: "*", Port: 10000, Backlog: 128},
			{Addr: "*", Port: 22, Backlog: 128},
			{Addr: "127.0.0.1", Port: 3306, Backlog: 80},
			{Addr: "::", Port: 80, Backlog: 128},
			{Addr: "::", Port: 22, Backlog: 128},
		}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.file, "ss/"), func(t *testing.T) {
			got, err := SSListeners(readTestdata(t, tt.file))
			if err != nil {
				t.Fatalf("SSListeners: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestSSListenersSynthetic(t *testing.T) {
	tests := []struct {
		name, in string
		want     []L
	}{
		{"header only: no listeners", "State  Recv-Q Send-Q Local Address:Port Peer Address:PortProcess\n", []L{}},
		{"nothing at all (-H, no listeners)", "", []L{}},
		{"old users format without pid=", "LISTEN     0      128                       *:22                       *:*      users:((\"sshd\",1083,3))\n",
			[]L{{Addr: "*", Port: 22, Backlog: 128, PID: 1083, Process: "sshd"}}},
		// A line quoted in a public test (ss -tlnpe, old format, link-local address with scope).
		{"extended -e columns after users", "tcp    LISTEN     0      128                   fe80::a00:27ff:fe32:ed09%enp0s3:9200                                                           :::*                   users:((\"java\",pid=1722,fd=124)) uid:112 ino:19542 sk:9 v6only:1 <->\n",
			[]L{{Addr: "fe80::a00:27ff:fe32:ed09%enp0s3", Port: 9200, Backlog: 128, PID: 1722, Process: "java"}}},
		{"netid without header, udp skipped", "udp UNCONN 0 0 *:68 *:*\ntcp LISTEN 3 50 *:9092 *:*\n",
			[]L{{Addr: "*", Port: 9092, Backlog: 50, Queue: 3}}},
		{"CRLF", "State Recv-Q Send-Q Local Address:Port Peer Address:Port\r\nLISTEN 0 50 *:9092 *:*\r\n",
			[]L{{Addr: "*", Port: 9092, Backlog: 50}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SSListeners(tt.in)
			if err != nil {
				t.Fatalf("SSListeners: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSSListenersErrors(t *testing.T) {
	tests := []struct {
		name, in, wantSub string
	}{
		{"netlink error", readTestdata(t, "ss/garbage-netlink-error.txt"), `"Cannot" is not a socket state`},
		{"command not found", readTestdata(t, "ss/garbage-command-not-found.txt"), `"bash:" is not a socket state`},
		{"service names (no -n)", readTestdata(t, "ss/centos7.7-iproute4.11-a-inet-excerpt.txt"), `port "smtp" in "127.0.0.1:smtp" is not a number 0-65535 (was ss run without -n?)`},
		{"queue not a number", "LISTEN x 50 *:9092 *:*\n", `Recv-Q "x" and Send-Q "50" must be numbers`},
		{"no port", "LISTEN 0 50 9092 *:*\n", `local address "9092" is not "address:port"`},
		{"too few fields", "State Recv-Q Send-Q Local Address:Port Peer Address:Port\nLISTEN 0 50\n", "line 2: expected Recv-Q, Send-Q, local and peer address"},
		{"two headers", "State Recv-Q Send-Q\nState Recv-Q Send-Q\n", "unexpected second header"},
		{"html", "<html><body>502 Bad Gateway</body></html>\n", "is not a socket state"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SSListeners(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.wantSub) {
				t.Fatalf("SSListeners = %v, %v; want error containing %q", got, err, tt.wantSub)
			}
		})
	}
}

func FuzzSSListeners(f *testing.F) {
	for _, p := range allSamples(f, "ss") {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("LISTEN 0 0 :0 :\n")
	f.Add("tcp\n")
	f.Add("Netid State Recv-Q Send-Q\ntcp\n")
	f.Fuzz(func(t *testing.T, in string) {
		ls, err := SSListeners(in)
		if err != nil {
			return
		}
		for _, l := range ls {
			if l.Port < 0 || l.Port > 65535 || l.Backlog < 0 || l.Queue < 0 {
				t.Fatalf("impossible listener %+v from %q", l, in)
			}
		}
	})
}
