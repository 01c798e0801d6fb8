package serve

import (
	"bytes"
	"runtime"
	"testing"
	"weak"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// originals are weak pointers to what a scan allocated for r's findings:
// each host's findings array and each finding's evidence lines.
func originals(r *report.Report) (out []weak.Pointer[rules.Finding], lines []weak.Pointer[string]) {
	for _, h := range r.Hosts {
		if len(h.Findings) > 0 {
			out = append(out, weak.Make(&h.Findings[0]))
		}
		for _, f := range h.Findings {
			if len(f.Evidence) > 0 {
				lines = append(lines, weak.Make(&f.Evidence[0]))
			}
		}
	}
	return out, lines
}

func renderJSON(t *testing.T, r *report.Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := report.Render(&b, "json", r, report.Options{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCompactReleasesTheScansFindings: the report served holds its
// findings in memory of its own, not the arrays the scan built host by
// host among its garbage (which pinned the pages they shared: serve's
// RSS stepped up 12 % after the second scan of 10,000 hosts), and it
// renders the same bytes.
func TestCompactReleasesTheScansFindings(t *testing.T) {
	r := fixture(t)
	want := renderJSON(t, r)
	arrays, lines := originals(r)
	if len(arrays) < 3 || len(lines) == 0 {
		t.Fatalf("the fixture has %d hosts with findings, %d with evidence: too few to tell", len(arrays), len(lines))
	}
	s := newTestServer(t, Options{})
	if err := s.ScanDone(r, Success); err != nil {
		t.Fatal(err)
	}
	r = nil
	runtime.GC()
	for i, p := range arrays {
		if p.Value() != nil {
			t.Errorf("host %d: the findings array the scan built is still held by the served report", i)
		}
	}
	for i, p := range lines {
		if p.Value() != nil {
			t.Errorf("evidence %d: the lines the scan built are still held by the served report", i)
		}
	}
	served, _ := s.Report()
	if got := renderJSON(t, served); !bytes.Equal(got, want) {
		t.Errorf("the compacted report renders other JSON (%d bytes, want %d)", len(got), len(want))
	}
}

// TestScanDoneReleasesTheReplacedReport: once a scan's report is served,
// the report it replaced is no longer reachable (one report held, not
// two), and neither is a report that is not served.
func TestScanDoneReleasesTheReplacedReport(t *testing.T) {
	s := newTestServer(t, Options{})
	first, interrupted := fixture(t), fixture(t)
	gone := []weak.Pointer[report.Report]{weak.Make(first), weak.Make(interrupted)}
	if err := s.ScanDone(first, Success); err != nil {
		t.Fatal(err)
	}
	if err := s.ScanDone(interrupted, Interrupted); err != nil {
		t.Fatal(err)
	}
	if err := s.ScanDone(fixture(t), Success); err != nil {
		t.Fatal(err)
	}
	first, interrupted = nil, nil
	s.releases.Wait()
	runtime.GC()
	for i, p := range gone {
		if p.Value() != nil {
			t.Errorf("report %d is still reachable after the next scan was served", i)
		}
	}
}
