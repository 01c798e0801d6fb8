//go:build browser

// Opens HTML reports in headless Chromium: go test -tags browser ./docs/
// Needs chromium (Debian: apt-get install chromium) or KAUDIT_CHROMIUM
// naming the binary; without one the tests are skipped.

package docs

import (
	"bytes"
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/report"
)

func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("KAUDIT_CHROMIUM"); p != "" {
		return p
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Skip("no chromium found (apt-get install chromium, or set KAUDIT_CHROMIUM)")
	return ""
}

// probe is injected first into <head> of a copy of the page: it records
// console.error / console.warn calls, uncaught exceptions, unhandled
// rejections and resources that failed to load in an attribute of <html>,
// which --dump-dom then carries out (headless Chromium logs every console
// level as INFO, so stderr alone cannot tell an error from a log line).
const probe = `<script>(function(){
var root = document.documentElement;
root.setAttribute("data-kaudit-probe", "ran");
function note(kind, msg) { root.setAttribute("data-kaudit-problems", (root.getAttribute("data-kaudit-problems") || "") + kind + ": " + msg + "\n"); }
["error", "warn"].forEach(function(k) { var o = console[k]; console[k] = function() { note("console." + k, Array.prototype.join.call(arguments, " ")); return o.apply(console, arguments); }; });
window.addEventListener("error", function(e) {
  if (e.target && e.target !== window && (e.target.src || e.target.href)) { note("resource", "failed to load " + (e.target.src || e.target.href)); return; }
  note("uncaught", e.message + " at " + e.filename + ":" + e.lineno);
}, true);
window.addEventListener("unhandledrejection", function(e) { note("unhandledrejection", String(e.reason)); });
})();</script>`

// open loads a copy of file with the probe in headless Chromium and returns
// the DOM after load and the problems the page reported: what the probe
// recorded, plus uncaught errors, refused (CSP) and failed loads from
// Chromium's log.
func open(t *testing.T, file string) (dom string, problems []string) {
	t.Helper()
	return openAt(t, file, "", "")
}

