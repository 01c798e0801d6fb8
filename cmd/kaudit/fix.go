package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

func fixCommand() *cli.Command {
	return &cli.Command{
		Name:      "fix",
		Usage:     "scan, then print the remediation plan per host; --apply carries it out",
		ArgsUsage: "INVENTORY",
		Description: "The plan lists, per host, each change with its rule, from → to, whether it is applied at\n" +
			"runtime and/or persisted, and whether a broker restart is needed; then what kaudit cannot fix\n" +
			"itself (kernel, Kafka upgrades) with the recommended action. kaudit never restarts a broker.\n\n" +
			"--apply changes sysctls (running value and /etc/sysctl.d/99-kaudit.conf), server.properties, and\n" +
			"NIC rings/offloads (ethtool, persisted through the NIC's own manager when detected: NetworkManager,\n" +
			"ifcfg, ifupdown, systemd .link; else a udev rule). Per host: back up every file and running\n" +
			"value (on the host in /var/lib/kaudit/runs/RUN-ID/ and in the local journal), apply, gather again\n" +
			"and verify; a host that fails is restored from its backups. The first host with changes goes\n" +
			"alone (canary), then --batch hosts at a time; no new batch starts once more than --max-failures\n" +
			"hosts failed. Asks for confirmation on a terminal unless --yes; refuses without --yes otherwise.\n" +
			"Undo a run with: kaudit rollback INVENTORY --run RUN-ID.\n\n" +
			"Exit: 0 done (or nothing to change), 2 usage, 3 some hosts could not be audited,\n" +
			"4 some host failed (restored from its backups, or not: see the journal), 130 interrupted.",
		Flags: append(append(scanFlags(),
			&cli.StringFlag{Name: "rules", Usage: "only plan fixes for these comma-separated rule `IDS`"},
			&cli.BoolFlag{Name: "apply", Usage: "apply the plan (sysctl, server.properties and NIC changes)"},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "with --apply: do not ask for confirmation"},
			&cli.IntFlag{Name: "batch", Value: 1, Usage: "with --apply: hosts changed at once after the first (canary) host"},
			&cli.IntFlag{Name: "max-failures", Value: 0, Usage: "with --apply: start no further batch once more than `N` hosts failed"},
			// readOptions reads these; fix prints a plan, not a report.
			&cli.StringFlag{Name: "format", Value: "table", Hidden: true},
			&cli.StringFlag{Name: "fail-on", Value: "high", Hidden: true},
			&cli.StringFlag{Name: "journal-dir", Usage: "with --apply: where the run journal is written (default ~/.local/state/kaudit/runs)"},
		), layoutFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("fix needs exactly one INVENTORY argument")
			}
			sel, err := selector(c.String("rules"))
			if err != nil {
				return err
			}
			if c.Int("batch") < 1 {
				return usageErr("--batch must be at least 1")
			}
			if c.Int("max-failures") < 0 {
				return usageErr("--max-failures must be 0 or more")
			}
			opts, err := readOptions(c)
			if err != nil {
				return err
			}
			_, hosts, err := loadInventory(c)
			if err != nil {
				return err
			}
			var jdir string
			if c.Bool("apply") {
				// Before connecting anywhere: an apply without a journal
				// directory would be refused later anyway.
				if jdir, err = journalDir(c.String("journal-dir")); err != nil {
					return err
				}
			}
			runner := transport.NewSSH()
			r, err := scanHosts(c.Context, c.App.ErrWriter, hosts, opts, runner)
			if err != nil {
				return err
			}
			if r.Interrupted {
				printPlan(c.App.Writer, r, sel, opts.term.Width)
				return &exitError{code: ExitInterrupted, err: fmt.Errorf("interrupted while scanning: nothing changed")}
			}
			if !c.Bool("apply") {
				printPlan(c.App.Writer, r, sel, opts.term.Width)
				return unauditedErr(r)
			}
			return applyPlans(c, r, sel, hosts, opts, runner, jdir)
		},
	}
}

func unauditedErr(r *report.Report) error {
	if r.Summary.Unreachable > 0 {
		return &exitError{code: ExitUnaudited, err: fmt.Errorf("%d of %d hosts could not be audited, so they have no plan", r.Summary.Unreachable, r.Summary.Hosts)}
	}
	return nil
}

func selector(list string) (remediate.Selector, error) {
	var sel remediate.Selector
	for _, id := range strings.Split(list, ",") {
		id = strings.TrimSpace(id)
		if id == "" {
			continue
		}
		if _, ok := rules.Lookup(id); !ok {
			return sel, usageErr("--rules: no rule %q (kaudit rules lists them)", id)
		}
		sel.Rules = append(sel.Rules, id)
	}
	return sel, nil
}

// plans returns the fix plan of every audited host, and prints a line
// (wrapped at width) for each host that was not audited.
func plans(w io.Writer, r *report.Report, sel remediate.Selector, width int) []remediate.HostPlan {
	var out []remediate.HostPlan
	for _, h := range r.Hosts {
		if h.Error != nil {
			line := fmt.Sprintf("%s: not audited (%s: %s): no plan", termsafe.Line(h.Name), termsafe.Line(h.Error.Kind), termsafe.Line(h.Error.Message))
			for _, l := range termui.Wrap(line, width, 4) {
				fmt.Fprintln(w, l)
			}
			continue
		}
		out = append(out, remediate.PlanHost(h.Name, h.Facts, h.Findings, sel))
	}
	return out
}

