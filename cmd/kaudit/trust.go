package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/audit/trust"
	"github.com/kaudit/kaudit/internal/ui"
)

const trustHelp = `Fetches the host key of every host of INVENTORY (and of its proxy_jump
bastions, first), the way a scan connects but stopping before authentication,
prints each key's SHA256 fingerprint and what known_hosts says about it, and
after one confirmation appends the new keys to each host's first known_hosts
file (locked appends, safe beside running scans). Compare the fingerprints
with the hosts' own (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on the
console) before you confirm. A key that differs from known_hosts is reported
as CHANGED and never written; remove the old line yourself (ssh-keygen -R)
once you know why it changed.

EXIT STATUS:
   0    every host's key is trusted: already known, CA-signed, or recorded now
   1    new keys were found and the answer was no: nothing was written
   2    usage or inventory error, or new keys and no terminal to confirm on
        without --yes (nothing was written)
   3    some host's key could not be fetched, or is CHANGED, REVOKED or an invalid certificate
   130  interrupted; nothing was written`

// trustOptions are the flags of kaudit trust.
type trustOptions struct {
	limit          string
	yes            bool
	concurrency    int
	connectTimeout time.Duration
}

func trustCommand(e env) *cli.Command {
	o := &trustOptions{}
	return &cli.Command{
		Name:        "trust",
		Usage:       "fetch, show and record the host keys of an inventory's hosts (known_hosts)",
		ArgsUsage:   "INVENTORY",
		Description: trustHelp,
		Flags: flags(limitFlag(&o.limit, "only hosts matching `PATTERN` (as for scan)"), []cli.Flag{
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "record new keys without asking (automation: check the fingerprints another way)", Destination: &o.yes},
			&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Value: 20, Usage: "hosts contacted at once", Destination: &o.concurrency},
			&cli.DurationFlag{Name: "connect-timeout", Value: transport.DefaultConnectTimeout, Usage: "per-host TCP connect + SSH handshake deadline", Destination: &o.connectTimeout},
		}),
		Action: func(c *cli.Context) error { return runTrust(c.Context, *o, c.Args().Slice(), e) },
	}
}

func runTrust(ctx context.Context, o trustOptions, args []string, e env) error {
	if len(args) != 1 {
		return usageErr("trust needs exactly one INVENTORY argument")
	}
	if o.concurrency < 1 || o.connectTimeout <= 0 {
		return usageErr("--concurrency must be at least 1 and --connect-timeout positive")
	}
	_, hosts, err := loadInventory(args[0], o.limit)
	if err != nil {
		return err
	}
	ctx, stop := interruptible(ctx)
	defer stop()
	runner := newRunner(e)
	entries := trust.Fetch(ctx, hosts, runner, trust.Options{Concurrency: o.concurrency, ConnectTimeout: o.connectTimeout})
	printTrust(e.stdout, entries)
	if ctx.Err() != nil {
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("interrupted: nothing was written")}
	}
	stop() // Ctrl-C at the question ends kaudit at once: nothing is written before the answer
	if n := trust.Pending(entries); n > 0 {
		ok, err := confirmTrust(e, o.yes, n)
		if err != nil {
			return err
		}
		if !ok {
			return &exitError{code: ExitFindings, err: fmt.Errorf("nothing was written (%d new keys not confirmed)", n)}
		}
		entries = trust.Record(entries, runner.HostKeys)
		fmt.Fprintf(e.stdout, "\nrecorded %d of %d new keys\n", count(entries, trust.Recorded), n)
	}
	return trustProblems(e.stderr, entries)
}

// confirmTrust asks once, on the terminal, before anything is written.
func confirmTrust(e env, yes bool, n int) (bool, error) {
	if yes {
		return true, nil
	}
	ok, asked := ui.Ask(e.stdin, e.stderr, fmt.Sprintf("\nRecord these %d new host keys in known_hosts?", n))
	if !asked {
		return false, usageErr("%d new host keys and no terminal to confirm on: nothing was written; check the fingerprints above and run again with --yes", n)
	}
	return ok, nil
}

// printTrust writes one line per host: name, known_hosts name, key type and
// fingerprint, status. Host-provided text is quoted when not plain.
func printTrust(w io.Writer, entries []trust.Entry) {
	fmt.Fprintf(w, "%-28s %-30s %-22s %-52s %s\n", "HOST", "KNOWN_HOSTS NAME", "KEY TYPE", "FINGERPRINT", "STATUS")
	for _, e := range entries {
		host := e.Host
		if e.Bastion {
			host = "(bastion) " + host
		}
		typ := e.KeyType()
		status := string(e.Status)
		switch {
		case e.Status == trust.Changed || e.Status == trust.Revoked:
			status += "  " + strings.Join(e.Where, ", ")
		case e.Err != nil:
			status += ": " + e.Err.Msg
		}
		fmt.Fprintf(w, "%-28s %-30s %-22s %-52s %s\n", host, e.Name, typ, e.Fingerprint(), plain(status))
	}
}

// trustProblems reports changed keys loudly and decides the exit code.
func trustProblems(stderr io.Writer, entries []trust.Entry) error {
	bad := 0
	for _, e := range entries {
		switch e.Status {
		case trust.Changed:
			bad++
			fmt.Fprintf(stderr, "kaudit: error: HOST KEY CHANGED for %s (%s): it now offers %s %s, known_hosts has another key at %s; NOT overwritten: find out why (rebuilt host, or someone in the middle), then remove the old line (ssh-keygen -R %s) and run kaudit trust again\n",
				e.Host, e.Name, e.KeyType(), e.Fingerprint(), strings.Join(e.Where, ", "), transport.ShellName(e.Name))
		case trust.Revoked, trust.BadCert, trust.Failed:
			bad++
		}
	}
	if bad > 0 {
		return &exitError{code: ExitUnaudited, err: fmt.Errorf("%d of %d host keys are not trusted (see above)", bad, len(entries))}
	}
	return nil
}

func count(entries []trust.Entry, s trust.Status) int {
	n := 0
	for _, e := range entries {
		if e.Status == s {
			n++
		}
	}
	return n
}

// plain makes control characters in host-provided text visible.
func plain(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }) < 0 {
		return s
	}
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}
