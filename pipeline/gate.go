package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/kaudit/kaudit/discover"
	"github.com/kaudit/kaudit/internal/fanout"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/report"
)

// healthGate is a rollout's gate (apply.Rollout.Gate): before a gated
// cluster's first step and after each, it waits until Health.Checks
// consecutive reads Health.Interval apart find the cluster healthy
// (discover.Judge), for at most Health.Timeout; before a step it refuses
// a broker that holds a partition at min.insync.replicas. A read that
// fails counts unhealthy. Between two steps of a cluster without a gate
// it pauses.
type healthGate struct {
	ro      *Rollout
	cfg     RolloutConfig
	cluster string  // the gated cluster's id
	expect  []int32 // its brokers, as the scan found them
	read    func(context.Context) (*discover.Health, error)
	started map[int]bool     // units whose first step has begun
	now     func() time.Time // the deadline's clock
	status  *statusLine
}

// newHealthGate is the gate of ro over the cluster rc (nil: no gate,
// pauses only), read through src.
func newHealthGate(c Console, ro *Rollout, rc *report.Cluster, src *ClusterSource) *healthGate {
	g := &healthGate{ro: ro, cfg: ro.cfg, started: map[int]bool{}, now: c.Now, status: newStatusLine(c.Stderr)}
	if rc != nil && src != nil {
		g.cluster = rc.ID
		for _, b := range rc.Brokers {
			g.expect = append(g.expect, b.NodeID)
		}
		g.read = func(ctx context.Context) (*discover.Health, error) {
			o, err := src.options()
			if err != nil {
				return nil, err
			}
			return discover.ReadHealth(ctx, o)
		}
	}
	return g
}

// Gate is apply.Rollout.Gate: done is the wave just finished, next the
// one about to start.
func (g *healthGate) Gate(ctx context.Context, done, next []string) error {
	waited := map[int]*discover.Health{}
	for _, i := range g.unitsOf(done) {
		if g.ro.Units[i].Gated {
			h, err := g.waitHealthy(ctx, "after "+strings.Join(g.inUnit(i, done), ", "), nil)
			if err != nil {
				return err
			}
			waited[i] = h
		}
	}
	pause := false
	for _, i := range g.unitsOf(next) {
		u := g.ro.Units[i]
		hosts := g.inUnit(i, next)
		switch {
		case u.Gated:
			touching, unknown := g.nodes(i, hosts)
			if err := g.beforeStep(ctx, waited[i], hosts, touching, unknown); err != nil {
				return err
			}
		case g.started[i]:
			pause = true
		}
		g.started[i] = true
	}
	if pause && g.cfg.Pause > 0 {
		g.status.event(fmt.Sprintf("pausing %s (--pause) before %s", g.cfg.Pause, strings.Join(next, ", ")))
		if err := fanout.Sleep(ctx, g.cfg.Pause); err != nil {
			return g.interrupted("pausing before " + strings.Join(next, ", "))
		}
	}
	return nil
}

// beforeStep waits for a healthy cluster (unless h is a healthy read just
// made) and refuses a step whose brokers hold a partition at
// min.insync.replicas.
func (g *healthGate) beforeStep(ctx context.Context, h *discover.Health, hosts []string, touching []int32, unknown bool) error {
	var err error
	if h == nil {
		if h, err = g.waitHealthy(ctx, "before "+strings.Join(hosts, ", "), touching); err != nil {
			return err
		}
	}
	v := discover.Judge(*h, g.expect, touching)
	if v.MinISRAssumed {
		g.status.event(fmt.Sprintf("cluster %s: min.insync.replicas of some topics could not be read (%s): 1 assumed for them", termsafe.Line(g.cluster), termsafe.Line(h.MinISRError)))
	}
	if len(v.AtMinISR) == 0 {
		return nil
	}
	var parts []string
	for _, p := range v.AtMinISR {
		parts = append(parts, fmt.Sprintf("%s (isr %s, min.insync.replicas %d, held by broker %d)", p.Name(), ids(p.ISR), p.MinISR, p.Broker))
	}
	who := strings.Join(hosts, ", ")
	if unknown {
		who += " (a broker whose node id is not proven: every broker counted)"
	}
	return located.Hint(fmt.Errorf("cluster %s: refused to change %s: %s: taking it down would stop acks=all producers", termsafe.Line(g.cluster), termsafe.Line(who), termsafe.Line(strings.Join(parts, "; "))),
		"raise the replication factor or lower min.insync.replicas of those topics, then resume")
}

