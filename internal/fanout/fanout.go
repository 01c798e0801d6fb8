package fanout

import (
	"context"
	"sync"
	"time"
)

// Options bound a fan-out. The zero value runs every item at once.
type Options struct {
	// Limit is the most items in flight at once (< 1: no limit beyond
	// Batch).
	Limit int
	// Canary runs the first item alone: nothing else starts before it
	// finished.
	Canary bool
	// Batch > 0 starts the items (after the canary) in batches of Batch;
	// a batch starts when the previous one has finished.
	Batch int
	// StopAfter > 0 starts nothing more once that many items failed. With
	// batches (and the canary) the count is taken when a batch finished;
	// otherwise before each item starts. 0: never stop.
	StopAfter int
}

// Outcome is what a fan-out did.
type Outcome struct {
	Failed     int   // items whose function failed
	NotStarted []int // items never started, in order
	// Stopped is true when items were left out because StopAfter items
	// failed; false when only the context left them out (or none were).
	Stopped bool
}

// Run calls fn(i) for every i in [0, n) within opt's bounds and waits for
// them. fn reports whether item i succeeded. When ctx ends, items not yet
// started are not started (those in flight are fn's to stop, through
// their own context).
func Run(ctx context.Context, n int, opt Options, fn func(i int) bool) Outcome {
	r := &runner{ctx: ctx, opt: opt, fn: fn}
	if opt.Limit > 0 {
		r.sem = make(chan struct{}, opt.Limit)
	}
	next := 0
	if opt.Canary && n > 0 && !r.halted() {
		next = r.group(0, 1, false)
	}
	for next < n && !r.halted() {
		if opt.Batch > 0 {
			next = r.group(next, min(next+opt.Batch, n), false)
		} else {
			next = r.group(next, n, true)
		}
	}
	for i := next; i < n; i++ {
		r.notStarted = append(r.notStarted, i)
	}
	return Outcome{Failed: r.failed, NotStarted: r.notStarted, Stopped: r.stopped}
}

type runner struct {
	ctx     context.Context
	opt     Options
	fn      func(int) bool
	sem     chan struct{}
	mu      sync.Mutex
	failed  int
	stopped bool
	// notStarted collects the items left out, in order: a group stops
	// early only when nothing more may start.
	notStarted []int
}

// halted reports whether nothing more may start, noting why.
func (r *runner) halted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opt.StopAfter > 0 && r.failed >= r.opt.StopAfter {
		r.stopped = true
		return true
	}
	return r.ctx.Err() != nil
}

// group runs items [from, to) and waits for them; it returns to. A
// streaming group checks before each item whether it may still start
// (StopAfter, ctx); a batch starts all its items. Either waits for a slot
// under Limit, unless ctx ends. Items left out go to notStarted.
func (r *runner) group(from, to int, stream bool) int {
	var wg sync.WaitGroup
	for i := from; i < to; i++ {
		if !r.mayStart(stream) {
			for j := i; j < to; j++ {
				r.notStarted = append(r.notStarted, j)
			}
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.release()
			if !r.fn(i) {
				r.mu.Lock()
				r.failed++
				r.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return to
}

// mayStart takes a slot for the next item and reports whether it may
// start: a streaming group checks StopAfter and ctx once it has the slot
// (an item that just finished may have failed).
func (r *runner) mayStart(stream bool) bool {
	if !r.acquire() {
		return false
	}
	if stream && r.halted() {
		r.release()
		return false
	}
	return true
}

// acquire takes a slot under Limit, false when ctx ended first.
func (r *runner) acquire() bool {
	if r.sem == nil {
		return true
	}
	select {
	case r.sem <- struct{}{}:
		if r.ctx.Err() != nil {
			<-r.sem
			return false
		}
		return true
	case <-r.ctx.Done():
		return false
	}
}

func (r *runner) release() {
	if r.sem != nil {
		<-r.sem
	}
}

// Sleep waits d, or until ctx ends (its error): the pause of a rollout
// between two steps, a health gate's interval, a restart's watch.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
