package gather

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/remote"
)

// hostileProperties is a server.properties whose lines Java joins in
// ways a line-by-line reader gets wrong: a continuation that carries the
// next line's password into the backlog's value, an escaped backslash
// at a line end (no continuation), a continuation whose next line is
// indented, a comment ending in a backslash, and one at the end of the file.
const hostileProperties = "# a comment ending in a backslash does not continue \\\n" +
	"socket.listen.backlog.size=8192\\\n" +
	"ssl.truststore.password=S3cr3t-TRUST\n" +
	"log.dirs=/data/a\\\\\n" +
	"num.network.threads=8\n" +
	"listeners=PLAINTEXT://:9092,\\\r\n" +
	"    SSL://:9093\r\n" +
	"ssl.keystore.password=S3cr3t-KEY\n" +
	"socket.send.buffer.bytes = 1048576\\\n"

// TestKafkaConfAwk runs kafkaconf.awk under each awk the script may meet
// on hostileProperties and reads its output as the assembler does: the
// logical lines as java.util.Properties reads them, and no password in
// the facts.
func TestKafkaConfAwk(t *testing.T) {
	kk, err := kafkaKeysPattern(nil)
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(conf, []byte(hostileProperties), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"socket.listen.backlog.size": "8192ssl.truststore.password=[hidden]",
		"log.dirs":                   `/data/a\`,
		"num.network.threads":        "8",
		"listeners":                  "PLAINTEXT://:9092,SSL://:9093",
		"socket.send.buffer.bytes":   "1048576",
	}
	wantLines := map[string]int{"socket.listen.backlog.size": 2, "log.dirs": 4, "num.network.threads": 5, "listeners": 6, "socket.send.buffer.bytes": 9}
	ran := 0
	for _, awk := range [][]string{{"mawk"}, {"gawk", "--posix"}, {"busybox", "awk"}, {"awk"}} {
		if _, err := exec.LookPath(awk[0]); err != nil {
			continue
		}
		ran++
		t.Run(strings.Join(awk, "-"), func(t *testing.T) {
			out, err := exec.Command(awk[0], append(awk[1:], "-v", "kk="+kk, kafkaConfAwk, conf)...).Output()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(out), "S3cr3t-KEY") {
				t.Errorf("a line kaudit does not read was sent:\n%s", out)
			}
			a := &assembler{f: &facts.Facts{Sections: map[string]facts.SectionStatus{}}}
			k := &facts.Kafka{Properties: map[string]string{}}
			a.kafkaConfig(k, remote.Section{Name: facts.SecKafkaConf, State: "ok", Body: "path=" + conf + "\n" + string(out)})
			if !reflect.DeepEqual(k.Properties, want) {
				t.Errorf("properties\n%q\nwant\n%q\n(awk output:\n%s)", k.Properties, want, out)
			}
			if !reflect.DeepEqual(k.PropertyLines, wantLines) {
				t.Errorf("lines %v, want %v", k.PropertyLines, wantLines)
			}
		})
	}
	if ran == 0 {
		t.Skip("no awk")
	}
}
