package gather

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/remote"
)

// kafkaMetaBlock is the kafka-meta block of gather.sh, from "b kafka-meta"
// to its closing "fi".
func kafkaMetaBlock(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("gather.sh")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	i := strings.Index(s, "\nb kafka-meta\n")
	j := strings.Index(s[i:], "\nfi\n")
	if i < 0 || j < 0 {
		t.Fatal("no kafka-meta block in gather.sh")
	}
	return s[i : i+j+4]
}

// TestKafkaMetaSection runs the script's kafka-meta block under each POSIX
// shell on log directories holding meta.properties as Kafka writes them
// (testdata/README.md in audit/parse says where each comes from), one
// directory without the file, and one whose file holds a secret-looking
// extra key that must not leave the host.
func TestKafkaMetaSection(t *testing.T) {
	tmp := t.TempDir()
	kraft, zk, none, extra := filepath.Join(tmp, "kraft"), filepath.Join(tmp, "zk dir"), filepath.Join(tmp, "empty"), filepath.Join(tmp, "extra")
	for _, d := range []string{kraft, zk, none, extra} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, "../parse/testdata/kafka-meta/kraft-meta.properties", filepath.Join(kraft, "meta.properties"))
	copyFile(t, "../parse/testdata/kafka-meta/zk-2.8-meta.properties", filepath.Join(zk, "meta.properties"))
	if err := os.WriteFile(filepath.Join(extra, "meta.properties"), []byte("node.id=3\r\nssl.keystore.password=hunter2\r\ncluster.id=Xy3\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	block := kafkaMetaBlock(t)
	for _, sh := range [][]string{{"dash"}, {"busybox", "sh"}, {"sh"}} {
		if _, err := exec.LookPath(sh[0]); err != nil {
			continue
		}
		t.Run(strings.Join(sh, "-"), func(t *testing.T) {
			script := "M=MARK\nNL='\n'\nb() { printf '%s begin %s\\n' \"$M\" \"$1\"; }\ne() { printf '\\n%s end %s %s\\n' \"$M\" \"$1\" \"${2:-ok}\"; }\n" +
				"logdirs='" + strings.Join([]string{kraft, zk, none, extra}, "\n") + "'\n" + block + "echo MARK done\n"
			cmd := exec.Command(sh[0], append(sh[1:], "-s")...)
			cmd.Stdin = strings.NewReader(script)
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(out, []byte("hunter2")) {
				t.Fatalf("a key other than the identity keys left the host:\n%s", out)
			}
			secs, err := remote.Sections(out, "MARK", "gather")
			if err != nil {
				t.Fatal(err)
			}
			secs[facts.SecKafka] = remote.Section{Name: facts.SecKafka, State: "ok", Body: "pid=42\nfound=cmdline"}
			f := Assemble(secs, 9092)
			got := map[string]*facts.MetaProperties{}
			for _, d := range f.Kafka.LogDirs {
				got[d.Path] = d.Meta
			}
			want := map[string]*facts.MetaProperties{
				kraft: {Version: "1", ClusterID: "MkU3OEVBNTcwNTJENDM2Qk", NodeID: 1, BrokerID: -1, DirectoryID: "J8aAPcfLQt2bqs1JT_rMgQ"},
				zk:    {Version: "0", ClusterID: "tfIO-Ab4PdddYjiU3pEWqw", NodeID: -1, BrokerID: 2},
				none:  nil,
				extra: {ClusterID: "Xy3", NodeID: 3, BrokerID: -1},
			}
			if len(got) != len(want) {
				t.Fatalf("log dirs %v, want %v", got, want)
			}
			for p, w := range want {
				g := got[p]
				if (g == nil) != (w == nil) || (g != nil && *g != *w) {
					t.Errorf("%s: meta %+v, want %+v", p, g, w)
				}
			}
			if st := f.Sections[facts.SecKafkaMeta]; st.State != "partial" || !strings.Contains(st.Message, none+"/meta.properties absent") {
				t.Errorf("section status %+v, want partial naming %s", st, none)
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
