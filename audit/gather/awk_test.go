package gather_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/parse"
	"github.com/kaudit/kaudit/internal/remote"
)

// awks are the awk implementations present, as the script would run them.
func awks(t testing.TB) [][]string {
	var out [][]string
	for _, awk := range [][]string{{"mawk"}, {"gawk", "--posix"}, {"busybox", "awk"}, {"awk"}} {
		if _, err := exec.LookPath(awk[0]); err == nil {
			out = append(out, awk)
		}
	}
	if len(out) == 0 {
		t.Skip("no awk")
	}
	return out
}

// runSockets runs the shipped sockets.awk with vars on the concatenated
// captures in audit/parse/testdata/conns, and returns its stdout and
// what it wrote on fd 3 (the broker's pid).
func runSockets(t *testing.T, awk []string, vars []string, inputs ...string) (string, string) {
	t.Helper()
	var in []byte
	for _, f := range inputs {
		b, err := os.ReadFile(filepath.Join("..", "parse", "testdata", "conns", f))
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, b...)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	args := append([]string{}, awk[1:]...)
	for _, v := range vars {
		args = append(args, "-v", v)
	}
	cmd := exec.Command(awk[0], append(args, "-f", "sockets.awk")...)
	cmd.Stdin = bytes.NewReader(in)
	cmd.ExtraFiles = []*os.File{w} // fd 3
	out, err := cmd.Output()
	w.Close()
	if err != nil {
		t.Fatalf("%v sockets.awk %v: %v", awk, vars, err)
	}
	fd3, _ := io.ReadAll(r)
	return string(out), string(fd3)
}

