package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kaudit/kaudit/remediate"
)

// What fix --apply and rollback share: the journal directory, the
// confirmation, and how a run is printed.

// journalDir resolves --journal-dir (default $XDG_STATE_HOME/kaudit/runs,
// else ~/.local/state/kaudit/runs) and creates it (0700).
func journalDir(flag string) (string, error) {
	dir := flag
	if dir == "" {
		if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
			dir = filepath.Join(x, "kaudit", "runs")
		} else {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", usageErr("cannot find the home directory for the run journal (%v): set --journal-dir", err)
			}
			dir = filepath.Join(home, ".local", "state", "kaudit", "runs")
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", usageErr("journal directory: %v", err)
	}
	return dir, nil
}

// confirm asks question on a terminal; without one it refuses (exit 2)
// unless yes.
func confirm(e env, yes bool, question, flagHint string) (bool, error) {
	if yes {
		return true, nil
	}
	in, ok := e.stdin.(*os.File)
	if !ok || !isTerminal(in) {
		return false, usageErr("%s: stdin is not a terminal, so kaudit cannot ask: add --yes to go ahead; nothing changed", flagHint)
	}
	fmt.Fprintf(e.stderr, "%s [y/N] ", question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}

// printRun writes one block per host of a run: status, each change
// from → to, the error, and restart notes.
func printRun(w io.Writer, j *remediate.Journal) {
	var verified, restart int
	for _, hj := range j.Hosts {
		if len(hj.Changes) == 0 {
			continue
		}
		printHostRun(w, hj)
		if hj.Status == remediate.StatusVerified {
			verified++
			for _, c := range hj.Changes {
				if c.RestartRequired {
					restart++
					break
				}
			}
		}
	}
	fmt.Fprintf(w, "%s changed and verified, %d of them %s a broker restart (kaudit never restarts a broker)\n", countOf(verified, "host", "hosts"), restart, map[bool]string{true: "needs", false: "need"}[restart == 1])
}

func printHostRun(w io.Writer, hj remediate.HostJournal) {
	fmt.Fprintf(w, "%s: %s\n", hj.Host, hj.Status)
	for _, c := range hj.Changes {
		from := c.From
		if from == "" {
			from = "(unset)"
		}
		fmt.Fprintf(w, "  %s %s: %s → %s", c.Kind, c.Target, from, c.To)
		if c.RestartRequired {
			fmt.Fprint(w, " [broker restart required]")
		}
		fmt.Fprintln(w)
	}
	for _, b := range hj.Backups {
		state := "did not exist"
		if b.Existed {
			state = "sha256 " + b.SHA256 + ", copy " + b.Stored
		}
		fmt.Fprintf(w, "  backup %s (%s)\n", b.Path, state)
	}
	if hj.Error != "" {
		fmt.Fprintf(w, "  %s\n", hj.Error)
	}
}

func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
