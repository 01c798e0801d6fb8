package main

import (
	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/pipeline"
)

// rolloutOpts are the flags of a rollout (fix --apply, rollback), bound to
// pipeline.RolloutConfig but for --batch-by.
type rolloutOpts struct{ batchBy string }

// flags are the rollout's flags; batch, when set, binds --batch (rollback;
// fix binds its own, the canary's batch).
func (o *rolloutOpts) flags(r *pipeline.RolloutConfig, batch bool) []cli.Flag {
	fs := []cli.Flag{
		&cli.StringFlag{Name: "batch-by", Usage: "with --batch-by rack: change one whole rack of a cluster at a time (racks from the cluster's metadata (--bootstrap) or the inventory's rack), never two", Destination: &o.batchBy},
		&cli.DurationFlag{Name: "pause", Usage: "wait `D` between two brokers of a cluster whose health kaudit cannot read (no --bootstrap)", Destination: &r.Pause},
		&cli.IntFlag{Name: "health-checks", Value: pipeline.DefaultHealthChecks, Usage: "with --bootstrap: consecutive healthy reads of the cluster (0 under-replicated, 0 offline, every broker registered) before and after each broker", Destination: &r.Health.Checks},
		&cli.DurationFlag{Name: "health-interval", Value: pipeline.DefaultHealthInterval, Usage: "with --bootstrap: time between two health reads", Destination: &r.Health.Interval},
		&cli.DurationFlag{Name: "health-timeout", Value: pipeline.DefaultHealthTimeout, Usage: "with --bootstrap: the longest one wait for a healthy cluster lasts; then the rollout stops (exit 4)", Destination: &r.Health.Timeout},
		&cli.BoolFlag{Name: "restart", Usage: "with --bootstrap: restart each broker whose changes (fix --apply: verified; rollback: restored) need it through its systemd unit, in its step of the rollout (gated), check the values are in force and watch its SYN-cookie counters", Destination: &r.Restart},
		&cli.DurationFlag{Name: "restart-timeout", Value: pipeline.DefaultRestartTimeout, Usage: "with --restart: the longest a broker's restart (its controlled shutdown and start until it listens) may take", Destination: &r.RestartTimeout},
		&cli.DurationFlag{Name: "watch", Value: pipeline.DefaultWatch, Usage: "with --restart: watch a restarted broker's SYN-cookie and listen-queue counters this long (and until the cluster is healthy again)", Destination: &r.Watch},
	}
	if batch {
		fs = append(fs, &cli.IntFlag{Name: "batch", Value: 1, Usage: "clusters rolled back at once (never two brokers of one cluster)", Destination: &r.Batch})
	}
	return fs
}

// check sets what --batch-by asked for.
func (o rolloutOpts) check(r *pipeline.RolloutConfig) (err error) {
	r.ByRack, err = pipeline.ParseBatchBy(o.batchBy)
	return err
}
