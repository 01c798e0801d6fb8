package audit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
)

// stallRunner hangs on the hosts named hang-* until their deadline and
// answers every other host at once; when a hung host's deadline fires it
// notes how many other hosts had finished by then.
type stallRunner struct {
	done     atomic.Int64
	mu       sync.Mutex
	atExpiry []int64
}

func (r *stallRunner) Run(ctx context.Context, t transport.Target, _ []byte) (*transport.Output, error) {
	if strings.HasPrefix(t.Name, "hang-") {
		<-ctx.Done()
		r.mu.Lock()
		r.atExpiry = append(r.atExpiry, r.done.Load())
		r.mu.Unlock()
		return nil, &transport.Error{Kind: facts.KindTimeout, Msg: "no answer", Err: ctx.Err()}
	}
	defer r.done.Add(1)
	return nil, &transport.Error{Kind: facts.KindUnreachable, Msg: "refused", Err: errors.New("refused")}
}

// TestNoHeadOfLineBlocking: 1% of the hosts hang to their deadline, all of
// them at the head of the inventory, with a concurrency of 8. They hold 4
// of the 8 slots; the other 396 hosts must all finish through the rest
// before the first hung host's deadline fires, so the hung hosts add at
// most one deadline to the scan.
func TestNoHeadOfLineBlocking(t *testing.T) {
	const n, hung = 400, 4
	var hosts []inventory.Host
	for i := range n {
		name := fmt.Sprintf("ok-%03d", i)
		if i < hung {
			name = fmt.Sprintf("hang-%d", i)
		}
		hosts = append(hosts, inventory.Host{Name: name, Address: "192.0.2.1", Port: 22, User: "kaudit"})
	}
	r := &stallRunner{}
	res := audit.Scan(context.Background(), hosts, audit.Options{Concurrency: 8, Timeout: 3 * time.Second, Runner: r})
	if len(r.atExpiry) != hung {
		t.Fatalf("%d hung hosts expired, want %d", len(r.atExpiry), hung)
	}
	for i, d := range r.atExpiry {
		if d != n-hung {
			t.Errorf("hung host %d: %d of %d other hosts finished by its deadline, want all", i, d, n-hung)
		}
	}
	for i, h := range res[:hung] {
		if h.Err == nil || h.Err.Kind != facts.KindTimeout || !strings.Contains(h.Err.Msg, "did not finish within 3s") {
			t.Errorf("hung host %d: %+v, want a timeout naming the deadline", i, h.Err)
		}
	}
	if e := res[hung].Err; e == nil || e.Kind != facts.KindUnreachable {
		t.Errorf("healthy host: %+v, want the runner's refusal", e)
	}
}
