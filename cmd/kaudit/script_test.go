package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/kaudit/kaudit/test/simhost"
)

var updateScripts = flag.Bool("update-scripts", false, "rewrite the transcripts' expected output from the runs")

// exitFileEnv names the file the test binary's kaudit writes its exit
// code to, for the scripts' `exit N` (testscript's `!` accepts any
// non-zero code; kaudit's exit table is part of what a user sees).
const exitFileEnv = "KAUDIT_SCRIPT_EXIT_FILE"

// TestMain lets testscript run kaudit as a command of its own: `exec`
// is not needed, `kaudit ARGS` in a script runs this binary's main.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"kaudit": func() {
			code := run(os.Args, os.Stdout, os.Stderr)
			if p := os.Getenv(exitFileEnv); p != "" {
				_ = os.WriteFile(p, []byte(strconv.Itoa(code)), 0o600)
			}
			os.Exit(code)
		},
	})
}

// TestScripts runs the CLI transcripts in testdata/script: what a user
// types and sees (stdout, stderr, exit code), one file per topic.
//
//	go test ./cmd/kaudit -run TestScripts/usage    one transcript
//	go test ./cmd/kaudit -run TestScripts -update-scripts  rewrite cmp files from the runs
func TestScripts(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		UpdateScripts:       *updateScripts,
		RequireExplicitExec: false,
		Setup: func(e *testscript.Env) error {
			e.Setenv(exitFileEnv, filepath.Join(e.WorkDir, ".kaudit-exit"))
			e.Setenv("REPO", repo) // the repository root, for its fixtures
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"simfleet": cmdSimfleet,
			"exit":     cmdExit,
			"date":     cmdDate,
			"expand":   cmdExpand,
		},
	})
}

// exit N asserts that the last kaudit command exited with code N.
func cmdExit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: exit N")
	}
	b, err := os.ReadFile(ts.Getenv(exitFileEnv))
	ts.Check(err)
	if got := string(b); got != args[0] {
		ts.Fatalf("kaudit exited %s, want %s", got, args[0])
	}
}

// date NAME DAYS sets $NAME to the UTC date DAYS days from today
// (YYYY-MM-DD), for waiver files that expire relative to the run.
func cmdDate(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: date NAME DAYS")
	}
	days, err := strconv.Atoi(args[1])
	ts.Check(err)
	ts.Setenv(args[0], time.Now().UTC().AddDate(0, 0, days).Format("2006-01-02"))
}

// expand FILE replaces $NAME and ${NAME} in the script's FILE with the
// script's environment.
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: expand FILE")
	}
	p := ts.MkAbs(args[0])
	b, err := os.ReadFile(p)
	ts.Check(err)
	ts.Check(os.WriteFile(p, []byte(os.Expand(string(b), ts.Getenv)), 0o600))
}

// simfleet HOST... [down=NAME...] serves the named hosts of the simulated
// demo fleet (test/simhost) on loopback SSH servers for the rest of
// the script and writes $WORK/inventory.yaml for them; down=NAME adds a
// host nothing listens for.
func cmdSimfleet(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! simfleet")
	}
	byName := map[string]*simhost.Host{}
	for _, h := range simhost.DemoFleet() {
		byName[h.Name] = h
	}
	var hosts []*simhost.Host
	var down []string
	for _, a := range args {
		if name, ok := strings.CutPrefix(a, "down="); ok {
			down = append(down, name)
			continue
		}
		h := byName[a]
		if h == nil {
			ts.Fatalf("simfleet: no demo host %q", a)
		}
		hosts = append(hosts, h)
	}
	dir := ts.MkAbs("fleet")
	ts.Check(os.MkdirAll(dir, 0o700))
	f, err := simhost.Start(dir, hosts, down...)
	ts.Check(err)
	ts.Defer(f.Close)
	var b strings.Builder
	fmt.Fprintf(&b, "defaults:\n  user: kafka\n  use_agent: false\n  identity_files: [%s]\n  known_hosts: [%s]\n  connect_timeout: %s\nhosts:\n", f.KeyFile, f.KnownHosts, 2*time.Second)
	for _, h := range f.Hosts {
		fmt.Fprintf(&b, "  %s: {address: 127.0.0.1, port: %d}\n", h.Name, h.Port)
	}
	ts.Check(os.WriteFile(ts.MkAbs("inventory.yaml"), []byte(b.String()), 0o600))
}