// waitHealthy reads the cluster until Checks consecutive reads are
// healthy and returns the last one; an error names what kept it
// unhealthy when the timeout passed, or says where the run stands when
// ctx ended.
func (g *healthGate) waitHealthy(ctx context.Context, when string, touching []int32) (*discover.Health, error) {
	deadline := g.now().Add(g.cfg.Health.Timeout)
	healthy, state := 0, ""
	for {
		h, err := g.read(ctx)
		if ctx.Err() != nil {
			return nil, g.interrupted("waiting for cluster " + g.cluster + " to be healthy " + when)
		}
		if err != nil {
			healthy, state = 0, "could not read the cluster (counted unhealthy): "+readError(err)
		} else if v := discover.Judge(*h, g.expect, touching); !v.Healthy() {
			healthy, state = 0, "unhealthy: "+describe(v)
		} else {
			healthy++
			state = "healthy"
		}
		left := deadline.Sub(g.now())
		g.status.update(fmt.Sprintf("cluster %s %s: %s", termsafe.Line(g.cluster), termsafe.Line(when), termsafe.Line(state)),
			fmt.Sprintf(" (%d/%d healthy reads, %s left)", healthy, g.cfg.Health.Checks, left.Round(time.Second)))
		if healthy >= g.cfg.Health.Checks {
			g.status.done()
			return h, nil
		}
		if left < g.cfg.Health.Interval {
			g.status.done()
			return nil, located.Hint(fmt.Errorf("cluster %s not healthy %s within --health-timeout %s: %s", termsafe.Line(g.cluster), termsafe.Line(when), g.cfg.Health.Timeout, termsafe.Line(state)),
				"find why (kafka-topics --describe --under-replicated-partitions), then resume")
		}
		if fanout.Sleep(ctx, g.cfg.Health.Interval) != nil {
			g.status.done()
			return nil, g.interrupted("waiting for cluster " + g.cluster + " to be healthy " + when)
		}
	}
}

// readError is a failed read without discover's hint on what to check
// (the gate's own hint follows it).
func readError(err error) string {
	var de *discover.Error
	if errors.As(err, &de) {
		return fmt.Sprintf("bootstrap %s: %v", de.Bootstrap, de.Err)
	}
	return err.Error()
}

// errInterrupted is a gate ended by Ctrl-C: nothing further started.
var errInterrupted = errors.New("interrupted")

func (g *healthGate) interrupted(while string) error {
	return fmt.Errorf("%w while %s: nothing further started", errInterrupted, termsafe.Line(while))
}

// describe names what makes a read unhealthy: the topic-partitions and
// the brokers that hold them, the brokers not registered.
func describe(v discover.Verdict) string {
	var parts []string
	for _, p := range v.Offline {
		parts = append(parts, fmt.Sprintf("offline %s (replicas %s)", p.Name(), ids(p.Replicas)))
	}
	for _, p := range v.UnderReplicated {
		parts = append(parts, fmt.Sprintf("under-replicated %s (replicas %s, isr %s)", p.Name(), ids(p.Replicas), ids(p.ISR)))
	}
	for _, b := range v.Missing {
		parts = append(parts, fmt.Sprintf("broker %d not registered", b))
	}
	for _, t := range v.Unreadable {
		parts = append(parts, "topic "+t)
	}
	const most = 10
	if len(parts) > most {
		parts = append(parts[:most], fmt.Sprintf("and %d more", len(parts)-most))
	}
	return strings.Join(parts, ", ")
}

func ids(l []int32) string {
	s := make([]string, len(l))
	for i, id := range l {
		s[i] = fmt.Sprint(id)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// unitsOf are the units of hosts, in rollout order.
func (g *healthGate) unitsOf(hosts []string) []int {
	seen := map[int]bool{}
	var out []int
	for _, h := range hosts {
		if i, ok := g.ro.unit[h]; ok && !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	sort.Ints(out)
	return out
}

func (g *healthGate) inUnit(i int, hosts []string) []string {
	var out []string
	for _, h := range hosts {
		if g.ro.unit[h] == i {
			out = append(out, h)
		}
	}
	return out
}

// nodes are the node ids of hosts; unknown when one is not proven, and
// then every broker of the cluster counts as touched.
func (g *healthGate) nodes(i int, hosts []string) (touching []int32, unknown bool) {
	for _, h := range hosts {
		id, ok := g.ro.Units[i].Node[h]
		if !ok {
			return g.expect, true
		}
		touching = append(touching, id)
	}
	return touching, false
}

// statusLine shows a wait's progress: on a terminal one line rewritten
// in place; otherwise a line per change of state.
type statusLine struct {
	w    io.Writer
	tty  bool
	last string
}

func newStatusLine(w io.Writer) *statusLine {
	s := &statusLine{w: w}
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		if f, ok := u.Unwrap().(*os.File); ok && termui.IsTerminal(f) {
			s.w, s.tty = f, true
		}
	} else if f, ok := w.(*os.File); ok && termui.IsTerminal(f) {
		s.tty = true
	}
	return s
}

// update shows state with its progress (on a terminal; otherwise the
// progress is printed only with a new state).
func (s *statusLine) update(state, progress string) {
	if s.tty {
		fmt.Fprintf(s.w, "\r\033[Kkaudit: %s%s", state, progress)
		return
	}
	if state != s.last {
		fmt.Fprintf(s.w, "kaudit: %s%s\n", state, progress)
	}
	s.last = state
}

// done ends a wait's line.
func (s *statusLine) done() {
	if s.tty {
		fmt.Fprintln(s.w)
	}
	s.last = ""
}

// event is one line (a pause, an assumption).
func (s *statusLine) event(line string) {
	fmt.Fprintf(s.w, "kaudit: %s\n", line)
}
