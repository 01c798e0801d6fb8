package parse

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestSynFloodLines(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{
			name: "every kernel's wording",
			in:   readTestdata(t, "dmesg/mixed-kernels.txt"),
			want: []string{
				"[ 8312.104552] TCP: TCP: Possible SYN flooding on port 9092. Sending cookies.  Check SNMP counters.",
				"[12345.678901] TCP: request_sock_TCP: Possible SYN flooding on port 9092. Sending cookies.  Check SNMP counters.",
				"TCP: request_sock_TCP: Possible SYN flooding on port 9093. Dropping request.  Check SNMP counters.",
				"[  255.126921] TCP: request_sock_TCP: Possible SYN flooding on port 0.0.0.0:80. Dropping request.",
				"[Mon May 20 19:04:11 2026] TCP: request_sock_TCP: Possible SYN flooding on port 0.0.0.0:8080. Sending cookies.",
				"[ 7777.000000] TCP: request_sock_TCPv6: Possible SYN flooding on port [::]:9092. Sending cookies.",
			},
		},
		{"empty", readTestdata(t, "dmesg/empty.txt"), nil},
		{"permission denied", readTestdata(t, "dmesg/denied.txt"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SynFloodLines(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestSynFloodLinesKeepsLast20(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 25; i++ {
		fmt.Fprintf(&b, "[%d.000000] TCP: request_sock_TCP: Possible SYN flooding on port %d. Sending cookies.  Check SNMP counters.\n", i, 9000+i)
		fmt.Fprintf(&b, "[%d.500000] unrelated line\n", i)
	}
	got := SynFloodLines(b.String())
	if len(got) != 20 || !strings.Contains(got[0], "port 9006.") || !strings.Contains(got[19], "port 9025.") {
		t.Errorf("got %d lines, first %q, last %q", len(got), got[0], got[len(got)-1])
	}
}
