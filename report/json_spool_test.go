package report

import (
	"bytes"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// spooledCopy is r with every audited host's facts moved into a spool, as
// pipeline.Audit leaves them with Config.SpoolFacts.
func spooledCopy(t *testing.T, r *Report) *Report {
	t.Helper()
	sp, err := NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	c := *r
	c.Hosts = append([]Host(nil), r.Hosts...)
	n := 0
	for i := range c.Hosts {
		h := &c.Hosts[i]
		if h.Facts == nil {
			continue
		}
		if h.Spooled, err = sp.Put(h.Facts); err != nil {
			t.Fatal(err)
		}
		h.Facts = nil
		n++
	}
	if n == 0 {
		t.Fatal("fixture has no audited host: nothing spooled")
	}
	return &c
}

// TestSpooledRendersTheSameBytes: every golden case, and hostile text in
// the facts, renders byte for byte as from the facts in memory.
func TestSpooledRendersTheSameBytes(t *testing.T) {
	lookalike := hostileReport(t, `","findings":[],"facts":{"x":1}}`)
	lookalike.Hosts[0].Name += `,"findings":` // an audited host: spooled
	lookalike.Hosts[0].Groups = []string{`,"findings":[`}
	reports := map[string]*Report{"fixture": loadFixture(t), "hostile": hostileReport(t, "\x1b]0;owned\x07\u202e<script>\u00ad"), "key lookalikes": lookalike}
	for name, r := range reports {
		sp := spooledCopy(t, r)
		for _, c := range goldenCases() {
			var want, got bytes.Buffer
			if err := Render(&want, c.format, r, c.opt); err != nil {
				t.Fatalf("%s %s: %v", name, c.name, err)
			}
			if err := Render(&got, c.format, sp, c.opt); err != nil {
				t.Fatalf("%s %s spooled: %v", name, c.name, err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s %s: spooled facts render differently: %s", name, c.name, firstDiff(want.String(), got.String()))
			}
		}
		for i, h := range sp.Hosts {
			if h.Facts != nil {
				t.Errorf("%s: host %d: rendering put facts back into the report", name, i)
			}
		}
	}
}

// TestSpoolClosed: a report whose spool is closed cannot print its facts
// as JSON, and says which host it was at; the other formats render from
// what each spooled host keeps in memory, as before the Close.
func TestSpoolClosed(t *testing.T) {
	sp := spooledCopy(t, loadFixture(t))
	var before bytes.Buffer
	if err := Render(&before, "table", sp, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	err := Render(&bytes.Buffer{}, "json", sp, Options{})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("host kafka-a1: facts spool")) {
		t.Fatalf("render after Close: %v, want an error naming host kafka-a1 and the spool", err)
	}
	var after bytes.Buffer
	if err := Render(&after, "table", sp, Options{}); err != nil {
		t.Fatalf("table render after Close: %v", err)
	}
	if !bytes.Equal(after.Bytes(), before.Bytes()) {
		t.Errorf("table after Close differs: %s", firstDiff(before.String(), after.String()))
	}
}

// TestJSONOnlySpool: a spool made for a JSON report alone keeps no view
// facts, renders the same JSON bytes as the report it came from, and
// refuses another format with an error naming the host (never a report
// missing its facts).
func TestJSONOnlySpool(t *testing.T) {
	r := loadFixture(t)
	sp, err := NewSpoolFor(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	c := *r
	c.Hosts = append([]Host(nil), r.Hosts...)
	for i := range c.Hosts {
		if h := &c.Hosts[i]; h.Facts != nil {
			if h.Spooled, err = sp.Put(h.Facts); err != nil {
				t.Fatal(err)
			}
			if h.Spooled.view != nil {
				t.Fatalf("host %s: a JSON-only spool kept view facts", h.Name)
			}
			h.Facts = nil
		}
	}
	var want, got bytes.Buffer
	if err := Render(&want, "json", r, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Render(&got, "json", &c, Options{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("JSON-only spool renders differently: %s", firstDiff(want.String(), got.String()))
	}
	err = Render(&bytes.Buffer{}, "table", &c, Options{})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("host kafka-a1: its facts were spooled for a JSON report only")) {
		t.Errorf("table of a JSON-only spool: %v, want an error naming host kafka-a1", err)
	}
}

// TestSpoolSharesAlikeViews: hosts whose view facts are equal share one
// (read-only); a host whose kernel differs keeps its own.
func TestSpoolSharesAlikeViews(t *testing.T) {
	sp, err := NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	var f *facts.Facts
	for _, h := range loadFixture(t).Hosts {
		if h.Facts != nil {
			f = h.Facts
			break
		}
	}
	other := *f
	other.Kernel.Release += "-other"
	var refs []*SpooledFacts
	for _, x := range []*facts.Facts{f, f, &other} {
		ref, err := sp.Put(x)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	if refs[0].view != refs[1].view {
		t.Error("equal views not shared")
	}
	if refs[2].view == refs[0].view || refs[2].view.Kernel.Release != other.Kernel.Release {
		t.Errorf("a differing view was shared: %+v", refs[2].view.Kernel)
	}
}
