package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/kaudit/kaudit/internal/termui"
)

// TestKauditMain is not a test: it is how TestDemoOnATerminal runs
// kaudit as a process (this test binary, re-executed with the
// arguments in KAUDIT_MAIN_ARGS), the usual helper-process pattern.
func TestKauditMain(t *testing.T) {
	args := os.Getenv("KAUDIT_MAIN_ARGS")
	if args == "" {
		t.Skip("helper process for TestDemoOnATerminal")
	}
	os.Exit(run(append([]string{"kaudit"}, strings.Fields(args)...), os.Stdout, os.Stderr))
}

// ansiSeq matches the escape sequences kaudit writes itself: SGR colours
// and erase-to-end-of-line.
var ansiSeq = regexp.MustCompile("\x1b\\[[0-9;]*[mK]")

// TestDemoOnATerminal runs kaudit demo on a real pseudo-terminal of 80
// columns (creack/pty), with no --width and no COLUMNS: kaudit must read
// the width from the tty, colour (stdout is a terminal), draw the
// progress line on stderr, and write no line wider than the pane.
func TestDemoOnATerminal(t *testing.T) {
	for _, cols := range []uint16{80, 120} {
		out := runOnPTY(t, cols, "demo")
		screen := lines(out)
		if len(screen) < 20 {
			t.Fatalf("%d columns: only %d lines:\n%s", cols, len(screen), out)
		}
		for i, l := range screen {
			if w := termui.StringWidth(l); w > int(cols) {
				t.Errorf("%d columns: line %d is %d wide: %q", cols, i+1, w, l)
			}
		}
		if !strings.Contains(out, "\x1b[") {
			t.Errorf("%d columns: no colour on a terminal", cols)
		}
		if !strings.Contains(out, "scanning [") || !strings.Contains(out, "10/10 hosts · 1 failed") {
			t.Errorf("%d columns: no progress line on the terminal's stderr", cols)
		}
		if cols == 120 && len(screen) > 100 {
			t.Errorf("120 columns: %d lines, want ≤ 100", len(screen))
		}
	}
	// Not a terminal: no progress line, no colour.
	cmd := helper("demo")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); procExit(err) != ExitFindings {
		t.Fatalf("demo into a pipe: %v\n%s", err, stderr.String())
	}
	if stderr.Len() != 0 || strings.Contains(stdout.String(), "\x1b") {
		t.Errorf("into a pipe: stderr %q, escape codes in stdout: %v", stderr.String(), strings.Contains(stdout.String(), "\x1b"))
	}
}

// TestRulesAndExplainOnATerminal: kaudit rules and kaudit explain fit a
// pty of 80 columns, as scan, demo and fix do (no --width, no COLUMNS).
// A reference's URL is never cut (it must stay clickable and copyable):
// a line that is one URL alone may be wider.
func TestRulesAndExplainOnATerminal(t *testing.T) {
	for _, args := range [][]string{{"rules"}, {"explain", "kernel-synack-wscale"}, {"explain", "nic-ring"}, {"explain", "broker-version-mismatch"}} {
		for i, l := range lines(runOnPTYExit(t, 80, ExitOK, args...)) {
			if u := strings.TrimSpace(l); strings.HasPrefix(u, "https://") && !strings.Contains(u, " ") {
				continue
			}
			if w := termui.StringWidth(l); w > 80 {
				t.Errorf("kaudit %v: line %d is %d wide: %q", args, i+1, w, l)
			}
		}
	}
}

func helper(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestKauditMain$")
	env := []string{"KAUDIT_MAIN_ARGS=" + strings.Join(args, " "), "TERM=xterm-256color"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COLUMNS=") && !strings.HasPrefix(kv, "NO_COLOR=") && !strings.HasPrefix(kv, "CLICOLOR_FORCE=") && !strings.HasPrefix(kv, "TERM=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	return cmd
}

// runOnPTY runs kaudit with stdin, stdout and stderr on one pty of cols
// columns and returns everything it wrote.
func runOnPTY(t *testing.T, cols uint16, args ...string) string {
	t.Helper()
	return runOnPTYExit(t, cols, ExitFindings, args...)
}

// runOnPTYExit is runOnPTY of a command that exits with code.
func runOnPTYExit(t *testing.T, cols uint16, code int, args ...string) string {
	t.Helper()
	cmd := helper(args...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: cols, Rows: 50})
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer f.Close()
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&buf, f); close(done) }() // ends with EIO when the child exits
	werr := cmd.Wait()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("pty output did not end")
	}
	if procExit(werr) != code {
		t.Fatalf("kaudit %v on a pty: %v\n%s", args, werr, buf.String())
	}
	return buf.String()
}

// lines is what the pane shows: the output split at line ends, our
// escape sequences removed, and of a line redrawn with \r only the last
// drawing.
func lines(out string) []string {
	var ls []string
	for _, l := range strings.Split(strings.ReplaceAll(out, "\r\n", "\n"), "\n") {
		if i := strings.LastIndex(l, "\r"); i >= 0 {
			l = l[i+1:]
		}
		ls = append(ls, ansiSeq.ReplaceAllString(l, ""))
	}
	return ls
}

func procExit(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
