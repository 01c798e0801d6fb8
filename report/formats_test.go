package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
)

// go test ./report/ -update rewrites testdata/golden from the renderers.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const fixturePath = "testdata/report.json"

// loadFixture reads the hand-built four-host fleet: kafka-a1 fails the
// critical kernel rule and the backlog rules, kafka-b1 is compliant (one
// warn), kafka-c1 has unknowns (no ss, no ethtool, RHEL kernel), kafka-d1
// timed out.
func loadFixture(t *testing.T) *Report {
	t.Helper()
	r, err := Load(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type goldenCase struct {
	name   string // file name in testdata/golden
	format string
	opt    Options
}

// goldenCases: one golden file per registered format, plus the terminal
// table at 80, 120 and 200 columns, short and verbose, and coloured.
func goldenCases() []goldenCase {
	var cases []goldenCase
	for _, f := range Formats() {
		cases = append(cases, goldenCase{name: "report." + f, format: f})
	}
	for _, w := range []int{80, 120, 200} {
		cases = append(cases,
			goldenCase{name: fmt.Sprintf("report.w%d.table", w), format: "table", opt: Options{Width: w}},
			goldenCase{name: fmt.Sprintf("report.w%d.verbose.table", w), format: "table", opt: Options{Width: w, Verbose: true}})
	}
	return append(cases, goldenCase{name: "report.color.table", format: "table", opt: Options{Color: true, Width: 120}})
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			r := loadFixture(t)
			var buf bytes.Buffer
			if err := Render(&buf, tc.format, r, tc.opt); err != nil {
				t.Fatalf("render %s: %v", tc.format, err)
			}
			if tc.opt.Width > 0 {
				for i, l := range strings.Split(text.StripEscape(buf.String()), "\n") {
					if w := text.StringWidthWithoutEscSequences(l); w > tc.opt.Width {
						t.Errorf("line %d is %d columns wide, more than %d: %q", i+1, w, tc.opt.Width, l)
					}
				}
			}
			checkGolden(t, tc.name, buf.String())
		})
	}
}

// checkGolden compares got with testdata/golden/name, or writes it there
// with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `go test ./report/ -update` to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run `go test ./report/ -update` after checking the change)\n%s", path, firstDiff(string(want), got))
	}
}

// firstDiff shows the first differing line, enough to find the change.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n want: " + w + "\n  got: " + g
		}
	}
	return "(same lines, different bytes)"
}

func TestFormatsRegistered(t *testing.T) {
	want := []string{"html", "json", "junit", "markdown", "prometheus", "table"}
	got := Formats()
	for _, w := range want {
		found := false
		for _, g := range got {
			if g == w {
				found = true
			}
		}
		if !found {
			t.Errorf("format %q not registered (have %v)", w, got)
		}
	}
}

// Every registered format renders the fixture, an empty report and a
// report of only unreachable hosts without error, deterministically and
// without touching the report.
func TestEveryFormatRenders(t *testing.T) {
	empty := &Report{SchemaVersion: SchemaVersion}
	Summarize(empty)
	allDown := &Report{SchemaVersion: SchemaVersion, StartedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Hosts: []Host{
		{Name: "x1", Address: "192.0.2.1", Error: &HostError{Kind: facts.KindAuth, Message: "ssh: unable to authenticate"}},
		{Name: "x2", Address: "192.0.2.2", Error: &HostError{Kind: facts.KindHostKey, Message: "host key mismatch"}},
	}}
	Summarize(allDown)
	reports := map[string]func(t *testing.T) *Report{
		"fixture": loadFixture,
		"empty":   func(*testing.T) *Report { return empty },
		"allDown": func(*testing.T) *Report { return allDown },
	}
	for _, f := range Formats() {
		for name, get := range reports {
			for _, color := range []bool{false, true} {
				t.Run(f+"/"+name, func(t *testing.T) {
					r := get(t)
					before, _ := json.Marshal(r)
					var a, b bytes.Buffer
					if err := Render(&a, f, r, Options{Color: color}); err != nil {
						t.Fatalf("render: %v", err)
					}
					if err := Render(&b, f, r, Options{Color: color}); err != nil {
						t.Fatalf("render again: %v", err)
					}
					if a.Len() == 0 {
						t.Error("empty output")
					}
					if a.String() != b.String() {
						t.Error("two renders of the same report differ")
					}
					after, _ := json.Marshal(r)
					if !bytes.Equal(before, after) {
						t.Error("rendering changed the report")
					}
				})
			}
		}
	}
}

func TestUnknownFormat(t *testing.T) {
	err := Render(&bytes.Buffer{}, "yaml", loadFixture(t), Options{})
	if err == nil || !strings.Contains(err.Error(), "known: ") {
		t.Fatalf("want an error listing known formats, got %v", err)
	}
}

// The fixture is hand-built: its summary and scores must be what
// Summarize computes, or the golden files would pin wrong numbers.
func TestFixtureConsistent(t *testing.T) {
	r := loadFixture(t)
	want := loadFixture(t)
	Summarize(r)
	if !reflect.DeepEqual(r.Summary, want.Summary) {
		got, _ := json.Marshal(r.Summary)
		t.Errorf("fixture summary is stale; Summarize gives %s", got)
	}
	for i := range r.Hosts {
		if r.Hosts[i].Score != want.Hosts[i].Score || !reflect.DeepEqual(r.Hosts[i].Deductions, want.Hosts[i].Deductions) {
			t.Errorf("%s: fixture score %d, Summarize gives %d", r.Hosts[i].Name, want.Hosts[i].Score, r.Hosts[i].Score)
		}
	}
	// Every catalog rule appears on every audited host.
	ids := []string{"kernel-synack-wscale", "syncookies-fired", "listen-overflows", "kafka-backlog-hardcoded",
		"kafka-backlog-config", "listen-backlog-effective", "somaxconn", "syn-backlog", "tcp-timestamps",
		"window-scaling", "socket-buffers", "congestion-control", "sysctl-persisted", "nic-ring", "nic-offload"}
	for _, h := range r.Hosts {
		if h.Error != nil {
			continue
		}
		if len(h.Findings) != len(ids) {
			t.Errorf("%s: %d findings, want %d", h.Name, len(h.Findings), len(ids))
			continue
		}
		for i, f := range h.Findings {
			if f.Rule != ids[i] {
				t.Errorf("%s: finding %d is %s, want %s", h.Name, i, f.Rule, ids[i])
			}
			if f.Severity.Rank() == 0 {
				t.Errorf("%s/%s: bad severity %q", h.Name, f.Rule, f.Severity)
			}
		}
	}
	if got := r.WorstFailure(); got != rules.Critical {
		t.Errorf("worst failure %q, want critical", got)
	}
}

// A renderer never reads the clock: the fixture's StartedAt is the only time.
func TestNoWallClock(t *testing.T) {
	r := loadFixture(t)
	for _, f := range []string{"table", "markdown", "html", "junit", "prometheus"} {
		var buf bytes.Buffer
		if err := Render(&buf, f, r, Options{}); err != nil {
			t.Fatal(err)
		}
		year := time.Now().UTC().Format("2006-01-02")
		if strings.Contains(buf.String(), year) {
			t.Errorf("%s output contains today's date %s", f, year)
		}
	}
}
