package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
)

func rollbackCommand() *cli.Command {
	return &cli.Command{
		Name:      "rollback",
		Usage:     "undo a fix --apply run on every host it changed, from the backups kept on the hosts",
		ArgsUsage: "INVENTORY",
		Description: "Reads the run's journal (--journal-dir/RUN-ID.json), then on each host of the run restores\n" +
			"every file byte for byte from /var/lib/kaudit/runs/RUN-ID/ (the copy's sha256 checked against\n" +
			"the journal first, the restored file's after), removes the files the run created, and writes\n" +
			"back the running sysctl values. Idempotent: what is already as before is left alone.\n" +
			"A server.properties restored this way takes effect at the broker's next restart.\n" +
			"Without the local journal (another machine, lost state), --from-hosts rebuilds it from the\n" +
			"manifest each host keeps beside its backups.\n" +
			"Asks for confirmation on a terminal unless --yes; refuses without --yes otherwise.\n\n" +
			"Exit: 0 restored, 2 usage (no such run, bad inventory), 4 some host could not be restored.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "run", Usage: "the `RUN-ID` printed by fix --apply"},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask for confirmation"},
			&cli.StringFlag{Name: "journal-dir", Usage: "where fix --apply wrote the journal (default ~/.local/state/kaudit/runs)"},
			&cli.BoolFlag{Name: "from-hosts", Usage: "the local journal is lost: rebuild it from the manifests the run left on the hosts (/var/lib/kaudit/runs/RUN-ID/manifest)"},
			&cli.StringFlag{Name: "limit", Aliases: []string{"l"}, Usage: "only hosts matching `PATTERN` (as for scan)"},
			&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Value: 8, Usage: "hosts restored at once"},
			&cli.DurationFlag{Name: "timeout", Value: 60 * 1e9, Usage: "per-host deadline"},
			&cli.DurationFlag{Name: "connect-timeout", Value: transport.DefaultConnectTimeout, Usage: "per-host TCP connect + SSH handshake deadline"},
			sshConfigFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("rollback needs exactly one INVENTORY argument")
			}
			id := c.String("run")
			if !remediate.ValidRunID(id) {
				return usageErr("rollback needs --run RUN-ID (as printed by fix --apply), got %q", id)
			}
			if c.Int("concurrency") < 1 || c.Duration("timeout") <= 0 || c.Duration("connect-timeout") <= 0 {
				return usageErr("--concurrency, --timeout and --connect-timeout must be positive")
			}
			dir, err := journalDir(c.String("journal-dir"))
			if err != nil {
				return err
			}
			jpath := filepath.Join(dir, id+".json")
			_, hosts, err := loadInventory(c)
			if err != nil {
				return err
			}
			runner, err := newSSH(c, hosts)
			if err != nil {
				return err
			}
			defer runner.Close()
			opts := apply.Options{
				Timeout: c.Duration("timeout"), ConnectTimeout: c.Duration("connect-timeout"),
				Batch: c.Int("concurrency"), JournalPath: jpath, Runner: runner,
			}
			j, err := remediate.LoadJournal(jpath)
			switch {
			case err == nil && c.Bool("from-hosts"):
				return usageErr("%s exists: roll back from it (drop --from-hosts)", jpath)
			case err == nil:
			case errors.Is(err, os.ErrNotExist) && c.Bool("from-hosts"):
				var unread []apply.RollbackResult
				j, unread, err = apply.JournalFromHosts(c.Context, hosts, id, opts)
				if err != nil {
					return &exitError{code: ExitUsage, err: err}
				}
				for _, u := range unread {
					fmt.Fprintf(c.App.ErrWriter, "kaudit: warning: %s: cannot read the run's manifest: %v\n", u.Host, u.Err)
				}
				if len(j.Hosts) == 0 && len(unread) > 0 {
					return &exitError{code: ExitApplyFailed, err: fmt.Errorf("no host could be read: nothing rolled back")}
				}
				if err := j.Save(jpath); err != nil {
					return &exitError{code: ExitUsage, err: err}
				}
				fmt.Fprintf(c.App.Writer, "journal of run %s rebuilt from %d host(s): %s\n", id, len(j.Hosts), jpath)
			case errors.Is(err, os.ErrNotExist):
				return usageErr("no journal for run %s in %s (set --journal-dir, or --from-hosts to rebuild it from the hosts)", id, dir)
			default:
				return &exitError{code: ExitUsage, err: err}
			}
			if j.RunID != id {
				return usageErr("%s holds run %s, not %s", jpath, j.RunID, id)
			}
			selected := map[string]bool{}
			for _, h := range hosts {
				selected[h.Name] = true
			}
			n := 0
			for _, hj := range j.Hosts {
				if (len(hj.Backups) > 0 || len(hj.Runtime) > 0) && selected[hj.Host] {
					n++
				}
			}
			if n == 0 {
				fmt.Fprintf(c.App.Writer, "run %s changed nothing on the selected hosts: nothing to roll back\n", id)
				return nil
			}
			ok, err := confirm(c, c.Bool("yes"), fmt.Sprintf("roll back run %s on %d hosts?", id, n), "rollback")
			if err != nil {
				return err
			}
			if !ok {
				fmt.Fprintln(c.App.Writer, "not confirmed: nothing changed")
				return nil
			}
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := apply.Rollback(ctx, hosts, j, opts)
			failed := 0
			for _, r := range res {
				if r.Err != nil {
					failed++
					fmt.Fprintf(c.App.Writer, "%s: rollback FAILED: %v\n", r.Host, r.Err)
					continue
				}
				fmt.Fprintf(c.App.Writer, "%s: rolled back (%s)\n", r.Host, r.Detail)
			}
			if err != nil {
				fmt.Fprintf(c.App.ErrWriter, "kaudit: warning: %v\n", err)
			}
			fmt.Fprintf(c.App.Writer, "run %s: %d host(s) rolled back, %d failed; journal %s\n", id, len(res)-failed, failed, jpath)
			if failed > 0 {
				return &exitError{code: ExitApplyFailed, err: fmt.Errorf("%d host(s) could not be rolled back: re-run when they are reachable", failed)}
			}
			return nil
		},
	}
}
