package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/report/diff"
	"github.com/kaudit/kaudit/rules"
)

func TestWhatifCommand(t *testing.T) {
	code, out, stderr := runCLI(t, "whatif", reportFixture, "--assume-kernel", "6.1.0", "--assume-kafka", "3.6.1")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"What if: kernel 6.1.0, Kafka 3.6.1", "The upgrade would fix (", "kernel-synack-wscale", "fail → pass", "Safe to rolling-restart?"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The fixture has an unreachable host: no cluster it is in can be called safe.
	code, _, stderr = runCLI(t, "whatif", reportFixture, "--assume-kernel", "6.1.0", "--fail-unsafe")
	if code != ExitFindings || !strings.Contains(stderr, "not safe to rolling-restart") {
		t.Errorf("--fail-unsafe: exit %d %s", code, stderr)
	}
	p := filepath.Join(t.TempDir(), "w.json")
	if code, stdout, stderr := runCLI(t, "whatif", reportFixture, "--assume-kafka", "3.6.1", "-f", "json", "-o", p); code != ExitOK || stdout != "" {
		t.Fatalf("exit %d %q %s", code, stdout, stderr)
	}
	data, _ := os.ReadFile(p)
	var w diff.WhatIf
	if err := json.Unmarshal(data, &w); err != nil || w.Assume.Kafka != "3.6.1" || len(w.Clusters) == 0 {
		t.Errorf("json: %v %+v", err, w)
	}
	for _, args := range [][]string{
		{"whatif", reportFixture},
		{"whatif", "--assume-kernel", "6.1.0"},
		{"whatif", reportFixture, "--assume-kernel", "latest"},
		{"whatif", reportFixture, "--assume-kafka", "three"},
		{"whatif", reportFixture, "--assume-kafka", "3.6.1", "-f", "html"},
		{"whatif", "/nonexistent.json", "--assume-kafka", "3.6.1"},
	} {
		if code, _, _ := runCLI(t, args...); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, ExitUsage)
		}
	}
}

// emitWhatIf is what scan calls: it prints on stderr and leaves the report alone.
func TestEmitWhatIfHook(t *testing.T) {
	r, err := report.Load(reportFixture)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := json.Marshal(r)
	var stdout, stderr bytes.Buffer
	app := &cli.App{Writer: &stdout, ErrWriter: &stderr, Commands: []*cli.Command{{
		Name: "x", Flags: whatIfFlags(),
		Action: func(c *cli.Context) error {
			return emitWhatIf(c, r, options{profile: rules.DefaultProfile()}, nil)
		},
	}}}
	if err := app.Run([]string{"kaudit", "x", "--assume-kernel", "6.1.0"}); err != nil {
		t.Fatal(err)
	}
	if stdout.Len() != 0 || !strings.Contains(stderr.String(), "What if: kernel 6.1.0") {
		t.Errorf("stdout %q\nstderr %s", stdout.String(), stderr.String())
	}
	if after, _ := json.Marshal(r); !bytes.Equal(before, after) {
		t.Error("the hook modified the report")
	}
	stderr.Reset()
	if err := app.Run([]string{"kaudit", "x"}); err != nil || stderr.Len() != 0 {
		t.Errorf("without flags: %v %q", err, stderr.String())
	}
}
