package fanout

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder records which items ran, how many ran at once, and the order
// in which they started and finished.
type recorder struct {
	mu        sync.Mutex
	events    []string // "start 3", "end 3"
	ran       map[int]bool
	inFlight  int
	maxFlight int
}

func (r *recorder) fn(fail func(int) bool, hold time.Duration) func(int) bool {
	return func(i int) bool {
		r.mu.Lock()
		r.inFlight++
		r.maxFlight = max(r.maxFlight, r.inFlight)
		r.events = append(r.events, "start "+itoa(i))
		if r.ran == nil {
			r.ran = map[int]bool{}
		}
		r.ran[i] = true
		r.mu.Unlock()
		time.Sleep(hold)
		r.mu.Lock()
		r.inFlight--
		r.events = append(r.events, "end "+itoa(i))
		r.mu.Unlock()
		return fail == nil || !fail(i)
	}
}

func itoa(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

func TestLimitNeverExceeded(t *testing.T) {
	for _, limit := range []int{1, 3, 8} {
		var r recorder
		out := Run(context.Background(), 20, Options{Limit: limit}, r.fn(nil, 2*time.Millisecond))
		if r.maxFlight > limit || len(r.ran) != 20 || out.Failed != 0 || out.NotStarted != nil || out.Stopped {
			t.Errorf("limit %d: max in flight %d, ran %d, outcome %+v", limit, r.maxFlight, len(r.ran), out)
		}
	}
}

func TestCanaryRunsAloneFirst(t *testing.T) {
	var r recorder
	Run(context.Background(), 6, Options{Canary: true, Batch: 3}, r.fn(nil, 5*time.Millisecond))
	if len(r.events) < 2 || r.events[0] != "start 00" || r.events[1] != "end 00" {
		t.Fatalf("the canary did not finish before anything else started: %v", r.events)
	}
	// Then batches of 3: 1-3 all end before 4-5 start.
	pos := map[string]int{}
	for i, e := range r.events {
		pos[e] = i
	}
	for _, a := range []string{"end 01", "end 02", "end 03"} {
		for _, b := range []string{"start 04", "start 05"} {
			if pos[a] > pos[b] {
				t.Errorf("%s after %s: batches overlap (%v)", a, b, r.events)
			}
		}
	}
	if r.maxFlight != 3 {
		t.Errorf("a batch of 3 ran %d at once", r.maxFlight)
	}
}

func TestStopAfterFailures(t *testing.T) {
	// Batches: the canary fails, StopAfter 1: nothing else starts.
	var r recorder
	out := Run(context.Background(), 5, Options{Canary: true, Batch: 2, StopAfter: 1}, r.fn(func(i int) bool { return i == 0 }, 0))
	if len(r.ran) != 1 || out.Failed != 1 || !out.Stopped || !reflect.DeepEqual(out.NotStarted, []int{1, 2, 3, 4}) {
		t.Errorf("failed canary: ran %v, outcome %+v", r.ran, out)
	}
	// Batches: the count is taken after a whole batch (2 of 1-2 fail:
	// both ran, then 3-4 are left out with StopAfter 2).
	r = recorder{}
	out = Run(context.Background(), 5, Options{Canary: true, Batch: 2, StopAfter: 2}, r.fn(func(i int) bool { return i == 1 || i == 2 }, 0))
	if len(r.ran) != 3 || out.Failed != 2 || !out.Stopped || !reflect.DeepEqual(out.NotStarted, []int{3, 4}) {
		t.Errorf("batch failures: ran %v, outcome %+v", r.ran, out)
	}
	// Streaming with Limit 1: stops right after the second failure.
	r = recorder{}
	out = Run(context.Background(), 6, Options{Limit: 1, StopAfter: 2}, r.fn(func(i int) bool { return i == 1 || i == 3 }, 0))
	if len(r.ran) != 4 || out.Failed != 2 || !out.Stopped || !reflect.DeepEqual(out.NotStarted, []int{4, 5}) {
		t.Errorf("streaming: ran %v, outcome %+v", r.ran, out)
	}
	// StopAfter 0 never stops.
	r = recorder{}
	out = Run(context.Background(), 4, Options{Limit: 2}, r.fn(func(int) bool { return true }, 0))
	if len(r.ran) != 4 || out.Failed != 4 || out.Stopped || out.NotStarted != nil {
		t.Errorf("no StopAfter: ran %v, outcome %+v", r.ran, out)
	}
}

func TestCancellation(t *testing.T) {
	// Cancelled before the start: nothing runs, not even the canary.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var r recorder
	out := Run(ctx, 3, Options{Canary: true, Batch: 1}, r.fn(nil, 0))
	if len(r.ran) != 0 || out.Stopped || !reflect.DeepEqual(out.NotStarted, []int{0, 1, 2}) {
		t.Errorf("cancelled: ran %v, outcome %+v", r.ran, out)
	}
	// Cancelled while item 1 runs under Limit 2: the items waiting for a
	// slot are not started, and Run returns once those in flight end.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var started atomic.Int32
	out = Run(ctx, 10, Options{Limit: 2}, func(i int) bool {
		started.Add(1)
		if i == 1 {
			cancel()
		}
		<-ctx.Done()
		return false
	})
	n := int(started.Load())
	if n != 2 || out.Failed != 2 || out.Stopped || len(out.NotStarted) != 8 || out.NotStarted[0] != 2 {
		t.Errorf("cancelled in flight: %d started, outcome %+v", n, out)
	}
	// Batches: a cancel during a batch lets it finish and starts no other.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	r = recorder{}
	out = Run(ctx, 6, Options{Canary: true, Batch: 2}, func(i int) bool {
		if i == 1 {
			cancel()
		}
		return r.fn(nil, 0)(i)
	})
	if len(r.ran) != 3 || !reflect.DeepEqual(out.NotStarted, []int{3, 4, 5}) {
		t.Errorf("cancelled in a batch: ran %v, outcome %+v", r.ran, out)
	}
}
