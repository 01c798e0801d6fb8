package remote

import (
	"strings"
	"testing"
)

func TestParseResults(t *testing.T) {
	const m = "KAUDIT_000000000000000000000001"
	out := []byte("banner\tok\tok\n" + m + "\trundir\tok\t/var/lib/kaudit/runs/x\n" +
		"KAUDIT_forged\tfile-0\tfail\tforged\n" +
		m + "\tfile-0\tfail\tcannot\twrite\r\n" + m + "\tshort\n" + m + "\tdone\tok\n")
	rs := ParseResults(out, m)
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3: %+v", len(rs), rs)
	}
	if f := rs.FirstFailure(); f == nil || f.Step != "file-0" || f.Text() != "cannot write" {
		t.Errorf("first failure %+v", f)
	}
	if d := rs.Find("done"); d == nil || !d.OK || d.Text() != "" {
		t.Errorf("done %+v", d)
	}
	if rs.Find("short") != nil || rs[:1].FirstFailure() != nil {
		t.Error("a line with fewer than 3 fields is not a result; no failure before file-0")
	}
}

func TestMarker(t *testing.T) {
	a, b := NewMarker(StepPrefix), NewMarker(SectionPrefix)
	if !ValidMarker(a) || !ValidMarker(b) || a[:7] != StepPrefix || b[:7] != SectionPrefix || a == NewMarker(StepPrefix) {
		t.Errorf("markers %q %q", a, b)
	}
	for _, bad := range []string{"short", "kaudit-'x'0000000", "kaudit-$(id)0000", "kaudit 0000000000"} {
		if ValidMarker(bad) {
			t.Errorf("ValidMarker(%q)", bad)
		}
	}
}

// A step the vocabulary names has its first detail field taken as its
// Word; a word the step does not have is refused, naming the host and
// the step; steps it does not name keep a free detail.
func TestParseStepsWords(t *testing.T) {
	const m = "KAUDIT_000000000000000000000001"
	v := Vocabulary{"file": {OK: []Word{"absent", "present"}}, "lease": {Fail: []Word{"held"}}}
	out := []byte(m + "\tfile-0\tok\tpresent\tabc\n" + m + "\tfile-12\tok\tabsent\n" + m + "\tlease\tfail\theld\tr1\n" + m + "\tdone\tok\tabsent\n")
	rs, err := ParseSteps(out, m, "h1", v)
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Word != "present" || rs[0].Text() != "abc" || rs[1].Word != "absent" || len(rs[1].Detail) != 0 || rs[2].Word != "held" || rs[2].Text() != "r1" {
		t.Errorf("words %+v", rs)
	}
	if rs[3].Word != "" || rs[3].Text() != "absent" {
		t.Errorf("a step without words: %+v", rs[3])
	}
	for _, bad := range []string{"\tfile-0\tok\tAbsent\n", "\tfile-0\tok\n", "\tlease\tfail\tcannot write\n"} {
		_, err := ParseSteps([]byte(m+bad), m, "h1", v)
		if err == nil || !strings.Contains(err.Error(), "h1: step ") || !strings.Contains(err.Error(), "does not know") {
			t.Errorf("%q: %v, want an error naming the host and the step", bad, err)
		}
	}
	if stepName("restore-file-3") != "restore-file" || stepName("file-") != "file-" || stepName("done") != "done" || stepName("a-b") != "a-b" {
		t.Error("stepName")
	}
}