// openAt is open with the page at a window size ("1280,800"; "" for
// Chromium's default) and a fragment ("#find=NAME"; "" for none).
func openAt(t *testing.T, file, size, fragment string) (dom string, problems []string) {
	t.Helper()
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	loc := regexp.MustCompile(`(?i)<head[^>]*>`).FindIndex(page)
	if loc == nil {
		t.Fatalf("%s: no <head>", file)
	}
	probed := string(page[:loc[1]]) + probe + string(page[loc[1]:])
	copyPath := filepath.Join(t.TempDir(), filepath.Base(file))
	if err := os.WriteFile(copyPath, []byte(probed), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0",
		"--virtual-time-budget=2000", "--dump-dom", "file://" + copyPath + fragment}
	if size != "" {
		args = append([]string{"--window-size=" + size, "--hide-scrollbars"}, args...)
	}
	cmd := exec.CommandContext(ctx, chromium(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	dom = stdout.String()
	if m := regexp.MustCompile(`data-kaudit-problems="([^"]*)"`).FindStringSubmatch(dom); m != nil {
		for _, l := range strings.Split(html.UnescapeString(m[1]), "\n") {
			if l != "" {
				problems = append(problems, l)
			}
		}
	}
	return dom, append(problems, logProblems(stderr.String())...)
}

// Chromium logs page console output as
// [pid:tid:date:LEVEL:CONSOLE(:|()line...] "message", source: url (line)
var consoleLine = regexp.MustCompile(`:CONSOLE[^\]]*\] "(.*)", source: `)

// logProblems picks from Chromium's log the console messages that no probe
// can see: exceptions thrown before it ran, refused inline scripts or
// styles (a Content-Security-Policy), and failed loads.
func logProblems(log string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		m := consoleLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		msg := m[1]
		for _, bad := range []string{"Uncaught", "Refused to", "Failed to load", "net::ERR_"} {
			if strings.Contains(msg, bad) {
				out = append(out, "log: "+msg)
				break
			}
		}
	}
	return out
}

// The detector itself works: a page with a console error and an uncaught
// exception is caught.
func TestConsoleErrorsAreDetected(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.html")
	page := `<!doctype html><html><head><title>t</title></head><body><p id="x">x</p>
<img src="missing.png">
<script>console.log("a log line is fine"); console.error("kaudit-test broken"); undefinedFunction();</script></body></html>`
	if err := os.WriteFile(p, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	dom, problems := open(t, p)
	if !strings.Contains(dom, `id="x"`) {
		t.Fatalf("no DOM dumped:\n%s", dom)
	}
	all := strings.Join(problems, "\n")
	for _, want := range []string{"console.error: kaudit-test broken", "uncaught: Uncaught ReferenceError: undefinedFunction is not defined", "resource: failed to load file://"} {
		if !strings.Contains(all, want) {
			t.Errorf("not detected: %q (got %q): the browser test would pass broken pages", want, problems)
		}
	}
	if strings.Contains(all, "a log line is fine") {
		t.Errorf("console.log counted as a problem: %q", problems)
	}
	t.Logf("detected: %q", problems)
}

func checkReport(t *testing.T, r *report.Report, htmlFile string) {
	t.Helper()
	dom, problems := open(t, htmlFile)
	if !strings.Contains(dom, `data-kaudit-probe="ran"`) {
		t.Errorf("the console probe did not run (a Content-Security-Policy blocking inline scripts?)")
	}
	if len(problems) > 0 {
		t.Errorf("console problems:\n%s", strings.Join(problems, "\n"))
	}
	if !regexp.MustCompile(`<table[^>]*class="[^"]*\bmatrix\b`).MatchString(dom) {
		t.Errorf("no rules × hosts matrix in the DOM")
	}
	for _, h := range r.Hosts {
		if !strings.Contains(dom, `id="host-`+h.Name+`"`) {
			t.Errorf("no section id=host-%s", h.Name)
		}
	}
	if !strings.Contains(dom, "</html>") {
		t.Errorf("DOM truncated")
	}
}

// Renders report fixtures (and the generated demo report when present) and
// opens them.
func TestHTMLReportInChromium(t *testing.T) {
	for _, src := range []string{"../report/testdata/report.json", "demo/report.json"} {
		t.Run(filepath.Base(filepath.Dir(src)), func(t *testing.T) {
			r, err := report.Load(src)
			if os.IsNotExist(err) {
				t.Skipf("%s not generated (sh docs/generate.sh)", src)
			}
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "report.html")
			f, err := os.Create(out)
			if err != nil {
				t.Fatal(err)
			}
			if err := report.Render(f, "html", r, report.Options{}); err != nil {
				t.Fatal(err)
			}
			f.Close()
			checkReport(t, r, out)
			screenshot(t, out, filepath.Base(filepath.Dir(src)))
		})
	}
}

// screenshot saves a PNG of the page, as a person would see it, into
// $KAUDIT_SCREENSHOT_DIR (default: the system temp dir) and checks that
// Chromium produced a real image.
func screenshot(t *testing.T, page, name string) {
	t.Helper()
	dir := os.Getenv("KAUDIT_SCREENSHOT_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	png := filepath.Join(dir, "kaudit-report-"+name+".png")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium(t),
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--user-data-dir="+t.TempDir(), "--window-size=1400,2000",
		"--screenshot="+png, "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	data, err := os.ReadFile(png)
	if err != nil || len(data) < 10000 || string(data[1:4]) != "PNG" {
		t.Fatalf("screenshot %s: %d bytes, err %v", png, len(data), err)
	}
	t.Logf("screenshot: %s (%d bytes)", png, len(data))
}

// The committed docs/demo/report.html is what the README links to.
func TestCommittedDemoHTML(t *testing.T) {
	r, err := report.Load("demo/report.json")
	if err != nil {
		t.Skipf("docs/demo not generated: %v", err)
	}
	checkReport(t, r, "demo/report.html")
}
