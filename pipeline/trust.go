package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/audit/trust"
	"github.com/kaudit/kaudit/internal/located"
)

// TrustJob is how kaudit trust fetches and records keys.
type TrustJob struct {
	Options trust.Options // as the person asked: at least one host at once, a positive connect timeout
	Yes     bool          // record without asking
}

// Trust is kaudit trust: fetch the key of every host of f and list them, ask and
// record the new ones in known_hosts, then an error line per changed key.
// Ctrl-C stops the fetch (nothing is written) and, at the question, ends
// kaudit at once. Its verdicts: Interrupted, Findings (new keys not
// confirmed), Unaudited (keys left untrusted).
func Trust(ctx context.Context, c Console, f Fleet, j TrustJob) error {
	if j.Options.Concurrency < 1 || j.Options.ConnectTimeout <= 0 {
		return errors.New("--concurrency must be at least 1 and --connect-timeout positive")
	}
	_, hosts, err := f.load(c)
	if err != nil {
		return err
	}
	ctx, stop := interruptible(ctx)
	defer stop()
	runner, err := f.connect(c, hosts, &j.Options.Concurrency)
	if err != nil {
		return err
	}
	defer runner.Close()
	entries := trust.Fetch(ctx, hosts, runner, j.Options)
	trust.Write(c.Stdout, entries)
	if ctx.Err() != nil {
		return fail(Interrupted, "interrupted: nothing was written")
	}
	stop() // nothing is written before the answer
	return recordKeys(c, entries, runner.HostKeys, j.Yes)
}

// recordKeys asks and records the new keys of entries, then tells what is
// not trusted.
func recordKeys(c Console, entries []trust.Entry, hk *transport.HostKeys, yes bool) error {
	if n := trust.Pending(entries); n > 0 {
		ok, err := c.Ask(yes, fmt.Sprintf("\nRecord these %d new host keys in known_hosts?", n),
			located.Hint(fmt.Errorf("%d new host keys and no terminal to confirm on: nothing was written", n), "check the fingerprints above and run again with --yes"))
		if err != nil {
			return err
		}
		if !ok {
			return fail(Findings, "nothing was written (%d new keys not confirmed)", n)
		}
		entries = trust.Record(entries, hk)
		fmt.Fprintf(c.Stdout, "\nrecorded %d of %d new keys\n", trust.Count(entries, trust.Recorded), n)
	}
	for _, msg := range trust.ChangedWarnings(entries) {
		fmt.Fprintf(c.Stderr, "kaudit: error: %s\n", msg)
	}
	if bad := trust.Untrusted(entries); bad > 0 {
		return fail(Unaudited, "%d of %d host keys are not trusted (see above)", bad, len(entries))
	}
	return nil
}
