package pipeline

import (
	"context"
	"time"

	"github.com/kaudit/kaudit/audit/probe"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
)

// ApplyConfig is what applyPlan needs besides the plan.
type ApplyConfig struct {
	Runner         transport.Runner // nil: transport.NewSSH()
	RunID          string           // remediate.NewRunID
	JournalPath    string           // the run's local journal (written as the run goes)
	Timeout        time.Duration
	ConnectTimeout time.Duration
	Batch          int // hosts changed at once after the canary
	MaxFailures    int // start no batch once more hosts than this failed
	Log            func(line string)
	Now            func() time.Time // the journal's clock (nil: time.Now)
	Probes         *probe.Records   // the probe verdicts the verify's re-gather uses (nil: none)
	// Rollout orders and gates the hosts (fixRollout); nil: canary and
	// batches of Batch.
	Rollout *apply.Rollout
	// Resume is the journal of the run to continue (--resume), nil none.
	Resume *remediate.Journal
	// Restart: --restart's options (Rollout.restartOptions), nil: kaudit
	// restarts no broker.
	Restart *apply.RestartOptions
}

// applyPlan carries out fp on its hosts and returns the run's journal. A nil
// journal means nothing was started (the error says why); a journal with
// an error is a run that went wrong part way (the journal says where).
func applyPlan(ctx context.Context, fp *FixPlan, cfg ApplyConfig) (*remediate.Journal, error) {
	return apply.Apply(ctx, fp.Hosts, apply.Options{
		Runner: cfg.Runner, RunID: cfg.RunID, Timeout: cfg.Timeout, ConnectTimeout: cfg.ConnectTimeout,
		Batch: cfg.Batch, MaxFailures: cfg.MaxFailures, JournalPath: cfg.JournalPath, Log: cfg.Log, Now: cfg.Now,
		Probes:  cfg.Probes,
		Rollout: cfg.Rollout, Resume: cfg.Resume, Restart: cfg.Restart,
	})
}

// FailedHosts counts the hosts of a run that were not changed as planned.
func FailedHosts(j *remediate.Journal) int {
	n := 0
	for _, hj := range j.Hosts {
		if hj.Failed() {
			n++
		}
	}
	return n
}
