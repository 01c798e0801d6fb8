package gather_test

import (
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