func readConns(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "parse", "testdata", "conns", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSocketsAwkClient: the client profile's bound and shrunk ss -tin, as
// recorded in the capture the parsers are tested on.
func TestSocketsAwkClient(t *testing.T) {
	for _, awk := range awks(t) {
		out, _ := runSockets(t, awk, []string{"mode=client", "lim=4"}, "pair-broker-ss-tin-state-established-this-machine.txt")
		if want := readConns(t, "pair-broker-shrunk-lim4-this-machine.txt"); sortedLines(out) != sortedLines(want) {
			t.Errorf("%v client lim=4:\n%s\nwant\n%s", awk, out, want)
		}
	}
}

const testMarker = "kaudit-0123456789ab"

// brokerSections runs sockets.awk in broker mode and splits its sections.
func brokerSections(t *testing.T, awk []string, kpids string, lim int, inputs ...string) (map[string]remote.Section, string) {
	t.Helper()
	out, fd3 := runSockets(t, awk, []string{"mode=broker", "M=" + testMarker, "kport=9092", "kpids=" + kpids, "lim=" + strconv.Itoa(lim)}, inputs...)
	secs, err := remote.Sections([]byte(out+testMarker+" done\n"), testMarker, "test")
	if err != nil {
		t.Fatalf("%v: %v\n%s", awk, err, out)
	}
	for _, name := range []string{"listeners", "established", "conns"} {
		if secs[name].State != "ok" {
			t.Fatalf("%v: section %s: %+v\n%s", awk, name, secs[name], out)
		}
	}
	return secs, strings.TrimSpace(fd3)
}

// TestSocketsAwkBroker runs the broker mode on one real `ss -tinp state
// listening state established` and compares what the parsers make of each
// section with what they make of the three ss runs it replaces, captured
// at the same moment (a broker pid 10276 on *:9092 and 0.0.0.0:9093,
// another process on :8080; see testdata/README.md): the same listeners,
// the same counts as established.awk gave, the same connections as
// conns.awk gave, bound or not.
func TestSocketsAwkBroker(t *testing.T) {
	const combined = "combined-ss-tinp-listening-established-this-machine.txt"
	wantL, err := parse.SSListeners(readConns(t, "combined-ss-ltnp-this-machine.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wantE, err := parse.EstablishedCounts(readConns(t, "combined-counted-this-machine.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, awk := range awks(t) {
		for _, c := range []struct {
			lim       int
			kpids     string
			wantConns string
			wantPid   string
		}{
			{4096, "10276", "combined-shrunk-kafka-this-machine.txt", "10276 listener"},
			{4096, "99999 10276", "combined-shrunk-kafka-this-machine.txt", "10276 listener"}, // the listener wins over /proc order
			{2, "10276", "combined-shrunk-kafka-lim2-this-machine.txt", "10276 listener"},
		} {
			secs, pid := brokerSections(t, awk, c.kpids, c.lim, combined)
			if pid != c.wantPid {
				t.Errorf("%v kpids %q: fd 3 %q, want %q", awk, c.kpids, pid, c.wantPid)
			}
			if l, err := parse.SSListeners(secs["listeners"].Body); err != nil || !reflect.DeepEqual(l, wantL) {
				t.Errorf("%v listeners %+v (%v), want %+v", awk, l, err, wantL)
			}
			if e, err := parse.EstablishedCounts(secs["established"].Body); err != nil || !reflect.DeepEqual(e, wantE) {
				t.Errorf("%v established %+v (%v), want %+v", awk, e, err, wantE)
			}
			conns, total, err := parse.ConnsSection(secs["conns"].Body)
			wc, wt, werr := parse.ConnsSection(readConns(t, c.wantConns))
			if err != nil || werr != nil || total != wt || !reflect.DeepEqual(conns, wc) {
				t.Errorf("%v lim %d: conns %+v total %d (%v), want %+v total %d (%v)", awk, c.lim, conns, total, err, wc, wt, werr)
			}
		}
		// No broker process: no pid, and only the Kafka port's connections.
		secs, pid := brokerSections(t, awk, "", 4096, combined)
		conns, total, err := parse.ConnsSection(secs["conns"].Body)
		if pid != "" || err != nil || total != 5 || len(conns) != 5 {
			t.Errorf("%v no broker: fd 3 %q, %d of %d conns (%v)", awk, pid, len(conns), total, err)
		}
		for _, cn := range conns {
			if cn.LocalPort != 9092 {
				t.Errorf("%v no broker: connection on :%d listed", awk, cn.LocalPort)
			}
		}
	}
}

// TestSocketsAwkCounts: the broker mode counts per local address:port as
// established.awk did on the captures the parsers are tested on (the
// broker's ss -ltn, then its ss -tn state established: another layout,
// without a State column, with a header or none).
func TestSocketsAwkCounts(t *testing.T) {
	for _, awk := range awks(t) {
		for _, n := range []string{"est-0", "est-1", "est-1-H", "est-2535"} {
			secs, _ := brokerSections(t, awk, "", 4096, "ss-ltn-est-2535-this-machine.txt", "ss-tn-state-established-"+n+"-this-machine.txt")
			if got, want := secs["established"].Body, readConns(t, "counted-"+n+"-this-machine.txt"); sortedLines(got) != sortedLines(want) {
				t.Errorf("%v %s:\n%s\nwant\n%s", awk, n, got, want)
			}
		}
	}
}

// sortedLines is s's lines in order (awk's for-in order is unspecified).
func sortedLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// BenchmarkSocketsAwk100k counts 100,000 established connections (a
// synthetic `ss -tn state established` of 100,000 clients on two Kafka
// ports and 500 outgoing connections, after the broker's listeners) with
// the shipped sockets.awk: the output stays a handful of lines and lim
// connections whatever the connection count.
func BenchmarkSocketsAwk100k(b *testing.B) {
	var in strings.Builder
	in.WriteString("State Recv-Q Send-Q Local Address:Port Peer Address:Port Process\nLISTEN 0 50 *:9092 *:*\nLISTEN 0 50 *:9093 *:*\nLISTEN 0 50 0.0.0.0:22 0.0.0.0:*\n")
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
		out, err := exec.Command("awk", "-v", "mode=broker", "-v", "M="+testMarker, "-v", "kport=9092", "-v", "lim=4096", "-f", "sockets.awk", file).Output()
		if err != nil {
			b.Fatal(err)
		}
		secs, err := remote.Sections(append(out, testMarker+" done\n"...), testMarker, "bench")
		if err != nil {
			b.Fatal(err)
		}
		if lines := strings.Count(secs["established"].Body, "\n"); lines != 2 {
			b.Fatalf("%d established lines:\n%s", lines, secs["established"].Body)
		}
		if lines := strings.Count(secs["conns"].Body, "\n"); lines != 4096+2 {
			b.Fatalf("%d conns lines", lines)
		}
		b.SetBytes(int64(in.Len()))
	}
}
