package gather_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestCountingAwk runs the shipped established.awk and conns.awk on the
// captures in audit/parse/testdata/conns and compares with the recorded
// outputs the parsers are tested on, under every awk present.
func TestCountingAwk(t *testing.T) {
	dir := filepath.Join("..", "parse", "testdata", "conns")
	ran := 0
	for _, awk := range [][]string{{"mawk"}, {"gawk", "--posix"}, {"busybox", "awk"}, {"awk"}} {
		if _, err := exec.LookPath(awk[0]); err != nil {
			continue
		}
		ran++
		for _, c := range []struct{ script, vars, in, want string }{
			{"established.awk", "ports=9093 8080 9092", "ss-tn-state-established-est-0-this-machine.txt", "counted-est-0-this-machine.txt"},
			{"established.awk", "ports=9093 8080 9092", "ss-tn-state-established-est-1-this-machine.txt", "counted-est-1-this-machine.txt"},
			{"established.awk", "ports=9093 8080 9092", "ss-tn-state-established-est-1-H-this-machine.txt", "counted-est-1-H-this-machine.txt"},
			{"established.awk", "ports=9093 8080 9092", "ss-tn-state-established-est-2535-this-machine.txt", "counted-est-2535-this-machine.txt"},
			{"conns.awk", "lim=4", "pair-broker-ss-tin-state-established-this-machine.txt", "pair-broker-shrunk-lim4-this-machine.txt"},
		} {
			args := append(append([]string{}, awk[1:]...), "-v", c.vars, "-f", c.script, filepath.Join(dir, c.in))
			out, err := exec.Command(awk[0], args...).Output()
			if err != nil {
				t.Fatalf("%v %s: %v", awk, c.script, err)
			}
			want, err := os.ReadFile(filepath.Join(dir, c.want))
			if err != nil {
				t.Fatal(err)
			}
			if sortedLines(string(out)) != sortedLines(string(want)) {
				t.Errorf("%v %s %s:\n%s\nwant\n%s", awk, c.script, c.in, out, want)
			}
		}
	}
	if ran == 0 {
		t.Skip("no awk")
	}
}

// sortedLines is s's lines in order (awk's for-in order is unspecified).
func sortedLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// BenchmarkEstablishedAwk100k counts 100,000 established connections (a
// synthetic `ss -tn state established` of 100,000 clients on two Kafka
// ports and 500 outgoing connections) with the shipped established.awk:
// the output stays a handful of lines whatever the connection count.
func BenchmarkEstablishedAwk100k(b *testing.B) {
	var in strings.Builder
	in.WriteString("Recv-Q Send-Q Local Address:Port Peer Address:Port Process\n")
	for i := range 100_000 {
		port := 9092 + i%2
		fmt.Fprintf(&in, "0      0      [::ffff:10.0.0.1]:%d [::ffff:10.%d.%d.%d]:%d\n", port, i>>16&255, i>>8&255, i&255, 30000+i%30000)
	}
	for i := range 500 {
		fmt.Fprintf(&in, "0      0      10.0.0.1:%d 10.0.0.2:9092\n", 40000+i)
	}
	file := filepath.Join(b.TempDir(), "ss.txt")
	if err := os.WriteFile(file, []byte(in.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		out, err := exec.Command("awk", "-v", "ports=22 9092 9093", "-f", "established.awk", file).Output()
		if err != nil {
			b.Fatal(err)
		}
		if lines := strings.Count(string(out), "\n"); lines != 2 {
			b.Fatalf("%d output lines:\n%s", lines, out)
		}
		b.SetBytes(int64(in.Len()))
	}
}
