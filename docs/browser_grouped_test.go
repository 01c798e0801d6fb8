//go:build browser

package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/report"
)

// layoutProbe, appended to the grouped page, records after load how far
// the page scrolls sideways and where the first action is, in attributes
// of <html> that --dump-dom carries out.
const layoutProbe = `<script>window.addEventListener("load", function () {
var root = document.documentElement, a = document.querySelector("#actions li");
root.setAttribute("data-overflow", String(root.scrollWidth - root.clientWidth));
root.setAttribute("data-viewport", window.innerWidth + "x" + window.innerHeight);
if (a) root.setAttribute("data-first-action-bottom", String(Math.ceil(a.getBoundingClientRect().bottom + window.scrollY)));
});</script>`

// The grouped page of 1,000 and 10,000 simulated hosts at 1,280 pixels:
// nothing scrolls sideways, the first action is on the first screen, a
// host found by name with the page's search (#find=NAME) is shown with its
// findings built.
func TestGroupedHTMLInChromium(t *testing.T) {
	demo, err := report.Load("../report/testdata/demo.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1000, 10000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			r := report.Simulated(demo, n, 3)
			page := writeHTML(t, r, layoutProbe)
			start := time.Now()
			dom, problems := openAt(t, page, "1280,800", "")
			t.Logf("%d hosts: %d bytes, loaded and dumped in %v", n, fileSize(t, page), time.Since(start))
			if len(problems) > 0 {
				t.Errorf("console problems:\n%s", strings.Join(problems, "\n"))
			}
			if got := attr(t, dom, "data-viewport"); !strings.HasPrefix(got, "1280x") {
				t.Fatalf("viewport %s, want 1280 wide", got)
			}
			if got := attr(t, dom, "data-overflow"); got != "0" {
				t.Errorf("the page scrolls sideways by %s px at 1,280 px", got)
			}
			if b, _ := strconv.Atoi(attr(t, dom, "data-first-action-bottom")); b <= 0 || b > 800 {
				t.Errorf("the first action ends at y=%d, not on the first 800 px", b)
			}
			host := r.Hosts[n/2+3] // a broker with failing findings
			dom, problems = openAt(t, page, "1280,800", "#find="+host.Name)
			if len(problems) > 0 {
				t.Errorf("console problems after the search:\n%s", strings.Join(problems, "\n"))
			}
			entry := regexp.MustCompile(`(?s)<details class="h[^"]*" data-h="\d+" id="host-` + regexp.QuoteMeta(host.Name) + `"([^>]*)>(.*?)</details>`).FindStringSubmatch(dom)
			if entry == nil {
				t.Fatalf("no entry for %s after the search", host.Name)
			}
			if !strings.Contains(entry[1], "open") || !strings.Contains(entry[2], `<table class="findings">`) {
				t.Errorf("%s found but not expanded with its findings: %.300s", host.Name, entry[0])
			}
			first := host.Findings[0]
			for _, f := range host.Findings {
				if f.Status == "fail" && f.Observed != "" {
					first = f
					break
				}
			}
			if !strings.Contains(entry[2], first.Rule) || !strings.Contains(entry[2], htmlText(first.Observed)) {
				t.Errorf("%s's detail lacks %s observed %q", host.Name, first.Rule, first.Observed)
			}
		})
	}
}

func writeHTML(t *testing.T, r *report.Report, extra string) string {
	t.Helper()
	var b strings.Builder
	if err := report.Render(&b, "html", r, report.Options{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	page := strings.Replace(b.String(), "</body>", extra+"</body>", 1)
	if err := os.WriteFile(out, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

func fileSize(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func attr(t *testing.T, dom, name string) string {
	t.Helper()
	m := regexp.MustCompile(name + `="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no %s in the DOM (the layout probe did not run)", name)
	}
	return m[1]
}

// htmlText is s as the DOM dump writes text (&, <, > escaped).
func htmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
