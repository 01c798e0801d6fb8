package apply

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/remediate"
)

// gateLog records a rollout's gate calls and refuses the one whose next
// wave starts with refuseBefore.
type gateLog struct {
	mu           sync.Mutex
	calls        []string
	refuseBefore string
}

func (g *gateLog) gate(_ context.Context, done, next []string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, fmt.Sprintf("%v>%v", done, next))
	if len(next) > 0 && next[0] == g.refuseBefore {
		return errors.New("orders-0 under-replicated")
	}
	return nil
}

// TestRolloutWaves: the hosts change wave by wave, in the rollout's
// order (not the inventory's, no canary), the gate called before the
// first, between each two and after the last.
func TestRolloutWaves(t *testing.T) {
	s := newSandbox(t, "a1", "a2", "b1")
	g := &gateLog{}
	ro := &Rollout{Waves: [][]string{{"a2", "b1"}, {"a1"}}, Gate: g.gate}
	j, err := Apply(context.Background(), sbHosts("a1", "a2", "b1"), Options{Runner: s, RunID: "20260101T000000Z-0000000a", Rollout: ro})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a1", "a2", "b1"} {
		if st := j.Host(n).Status; st != remediate.StatusVerified {
			t.Errorf("%s: %s", n, st)
		}
	}
	if want := []string{"[]>[a2 b1]", "[a2 b1]>[a1]", "[a1]>[]"}; !reflect.DeepEqual(g.calls, want) {
		t.Errorf("gate calls %q, want %q", g.calls, want)
	}
	if s.applied[len(s.applied)-1] != "a1" {
		t.Errorf("apply order %v: a1 is the last wave", s.applied)
	}
}

// TestRolloutGateStopsAndResumes: a gate that refuses stops the run
// (nothing further changes, the journal says where and why, the error is
// a GateError); a resume of the run changes the rest under the same run
// id and leaves the hosts changed before the stop alone.
func TestRolloutGateStopsAndResumes(t *testing.T) {
	s := newSandbox(t, "a1", "a2", "a3")
	jpath := filepath.Join(t.TempDir(), "run.json")
	g := &gateLog{refuseBefore: "a2"}
	waves := [][]string{{"a1"}, {"a2"}, {"a3"}}
	const id = "20260101T000000Z-0000000b"
	j, err := Apply(context.Background(), sbHosts("a1", "a2", "a3"), Options{Runner: s, RunID: id, JournalPath: jpath, Rollout: &Rollout{Waves: waves, Gate: g.gate}})
	var ge *GateError
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), "orders-0 under-replicated") {
		t.Fatalf("Apply error %v, want the gate's", err)
	}
	if j.Host("a1").Status != remediate.StatusVerified || j.Host("a2").Status != remediate.StatusPlanned || j.Host("a3").Status != remediate.StatusPlanned {
		t.Errorf("statuses a1 %s a2 %s a3 %s", j.Host("a1").Status, j.Host("a2").Status, j.Host("a3").Status)
	}
	if !reflect.DeepEqual(s.applied, []string{"a1"}) {
		t.Errorf("apply scripts ran on %v after the gate refused", s.applied)
	}
	saved, err := remediate.LoadJournal(jpath)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Stopped == nil || !reflect.DeepEqual(saved.Stopped.Next, []string{"a2", "a3"}) || !strings.Contains(saved.Stopped.Reason, "under-replicated") {
		t.Fatalf("journal's stop %+v", saved.Stopped)
	}

	g.refuseBefore = ""
	j, err = Apply(context.Background(), sbHosts("a1", "a2", "a3"), Options{Runner: s, JournalPath: jpath, Resume: saved, Rollout: &Rollout{Waves: waves, Gate: g.gate}})
	if err != nil {
		t.Fatal(err)
	}
	if j.RunID != id || j.Stopped != nil || len(j.Resumed) != 1 {
		t.Errorf("resumed journal: run %s, stopped %+v, resumed %v", j.RunID, j.Stopped, j.Resumed)
	}
	for _, n := range []string{"a1", "a2", "a3"} {
		if st := j.Host(n).Status; st != remediate.StatusVerified {
			t.Errorf("%s: %s", n, st)
		}
	}
	if !reflect.DeepEqual(s.applied, []string{"a1", "a2", "a3"}) {
		t.Errorf("apply scripts ran on %v: a1 was changed again", s.applied)
	}
	if len(j.Host("a1").Backups) == 0 {
		t.Error("the resume lost a1's backups from the journal")
	}
}

// TestRolloutRollback: a gated rollback restores one wave at a time; a
// gate that refuses leaves the rest as they are, named.
func TestRolloutRollback(t *testing.T) {
	s := newSandbox(t, "a1", "a2")
	j, err := Apply(context.Background(), sbHosts("a1", "a2"), Options{Runner: s, RunID: "20260101T000000Z-0000000c"})
	if err != nil {
		t.Fatal(err)
	}
	g := &gateLog{refuseBefore: "a1"}
	inv := []inventory.Host{sbHosts("a1")[0].Inv, sbHosts("a2")[0].Inv}
	res, err := Rollback(context.Background(), inv, j, Options{Runner: s, Rollout: &Rollout{Waves: [][]string{{"a2"}, {"a1"}}, Gate: g.gate}})
	var ge *GateError
	if !errors.As(err, &ge) {
		t.Fatalf("rollback error %v, want the gate's", err)
	}
	byHost := map[string]RollbackResult{}
	for _, r := range res {
		byHost[r.Host] = r
	}
	if byHost["a2"].Err != nil || byHost["a2"].Detail != "5 restored, 2 removed" {
		t.Errorf("a2: %+v", byHost["a2"])
	}
	if e := byHost["a1"].Err; e == nil || !strings.Contains(e.Error(), "not rolled back: orders-0 under-replicated") {
		t.Errorf("a1: %+v", byHost["a1"])
	}
	if j.Host("a1").Status != remediate.StatusVerified {
		t.Errorf("a1 is %s, the gate refused its rollback", j.Host("a1").Status)
	}
}
