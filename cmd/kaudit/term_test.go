package main

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/pipeline"
)

// The demo's default table is short: at 120 columns at most 100 lines,
// the hosts table within the first screen (24 lines), no line wider than
// the width, the plan as a summary with the command that shows it whole.
func TestDemoDefaultIsShort(t *testing.T) {
	for _, width := range []string{"80", "120", "200"} {
		code, out, errOut := runCLI(t, "demo", "--width", width)
		if code != ExitFindings {
			t.Fatalf("--width %s: exit %d (stderr %s)", width, code, errOut)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		for i, l := range lines {
			if w := termui.StringWidth(l); width != "200" && w > atoi(t, width) {
				t.Errorf("--width %s: line %d is %d wide: %q", width, i+1, w, l)
			}
		}
		if width != "120" {
			continue
		}
		if len(lines) > 100 {
			t.Errorf("demo at 120 columns prints %d lines, want ≤ 100", len(lines))
		}
		last := -1
		for i, l := range lines {
			if strings.HasPrefix(l, "kafka-down-08 ") { // the hosts table's last row
				last = i
			}
		}
		if last < 0 || last >= 24 {
			t.Errorf("hosts table ends on line %d, want within the first screen (24 lines)\n%s", last+1, out)
		}
		if !planSummary.MatchString(out) {
			t.Errorf("demo lacks the plan's summary (%s)", planSummary)
		}
		for _, want := range []string{"kaudit demo -v", "kaudit explain RULE"} {
			if !strings.Contains(out, want) {
				t.Errorf("demo lacks %q", want)
			}
		}
		if strings.Contains(out, "(runtime+persist)") {
			t.Error("the default demo prints the whole plan: it belongs to -v")
		}
	}
	code, out, _ := runCLI(t, "demo", "--width", "120", "-v")
	if code != ExitFindings || !strings.Contains(out, "(runtime+persist)") || !strings.Contains(out, "  why ") {
		t.Errorf("demo -v: exit %d, want the whole plan and the rationale", code)
	}
}

var planSummary = regexp.MustCompile(`Fix plan: [1-9][0-9]* changes on [1-9] hosts, [0-9]+ needs? a broker restart`)

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func TestColorFlags(t *testing.T) {
	dir := t.TempDir()
	scan := filepath.Join(dir, "scan.json")
	if code, _, e := runCLI(t, "demo", "-f", "json", "-o", scan); code != ExitFindings {
		t.Fatalf("demo -f json: exit %d: %s", code, e)
	}
	for _, c := range []struct {
		args  []string
		env   map[string]string
		color bool
		code  int
	}{
		{args: nil, color: false, code: ExitFindings}, // a buffer is not a terminal
		{args: []string{"--color", "always"}, color: true, code: ExitFindings},
		{args: []string{"--color", "always"}, env: map[string]string{"NO_COLOR": "1"}, color: true, code: ExitFindings},
		{env: map[string]string{"CLICOLOR_FORCE": "1"}, color: true, code: ExitFindings},
		{env: map[string]string{"CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, color: false, code: ExitFindings},
		{args: []string{"--no-color"}, env: map[string]string{"CLICOLOR_FORCE": "1"}, color: false, code: ExitFindings},
		{args: []string{"--color", "never"}, env: map[string]string{"CLICOLOR_FORCE": "1"}, color: false, code: ExitFindings},
		{args: []string{"--color", "always", "--no-color"}, code: ExitUsage},
		{args: []string{"--color", "sometimes"}, code: ExitUsage},
		{args: []string{"--width", "-1"}, code: ExitUsage},
	} {
		for _, k := range []string{"NO_COLOR", "CLICOLOR_FORCE"} {
			t.Setenv(k, c.env[k])
		}
		code, out, errOut := runCLI(t, append([]string{"report", scan}, c.args...)...)
		if code != c.code {
			t.Errorf("%v %v: exit %d, want %d (%s)", c.args, c.env, code, c.code, errOut)
			continue
		}
		if code == ExitFindings && strings.Contains(out, "\x1b[") != c.color {
			t.Errorf("%v %v: colour %v, want %v", c.args, c.env, !c.color, c.color)
		}
	}
}

// stderr goes through termsafe: an error quoting hostile text shows it.
func TestStderrIsSanitized(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scan\x1b]0;pwned\a\u202e.json")
	code, _, errOut := runCLI(t, "report", path)
	if code != ExitUsage {
		t.Fatalf("exit %d", code)
	}
	if strings.ContainsAny(errOut, "\x1b\a\u202e") || !strings.Contains(errOut, `scan\x1b]0;pwned\a\u202e.json`) {
		t.Errorf("stderr = %q", errOut)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "kaudit version ") || strings.TrimSpace(strings.TrimPrefix(out, "kaudit version ")) != toolVersion() {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	for _, c := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "1936d55aabbccddeeff00112233"}, {Key: "vcs.modified", Value: "true"}}}, "devel+1936d55aabbc-dirty"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
	} {
		if got := pipeline.BuildVersion(&c.bi); got != c.want {
			t.Errorf("buildVersion(%+v) = %q, want %q", c.bi.Main, got, c.want)
		}
	}
}

func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{
		"bash": "complete -o bashdefault -o default -o nospace -F _kaudit_bash_autocomplete kaudit",
		"zsh":  "compdef _kaudit_zsh_autocomplete kaudit",
		"fish": "complete -r -c kaudit -n '__fish_kaudit_no_subcommand' -a 'scan'",
	} {
		code, out, errOut := runCLI(t, "completion", shell)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("completion %s: exit %d, lacks %q (stderr %s)\n%s", shell, code, want, errOut, out)
		}
	}
	if code, _, _ := runCLI(t, "completion", "tcsh"); code != ExitUsage {
		t.Errorf("completion tcsh: exit %d, want %d", code, ExitUsage)
	}
	// What the scripts ask: subcommands, then a command's flags, without
	// running the command. urfave/cli reads os.Args for this, so the test
	// sets it as the shell would.
	complete := func(args ...string) (int, string) {
		saved := os.Args
		defer func() { os.Args = saved }()
		os.Args = append([]string{"kaudit"}, args...)
		code, out, _ := runCLI(t, args...)
		return code, out
	}
	if code, out := complete("--generate-bash-completion"); code != 0 || !strings.Contains(out, "scan\n") || !strings.Contains(out, "completion\n") {
		t.Errorf("top-level completion: exit %d\n%s", code, out)
	}
	code, out := complete("demo", "--w", "--generate-bash-completion")
	if code != 0 || !strings.Contains(out, "--width") || strings.Contains(out, "Hosts") {
		t.Errorf("demo flag completion: exit %d\n%s", code, out)
	}
	// The completion flag stays last: the scan is not run.
	if code, out := complete("scan", "inventory.yaml", "--generate-bash-completion"); code != 0 || strings.Contains(out, "error") {
		t.Errorf("completion after a positional argument: exit %d\n%s", code, out)
	}
}

// explain's prose takes the terminal's width ($COLUMNS here).
func TestExplainWidth(t *testing.T) {
	for _, cols := range []string{"60", "120"} {
		t.Setenv("COLUMNS", cols)
		code, out, _ := runCLI(t, "explain", "kernel-synack-wscale")
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		longest := 0
		for _, l := range strings.Split(out, "\n") {
			if !strings.Contains(l, "://") { // a reference's URL is never cut
				longest = max(longest, termui.StringWidth(l))
			}
		}
		if longest > atoi(t, cols) || longest < atoi(t, cols)-20 {
			t.Errorf("COLUMNS=%s: longest line %d", cols, longest)
		}
	}
}
