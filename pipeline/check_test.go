package pipeline

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/probe"
	"github.com/kaudit/kaudit/audit/trust"
	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// The checks of what a person asked for: each bad value is refused with
// a message naming its flag; good values pass.
func TestFlagChecks(t *testing.T) {
	okCfg := Config{Concurrency: 1, Timeout: time.Second, ConnectTimeout: time.Second}
	run := "20240102T030405Z-1a2b3c4d"
	okRB := RollbackConfig{Concurrency: 1, Timeout: time.Second, ConnectTimeout: time.Second}
	bad := func(c Config, f func(*Config)) Config { f(&c); return c }
	badRB := func(c RollbackConfig, f func(*RollbackConfig)) RollbackConfig { f(&c); return c }
	probeErr := func(on bool, d time.Duration) error { _, err := ProbeFor(on, d); return err }
	cases := []struct {
		name string
		err  error
		want string // "" : no error
	}{
		{"config ok", okCfg.Check(), ""},
		{"concurrency 0", bad(okCfg, func(c *Config) { c.Concurrency = 0 }).Check(), "--concurrency must be at least 1"},
		{"timeout 0", bad(okCfg, func(c *Config) { c.Timeout = 0 }).Check(), "--timeout and --connect-timeout must be positive"},
		{"connect timeout <0", bad(okCfg, func(c *Config) { c.ConnectTimeout = -1 }).Check(), "--timeout and --connect-timeout must be positive"},
		{"probe off, any budget", probeErr(false, 0), ""},
		{"probe budget ok", probeErr(true, probe.MinBudget), ""},
		{"probe budget short", probeErr(true, probe.MinBudget-1), "--probe-budget must be between 500ms and 30s"},
		{"probe budget long", probeErr(true, probe.MaxBudget+1), "--probe-budget must be between 500ms and 30s"},
		{"rollback ok", RollbackJob{RunID: run, Config: okRB}.Check(), ""},
		{"rollback run id", RollbackJob{RunID: "x;rm", Config: okRB}.Check(), `rollback needs --run RUN-ID (as printed by fix --apply), got "x;rm"`},
		{"rollback timeout", RollbackJob{RunID: run, Config: badRB(okRB, func(c *RollbackConfig) { c.Timeout = 0 })}.Check(), "--concurrency, --timeout and --connect-timeout must be positive"},
		{"fix ok", FixJob{Config: ApplyConfig{Batch: 1}}.Check(), ""},
		{"fix batch 0", FixJob{}.Check(), "--batch must be at least 1"},
		{"fix max failures", FixJob{Config: ApplyConfig{Batch: 1, MaxFailures: -1}}.Check(), "--max-failures must be 0 or more"},
		{"one of", oneOf("format", "xml", []string{"json", "table"}), `unknown --format "xml" (known: json, table)`},
		{"one of ok", oneOf("format", "json", []string{"json", "table"}), ""},
		{"trust concurrency", Trust(context.Background(), Console{}, Fleet{}, TrustJob{Options: trust.Options{ConnectTimeout: time.Second}}), "--concurrency must be at least 1 and --connect-timeout positive"},
	}
	for _, c := range cases {
		got := ""
		if c.err != nil {
			got = c.err.Error()
		}
		if got != c.want {
			t.Errorf("%s: error %q, want %q", c.name, got, c.want)
		}
	}
}

func TestOutputFlagsCheck(t *testing.T) {
	f := OutputFlags{Format: "table", FailOn: "high", Layout: termui.Layout{Width: 77, Color: "always"}, Verbose: true, Quiet: true}
	o, err := f.Check("critical", &bytes.Buffer{})
	want := report.Options{Width: 77, Color: true, Verbose: true}
	if err != nil || o.FailOn != rules.Critical || o.Render != want || !o.Quiet {
		t.Errorf("table: %+v, %v", o, err)
	}
	f.Format = "json" // colour is only ever written for the table
	if o, err := f.Check("high", &bytes.Buffer{}); err != nil || o.Render.Color {
		t.Errorf("json: %+v, %v", o, err)
	}
	for _, c := range []struct {
		f      OutputFlags
		failOn string
		want   string
	}{
		{OutputFlags{Format: "xml"}, "high", `unknown --format "xml"`},
		{OutputFlags{Format: "json"}, "severe", `unknown --fail-on "severe" (critical, high, medium, low, info)`},
		{OutputFlags{Format: "json", Layout: termui.Layout{Width: -1}}, "high", "--width must be a positive number of columns"},
		{OutputFlags{Format: "json", Layout: termui.Layout{Color: "sometimes"}}, "high", `unknown --color "sometimes"`},
	} {
		if _, err := c.f.Check(c.failOn, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v at %s: %v, want %q", c.f, c.failOn, err, c.want)
		}
	}
}

// emit carries the report's verdict out as a *Failure (nil for Pass),
// with judge's message when it has one.
func TestEmitVerdict(t *testing.T) {
	high := rules.Finding{Rule: "somaxconn", Status: rules.Fail, Severity: rules.High}
	r := func(interrupted bool, unreachable int, fs ...rules.Finding) *report.Report {
		rep := &report.Report{Interrupted: interrupted, Hosts: []report.Host{{Name: "a", Findings: fs}}}
		rep.Summary.Hosts, rep.Summary.Audited, rep.Summary.Unreachable = 1+unreachable, 1, unreachable
		return rep
	}
	for _, c := range []struct {
		name string
		r    *report.Report
		want Verdict
		msg  string
	}{
		{"pass", r(false, 0), Pass, ""},
		{"findings", r(false, 0, high), Findings, ""},
		{"unaudited", r(false, 1), Unaudited, ""},
		{"interrupted", r(true, 1), Interrupted, "interrupted: 1 of 2 hosts audited"},
	} {
		var out bytes.Buffer
		err := emit(&out, c.r, Output{Format: "json", FailOn: rules.High})
		var f *Failure
		switch {
		case out.Len() == 0:
			t.Errorf("%s: nothing rendered", c.name)
		case c.want == Pass && err != nil:
			t.Errorf("%s: %v, want nil", c.name, err)
		case c.want != Pass && (!errors.As(err, &f) || f.Verdict != c.want):
			t.Errorf("%s: %#v, want verdict %v", c.name, err, c.want)
		case f != nil && (f.Err == nil) != (c.msg == ""):
			t.Errorf("%s: message %v, want %q", c.name, f.Err, c.msg)
		case f != nil && f.Err != nil && f.Err.Error() != c.msg:
			t.Errorf("%s: message %q, want %q", c.name, f.Err, c.msg)
		}
	}
}
