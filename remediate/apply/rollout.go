package apply

import (
	"context"
	"errors"

	"github.com/kaudit/kaudit/internal/fanout"
)

// Rollout orders a run (Apply, Rollback) the way a Kafka operator
// rolls a cluster: the hosts in Waves, one wave after another (the hosts
// of one wave at once), and Gate between them. It replaces the canary and
// batches; the caller (pipeline's rollout) decides the order: never two
// brokers of one cluster in a wave.
type Rollout struct {
	// Waves are host names; a host to change that no wave names goes,
	// alone, after the last wave.
	Waves [][]string
	// Gate runs before each wave (done: the wave just finished, nil
	// before the first; next: the wave about to start) and once after
	// the last (next nil). An error stops the run there: no further host
	// is started, the journal records it (remediate.Stop) and those
	// hosts are left planned for a resume.
	Gate func(ctx context.Context, done, next []string) error
}

// GateError is a rollout stopped by its gate: the run is not done.
type GateError struct{ Err error }

func (e *GateError) Error() string { return e.Err.Error() }
func (e *GateError) Unwrap() error { return e.Err }

// waveOutcome is what runWaves did.
type waveOutcome struct {
	fanout.Outcome
	gate error // the gate's refusal, nil when none stopped the run
}

// runWaves runs fn(i) for the names of todo in ro's waves, gated;
// stopAfter as fanout's StopAfter, across the waves.
// A watcher (nil: none) watches the restarted brokers of a wave once
// the gate after it found the cluster healthy, before the next wave's
// gate.
func runWaves(ctx context.Context, todo []string, ro *Rollout, stopAfter int, fn func(i int) bool, wt *watcher) waveOutcome {
	waves := ro.order(todo)
	var out waveOutcome
	var done []string
	for w, wave := range waves {
		if ctx.Err() != nil || (stopAfter > 0 && out.Failed >= stopAfter) {
			out.Stopped = ctx.Err() == nil
			out.NotStarted = append(out.NotStarted, rest(waves[w:])...)
			return out
		}
		if err := ro.between(ctx, done, names(todo, wave), wt); err != nil {
			out.gate = err
			out.NotStarted = append(out.NotStarted, rest(waves[w:])...)
			return out
		}
		o := fanout.Run(ctx, len(wave), fanout.Options{}, func(k int) bool { return fn(wave[k]) })
		out.Failed += o.Failed
		for _, k := range o.NotStarted {
			out.NotStarted = append(out.NotStarted, wave[k])
		}
		done = names(todo, wave)
	}
	if done != nil && ctx.Err() == nil && (stopAfter == 0 || out.Failed < stopAfter) {
		out.gate = ro.between(ctx, done, nil, wt)
	}
	return out
}

// between is the gate between two waves; when brokers of done were
// restarted: the gate after done (the cluster healthy again), their
// watch, then the gate before next.
func (ro *Rollout) between(ctx context.Context, done, next []string, wt *watcher) error {
	if wt == nil || !wt.pending(done) {
		return ro.gate(ctx, done, next)
	}
	if err := ro.gate(ctx, done, nil); err != nil {
		return err
	}
	if err := wt.watch(ctx, done); err != nil {
		return &GateError{Err: err}
	}
	if next == nil {
		return nil
	}
	return ro.gate(ctx, nil, next)
}

func (ro *Rollout) gate(ctx context.Context, done, next []string) error {
	if ro.Gate == nil {
		return nil
	}
	if err := ro.Gate(ctx, done, next); err != nil {
		var ge *GateError
		if errors.As(err, &ge) {
			return ge
		}
		return &GateError{Err: err}
	}
	return nil
}

// order turns ro.Waves into indexes of todo: only the hosts to change,
// each once; one not in any wave goes alone at the end.
func (ro *Rollout) order(todo []string) [][]int {
	at := map[string]int{}
	for i, n := range todo {
		at[n] = i
	}
	placed := map[int]bool{}
	var waves [][]int
	for _, w := range ro.Waves {
		var wave []int
		for _, n := range w {
			if i, ok := at[n]; ok && !placed[i] {
				placed[i] = true
				wave = append(wave, i)
			}
		}
		if len(wave) > 0 {
			waves = append(waves, wave)
		}
	}
	for i := range todo {
		if !placed[i] {
			waves = append(waves, []int{i})
		}
	}
	return waves
}

func rest(waves [][]int) []int {
	var out []int
	for _, w := range waves {
		out = append(out, w...)
	}
	return out
}

func names(todo []string, idx []int) []string {
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = todo[i]
	}
	return out
}
