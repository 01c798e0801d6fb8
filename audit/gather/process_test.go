package gather

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// sectionBody is the body of a captured one-section output (its begin
// and end lines cut off).
func sectionBody(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[1:len(lines)-1], "\n")
}

func TestBrokerProcess(t *testing.T) {
	const java = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
	root := &facts.BrokerProcess{NoFile: &facts.Limit{Soft: 20000, Hard: 20000}, FDs: 6, Maps: 201, SwapKB: 0, MemTotalKB: 24683548,
		Exe: java, ExeFrom: "proc", JavaVersion: "17.0.15", Xms: 64 << 20, Xmx: 128 << 20}
	nobody := *root
	nobody.FDs, nobody.Maps, nobody.ExeFrom = -1, -1, "cmdline"
	nobody.Unread = map[string]string{"fds": "denied /proc/23382/fd", "maps": "denied /proc/23382/maps"}
	tests := []struct {
		name, body string
		want       *facts.BrokerProcess
	}{
		{"captured as root", sectionBody(t, "../parse/testdata/proc/section-root.txt"), root},
		{"captured as nobody", sectionBody(t, "../parse/testdata/proc/section-nobody.txt"), &nobody},
		{"nothing readable", "file !denied /proc/7/limits\nfile !denied /proc/7/status\nfile !denied /proc/meminfo\nfds !denied /proc/7/fd\nmaps !denied /proc/7/maps\nexe !denied /proc/7/exe\nheap !denied /proc/7/cmdline",
			&facts.BrokerProcess{FDs: -1, Maps: -1, SwapKB: -1, MemTotalKB: -1, Unread: map[string]string{
				"limits": "denied /proc/7/limits", "status": "denied /proc/7/status", "meminfo": "denied /proc/meminfo",
				"fds": "denied /proc/7/fd", "maps": "denied /proc/7/maps", "exe": "denied /proc/7/exe", "heap": "denied /proc/7/cmdline"}}},
		{"garbage counts and no limit line", "fds lots\nmaps -3\nlimits Max processes 5 5 processes\nrelease JAVA_VERSION=\"17;rm\"",
			&facts.BrokerProcess{FDs: -1, Maps: -1, SwapKB: -1, MemTotalKB: -1, Unread: map[string]string{
				"fds": `not a count: "lots"`, "maps": `not a count: "-3"`, "limits": `no "Max open files" line in /proc/PID/limits`,
				"release": "no JAVA_VERSION in the release file", "status": "no VmSwap line", "meminfo": "no MemTotal line"}}},
		{"last -Xmx wins", "heap -Xmx1g\nheap -Xmx6g\nheap -Xms6g\nstatus VmSwap:\t 2048 kB\nrelease !absent /opt/java/release",
			&facts.BrokerProcess{FDs: -1, Maps: -1, SwapKB: 2048, MemTotalKB: -1, Xmx: 6 << 30, Xms: 6 << 30, Unread: map[string]string{
				"release": "absent /opt/java/release", "limits": `no "Max open files" line in /proc/PID/limits`, "meminfo": "no MemTotal line"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BrokerProcess(tt.body); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("BrokerProcess =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// TestBrokerProcessShipsNoJVMOption runs the kafka section's cmdline awk
// (cut from the script; it also gives broker-process its "heap" lines) on a
// captured JVM command line that has a password in a -D option: of the JVM
// options only -Xms and -Xmx may come out.
func TestBrokerProcessShipsNoJVMOption(t *testing.T) {
	const start = "tr '\\0' '\\n' < \"/proc/$pid/cmdline\" 2>/dev/null | awk -v kk=\"$KKEYS\" '"
	i := strings.Index(scriptBody, start)
	if i < 0 {
		t.Fatal("the kafka section's cmdline awk is not in the script")
	}
	prog, _, ok := strings.Cut(scriptBody[i+len(start):], "'")
	if !ok {
		t.Fatal("unterminated awk program")
	}
	cmd := exec.Command("awk", "-v", "kk=listeners|log[.]dirs", prog, "../parse/testdata/proc/cmdline-jvm17-kafka-main.txt")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "exe=/usr/lib/jvm/java-17-openjdk-amd64/bin/java\nheap -Xms64m\nheap -Xmx128m\ncp=/tmp/procjvm\nmain=kafka.Kafka\narg=/tmp/procjvm/server.properties\n"
	if got := string(out); got != want {
		t.Errorf("awk printed %q, want %q", got, want)
	}
}
