package gather

import (
	"os"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/remote"
)

func TestAssembleLogDirs(t *testing.T) {
	sample, err := os.ReadFile("../parse/testdata/log-dirs/unshare-nobody-this-machine.txt")
	if err != nil {
		t.Fatal(err)
	}
	broker := remote.Section{State: "ok", Body: "pid=42\nfound=listener\n"}
	cases := []struct {
		name  string
		secs  map[string]remote.Section
		dirs  int    // len(Kafka.LogDirs)
		state string // Sections[log-dirs].State, "" = not noted
	}{
		{"captured", map[string]remote.Section{facts.SecKafka: broker, facts.SecLogDirs: {State: "ok", Body: string(sample)}}, 5, ""},
		{"no broker: not noted", map[string]remote.Section{facts.SecKafka: {State: "absent"}, facts.SecLogDirs: {State: "absent"}}, 0, ""},
		{"config unread", map[string]remote.Section{facts.SecKafka: broker, facts.SecLogDirs: {State: "absent"}}, 0, "absent"},
		{"mountinfo denied", map[string]remote.Section{facts.SecKafka: broker, facts.SecLogDirs: {State: "denied", Body: "!denied /proc/self/mountinfo"}}, 0, "denied"},
		{"garbage", map[string]remote.Section{facts.SecKafka: broker, facts.SecLogDirs: {State: "ok", Body: "dir=/x\nmi=not a mountinfo line"}}, 0, "error"},
		{"missing", map[string]remote.Section{facts.SecKafka: broker}, 0, "error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Assemble(c.secs, 9092)
			n := 0
			if f.Kafka != nil {
				n = len(f.Kafka.LogDirs)
			}
			if n != c.dirs || f.Sections[facts.SecLogDirs].State != facts.SectionState(c.state) {
				t.Errorf("%d log dirs, log-dirs section %+v; want %d, state %q", n, f.Sections[facts.SecLogDirs], c.dirs, c.state)
			}
		})
	}
}
