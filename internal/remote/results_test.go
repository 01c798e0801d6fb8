package remote

import "testing"

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