// printPlan renders the fix plan of every audited host, wrapped at width.
func printPlan(w io.Writer, r *report.Report, sel remediate.Selector, width int) {
	remediate.RenderPlanOpts(w, plans(w, r, sel, width), remediate.PlanOptions{Width: width})
}

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
func confirm(c *cli.Context, yes bool, question, flagHint string) (bool, error) {
	if yes {
		return true, nil
	}
	in, ok := c.App.Reader.(*os.File)
	if !ok || !isTerminal(in) {
		return false, usageErr("%s: stdin is not a terminal, so kaudit cannot ask: add --yes to go ahead; nothing changed", flagHint)
	}
	fmt.Fprintf(c.App.ErrWriter, "%s [y/N] ", question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}

func applyPlans(c *cli.Context, r *report.Report, sel remediate.Selector, inv []inventory.Host, opts options, runner transport.Runner, jdir string) error {
	w := c.App.Writer
	ps := plans(w, r, sel, opts.term.Width)
	// The plan, without RenderPlan's "nothing changed (run with --apply)".
	var buf bytes.Buffer
	remediate.RenderPlanOpts(&buf, ps, remediate.PlanOptions{Width: opts.term.Width})
	text := buf.String()
	if i := strings.LastIndex(strings.TrimSuffix(text, "\n"), "\n"); i >= 0 && strings.Contains(text[i:], "(run with --apply)") {
		text = text[:i+1]
	}
	io.WriteString(w, text)

	byName := map[string]inventory.Host{}
	for _, h := range inv {
		byName[h.Name] = h
	}
	var hosts []apply.Host
	nChanges, nHosts := 0, 0
	for i, p := range ps {
		var rh *report.Host
		for j := range r.Hosts {
			if r.Hosts[j].Name == p.Host {
				rh = &r.Hosts[j]
			}
		}
		if rh == nil {
			continue
		}
		h := apply.Host{Inv: byName[p.Host], Facts: rh.Facts, Findings: rh.Findings, Plan: ps[i]}
		todo, skipped := apply.Split(p, rh.Findings)
		for _, s := range skipped {
			fmt.Fprintf(w, "%s: skipped %s %s → %s: %s\n", termsafe.Line(p.Host), s.Change.Kind, termsafe.Line(s.Change.Target), termsafe.Line(s.Change.To), termsafe.Line(s.Reason))
		}
		if len(todo) > 0 {
			nChanges += len(todo)
			nHosts++
		}
		hosts = append(hosts, h)
	}
	if nChanges == 0 {
		if remediate.Summarize(ps).Changes > 0 { // only skipped changes: RenderPlan's summary line was cut
			fmt.Fprintf(w, "no change kaudit applies on %s; nothing changed\n", countOf(len(ps), "audited host", "audited hosts"))
		}
		return unauditedErr(r)
	}
	ok, err := confirm(c, c.Bool("yes"), fmt.Sprintf("apply %s on %s?", countOf(nChanges, "change", "changes"), countOf(nHosts, "host", "hosts")), "fix --apply")
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintln(w, "not confirmed: nothing changed")
		return nil
	}

	runID := remediate.NewRunID(time.Now())
	jpath := filepath.Join(jdir, runID+".json")
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(w, "run %s: applying %s on %s (journal %s)\n", runID, countOf(nChanges, "change", "changes"), countOf(nHosts, "host", "hosts"), jpath)
	j, err := apply.Apply(ctx, hosts, apply.Options{
		Runner: runner, RunID: runID, Timeout: opts.timeout, ConnectTimeout: opts.connectTimeout,
		Batch: c.Int("batch"), MaxFailures: c.Int("max-failures"), JournalPath: jpath,
		Log: func(line string) { fmt.Fprintf(c.App.ErrWriter, "kaudit: %s\n", line) },
	})
	if j == nil {
		return &exitError{code: ExitUsage, err: err}
	}
	printRun(w, j)
	fmt.Fprintf(w, "journal: %s\nundo: kaudit rollback %s --run %s\n", jpath, c.Args().First(), runID)
	if err != nil {
		fmt.Fprintf(c.App.ErrWriter, "kaudit: warning: %v\n", err)
	}
	failed := 0
	for _, hj := range j.Hosts {
		if hj.Status == remediate.StatusFailed || hj.Status == remediate.StatusRolledBack || (hj.Status == remediate.StatusUnchanged && hj.Error != "" && !strings.HasPrefix(hj.Error, "already as planned")) {
			failed++
		}
	}
	switch {
	case ctx.Err() != nil && c.Context.Err() == nil:
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("interrupted: hosts not started were left unchanged")}
	case failed > 0:
		return &exitError{code: ExitApplyFailed, err: fmt.Errorf("%d host(s) not changed as planned: see above and the journal", failed)}
	}
	return unauditedErr(r)
}

// printRun writes one block per host of a run: status, each change
// from → to, the error, and restart notes.
func printRun(w io.Writer, j *remediate.Journal) {
	var verified, restart int
	for _, hj := range j.Hosts {
		if len(hj.Changes) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s: %s\n", hj.Host, hj.Status)
		for _, c := range hj.Changes {
			from := c.From
			if from == "" {
				from = "(unset)"
			}
			fmt.Fprintf(w, "  %s %s: %s → %s", c.Kind, termsafe.Line(c.Target), termsafe.Line(from), termsafe.Line(c.To))
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
			fmt.Fprintf(w, "  backup %s (%s)\n", termsafe.Line(b.Path), termsafe.Line(state))
		}
		if hj.Error != "" {
			fmt.Fprintf(w, "  %s\n", termsafe.Block(hj.Error))
		}
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

func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
