package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/internal/words"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
	"github.com/kaudit/kaudit/report"
)

// Defaults of a rollout's health gate and pause (fix --apply, rollback).
const (
	DefaultHealthChecks   = 3
	DefaultHealthInterval = 10 * time.Second
	DefaultHealthTimeout  = 10 * time.Minute
	// --restart-timeout and --watch (fix --apply --restart)
	DefaultRestartTimeout = apply.DefaultRestartTimeout
	DefaultWatch          = apply.DefaultWatch
)

// RolloutConfig is how fix --apply and rollback roll the fleet, the way
// a Kafka operator rolls a cluster: one broker of a cluster at a time
// (ByRack: one rack), Batch clusters at once, gated on the cluster's
// health with --bootstrap, Pause between two brokers of a cluster without.
type RolloutConfig struct {
	Batch  int  // clusters changed at once (--batch)
	ByRack bool // --batch-by rack: a whole rack of a cluster at a time
	Pause  time.Duration
	Health HealthGate
	// Resume is the run to continue (--resume RUN-ID; fix --apply only).
	Resume string
	// Racks are the inventory's racks (host → rack: rack, kaudit_rack),
	// for a broker whose rack the cluster's metadata does not say (fix
	// and rollback set them from the inventory).
	Racks map[string]string
	// Restart (--restart, fix --apply with --bootstrap only): restart
	// the brokers of gated clusters whose verified changes need it,
	// through their systemd unit, each bounded by RestartTimeout, then
	// watch their SYN-cookie counters for Watch.
	Restart        bool
	RestartTimeout time.Duration
	Watch          time.Duration
}

// HealthGate is how long and how often the gate reads the cluster.
type HealthGate struct {
	Checks   int           // consecutive healthy reads needed (--health-checks)
	Interval time.Duration // between two reads (--health-interval)
	Timeout  time.Duration // the most one wait lasts (--health-timeout)
}

// Check validates the rollout's flags; a zero value is its default
// (withDefaults).
func (c RolloutConfig) Check() error {
	switch {
	case c.Batch < 0:
		return errors.New("--batch must be at least 1")
	case c.Pause < 0:
		return errors.New("--pause must be 0 or more")
	case c.Health.Checks < 0:
		return errors.New("--health-checks must be at least 1")
	case c.Health.Interval < 0 || c.Health.Timeout < 0:
		return errors.New("--health-interval and --health-timeout must be more than 0")
	case c.RestartTimeout < 0 || c.Watch < 0:
		return errors.New("--restart-timeout and --watch must be more than 0")
	}
	return nil
}

// withDefaults fills what was left zero: one cluster at a time, the
// default gate.
func (c RolloutConfig) withDefaults() RolloutConfig {
	c.Batch = max(c.Batch, 1)
	c.Health.Checks = cmp.Or(c.Health.Checks, DefaultHealthChecks)
	c.Health.Interval = cmp.Or(c.Health.Interval, DefaultHealthInterval)
	c.Health.Timeout = cmp.Or(c.Health.Timeout, DefaultHealthTimeout)
	c.RestartTimeout = cmp.Or(c.RestartTimeout, DefaultRestartTimeout)
	c.Watch = cmp.Or(c.Watch, DefaultWatch)
	return c
}

// Unit is one cluster of a rollout: brokers that never change together.
type Unit struct {
	Name  string     // "cluster ID", an inventory group, or "client HOST"
	Steps [][]string // one broker (or with --batch-by rack one rack) each, in order
	Racks []string   // with --batch-by rack: each step's rack
	Node  map[string]int32
	// Gated: the cluster of --bootstrap, whose health gates each step;
	// else NoGate says why not.
	Gated  bool
	NoGate string
	// RackNote says why --batch-by rack went one broker at a time here.
	RackNote string
}

// Rollout is the order of a run: its clusters and the waves Apply runs
// (the first a canary alone, then one step of up to Batch clusters).
type Rollout struct {
	Units   []Unit
	Waves   [][]string
	cfg     RolloutConfig
	unit    map[string]int  // host → index in Units
	cluster *report.Cluster // the gated cluster (rollbackRollout)
}

// PlanRollout orders the hosts of fp that have changes: grouped by
// cluster (clustersOf), one step of a cluster at a time, Batch clusters
// at once. The cluster of r.Cluster (--bootstrap) is gated.
func PlanRollout(r *report.Report, hosts []string, cfg RolloutConfig) *Rollout {
	cfg = cfg.withDefaults()
	ro := &Rollout{cfg: cfg, unit: map[string]int{}}
	node, rack := brokersOf(r.Cluster)
	for h, rk := range cfg.Racks {
		if rack[h] == "" && rk != "" {
			rack[h] = rk
		}
	}
	for _, g := range clustersOf(r, hosts) {
		u := Unit{Name: g.name, Node: map[string]int32{}}
		for _, h := range g.hosts {
			if id, ok := node[h]; ok {
				u.Node[h] = id
			}
		}
		u.Gated, u.NoGate = gateOf(r.Cluster, g)
		u.Steps, u.Racks, u.RackNote = steps(g.hosts, rack, cfg.ByRack)
		for _, h := range g.hosts {
			ro.unit[h] = len(ro.Units)
		}
		ro.Units = append(ro.Units, u)
	}
	ro.Waves = waves(ro.Units, cfg.Batch)
	return ro
}

// group is one cluster's hosts, in report order.
type group struct {
	name     string
	hosts    []string
	clusters []string // the Kafka cluster ids among its groups
}

// clustersOf groups hosts (those of r to change, in report order) by
// the cluster each belongs to: report.BrokerClusters (the proven cluster
// of --bootstrap, else meta.properties' cluster id, else the inventory
// groups), hosts sharing any group joined into one (a host in two
// groups joins them: never two of its brokers at once). A host whose
// cluster is not known also joins every cluster one of its inventory
// groups holds a broker of: it may be one of that cluster's brokers.
// Ansible's implicit "all" joins nothing when a host has another group.
// A client host is a group of its own.
func clustersOf(r *report.Report, hosts []string) []group {
	byHost := report.BrokerClusters(r)
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if parent[x] == "" || parent[x] == x {
			parent[x] = x
			return x
		}
		parent[x] = find(parent[x])
		return parent[x]
	}
	union := func(a, b string) { parent[find(b)] = find(a) }
	keys := map[string][]string{}
	groupsOf := map[string][]string{}
	for _, h := range r.Hosts {
		groupsOf[h.Name] = h.Groups
	}
	inv := map[string][]string{} // inventory group → the cluster keys of its known brokers
	for _, h := range hosts {
		gs, broker := byHost[h]
		if !broker {
			gs = []string{"client " + h}
		} else if len(gs) > 1 {
			gs = without(gs, "all")
		}
		keys[h] = gs
		for _, g := range gs[1:] {
			union(gs[0], g)
		}
		if strings.HasPrefix(gs[0], report.ClusterPrefix) {
			for _, g := range invGroups(groupsOf[h]) {
				inv[g] = append(inv[g], gs[0])
			}
		}
	}
	for _, h := range hosts {
		if gs := keys[h]; !strings.HasPrefix(gs[0], report.ClusterPrefix) && !strings.HasPrefix(gs[0], "client ") {
			for _, g := range gs {
				for _, c := range inv[g] {
					union(c, g)
				}
			}
		}
	}
	var out []group
	at := map[string]int{}
	for _, h := range hosts {
		root := find(keys[h][0])
		i, ok := at[root]
		if !ok {
			i, at[root] = len(out), len(out)
			out = append(out, group{})
		}
		out[i].hosts = append(out[i].hosts, h)
	}
	for i := range out {
		out[i].name, out[i].clusters = nameOf(out[i].hosts, keys, find)
	}
	return out
}

// invGroups are a host's inventory groups that join: "all" only alone.
func invGroups(gs []string) []string {
	if len(gs) > 1 {
		return without(gs, "all")
	}
	return gs
}

// nameOf names a joined group by its groups, sorted, joined with "+",
// and lists the Kafka clusters (ids) among them.
func nameOf(hosts []string, keys map[string][]string, find func(string) string) (string, []string) {
	root := find(keys[hosts[0]][0])
	seen := map[string]bool{}
	var names, clusters []string
	for _, h := range hosts {
		for _, g := range keys[h] {
			if !seen[g] && find(g) == root {
				seen[g] = true
				names = append(names, g)
			}
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if id, ok := strings.CutPrefix(n, report.ClusterPrefix); ok {
			clusters = append(clusters, id)
		}
	}
	return strings.Join(names, "+"), clusters
}

func without(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

// brokersOf are the node id of each host proven a broker of rc and the
// rack each such broker advertises.
func brokersOf(rc *report.Cluster) (node map[string]int32, rack map[string]string) {
	node, rack = map[string]int32{}, map[string]string{}
	if rc == nil {
		return node, rack
	}
	for _, b := range rc.Brokers {
		if b.Host == "" || b.Proof != facts.ProofProven {
			continue
		}
		node[b.Host] = b.NodeID
		if b.Rack != "" {
			rack[b.Host] = b.Rack
		}
	}
	return node, rack
}

// gateOf says whether g's changes are gated on the cluster's health: only
// the cluster --bootstrap reaches can be read.
func gateOf(rc *report.Cluster, g group) (bool, string) {
	switch {
	case strings.HasPrefix(g.name, "client "):
		return false, "a client host, not a broker"
	case rc == nil:
		return false, "no --bootstrap: kaudit cannot read the cluster's health"
	case !slices.Contains(g.clusters, rc.ID):
		return false, fmt.Sprintf("not the cluster of --bootstrap (%s): kaudit cannot read its health", rc.ID)
	}
	return true, ""
}

// steps are a cluster's hosts one at a time, or with byRack one rack at
// a time (racks sorted), when every host's rack is known.
func steps(hosts []string, rack map[string]string, byRack bool) (out [][]string, racks []string, note string) {
	if byRack {
		by := map[string][]string{}
		for _, h := range hosts {
			if rack[h] == "" {
				note = "the rack of " + h + " is not known (neither the metadata of --bootstrap's cluster, for a proven broker, nor the inventory's rack says it): one broker at a time"
				by = nil
				break
			}
			by[rack[h]] = append(by[rack[h]], h)
		}
		racks = slices.Sorted(maps.Keys(by))
		for _, rk := range racks {
			out = append(out, by[rk])
		}
		if by != nil {
			return out, racks, ""
		}
		racks = nil
	}
	for _, h := range hosts {
		out = append(out, []string{h})
	}
	return out, nil, note
}

// waves is the order Apply runs: the first step of the first cluster
// alone (the canary), then one step of each of up to batch clusters.
func waves(units []Unit, batch int) [][]string {
	next := make([]int, len(units))
	var out [][]string
	canary := true
	for {
		var wave []string
		taken := 0
		for i := range units {
			if next[i] >= len(units[i].Steps) || taken == batch {
				continue
			}
			wave = append(wave, units[i].Steps[next[i]]...)
			next[i]++
			taken++
			if canary {
				break
			}
		}
		if wave == nil {
			return out
		}
		canary = false
		out = append(out, wave)
	}
}

// Minimum is the least time the rollout takes besides the changes (and
// the restarts) themselves (restart: host → its verified changes need a
// restart): the waits between its waves, one after another.
func (ro *Rollout) Minimum(restart map[string]bool) time.Duration {
	return ro.waits(ro.Waves, restart)
}

// waits is the least time the waits between waves take, as
// apply.Rollout runs them (runWaves, Rollout.between, healthGate.Gate):
// before the first wave, between two, and after the last, the gated
// cluster's gate (Checks-1 intervals: after the wave just done, or
// before the next one's first step); after a wave that restarted a
// broker of it, the gate and --watch (counted from the restart, so
// the longer of the two), then the gate before the next wave; and
// --pause, after the gate, when a cluster without a gate goes on with
// its next step.
func (ro *Rollout) waits(waves [][]string, restart map[string]bool) time.Duration {
	gate := time.Duration(ro.cfg.Health.Checks-1) * ro.cfg.Health.Interval
	started := map[int]bool{}
	var total time.Duration
	for k := 0; k <= len(waves); k++ {
		var done, next []string
		if k > 0 {
			done = waves[k-1]
		}
		if k < len(waves) {
			next = waves[k]
		}
		gatedDone, restarted := false, false
		for _, h := range done {
			if ro.Units[ro.unit[h]].Gated {
				gatedDone = true
				restarted = restarted || (ro.cfg.Restart && restart[h])
			}
		}
		gatedNext, pause := false, false
		for _, h := range next {
			i := ro.unit[h]
			gatedNext = gatedNext || ro.Units[i].Gated
			pause = pause || (!ro.Units[i].Gated && started[i])
		}
		for _, h := range next {
			started[ro.unit[h]] = true
		}
		switch {
		case restarted && gatedNext:
			total += max(gate, ro.cfg.Watch) + gate
		case restarted:
			total += max(gate, ro.cfg.Watch)
		case gatedDone || gatedNext:
			total += gate
		}
		if pause {
			total += ro.cfg.Pause
		}
	}
	return total
}

// WriteRollout writes the order of a rollout: per cluster its brokers
// in order, whether each step is gated, which need a restart (restart:
// host → its verified changes need one), and the minimum time.
func WriteRollout(w io.Writer, ro *Rollout, restart map[string]bool) {
	if len(ro.Waves) == 0 {
		return
	}
	per := "one broker of a cluster at a time"
	if ro.cfg.ByRack {
		per = "one rack of a cluster at a time"
	}
	fmt.Fprintf(w, "\nrollout: %s, %s, up to %s at once; minimum %s of waits\n", words.Count(len(ro.Units), "cluster", "clusters"), per,
		words.Count(ro.cfg.Batch, "cluster", "clusters"), ro.Minimum(restart))
	for _, u := range ro.Units {
		writeUnit(w, ro, u, restart)
	}
	fmt.Fprintln(w, "order:")
	for i, wave := range ro.Waves {
		note := ""
		if i == 0 {
			note = " (canary)"
		}
		fmt.Fprintf(w, "  %d. %s%s\n", i+1, termsafe.Line(strings.Join(wave, ", ")), note)
	}
}

func writeUnit(w io.Writer, ro *Rollout, u Unit, restart map[string]bool) {
	cfg := ro.cfg
	fmt.Fprintf(w, "%s: %s; minimum %s of waits\n", termsafe.Line(u.Name), gateText(u, cfg), ro.waits(u.Steps, restart))
	if u.RackNote != "" {
		fmt.Fprintf(w, "  --batch-by rack: %s\n", termsafe.Line(u.RackNote))
	}
	for i, s := range u.Steps {
		var parts []string
		for _, h := range s {
			p := h
			if id, ok := u.Node[h]; ok {
				p += fmt.Sprintf(" (node %d)", id)
			}
			if restart[h] {
				p += restartText(u, cfg)
			}
			parts = append(parts, p)
		}
		step := strings.Join(parts, ", ")
		if u.Racks != nil {
			step = "rack " + u.Racks[i] + ": " + step
		}
		fmt.Fprintf(w, "  %d. %s\n", i+1, termsafe.Line(step))
	}
}

// restartText is the plan's mark of a broker whose changes need a
// restart.
func restartText(u Unit, cfg RolloutConfig) string {
	switch {
	case cfg.Restart && u.Gated:
		return " [restart: through its systemd unit (--restart), then watched]"
	case cfg.Restart:
		return " [restart required: not restarted by kaudit (its cluster's health cannot be read)]"
	}
	return " [restart required: not restarted by kaudit]"
}

// restartOptions are apply's --restart options for ro: the brokers of a
// cluster without a gate are refused (kaudit cannot see it healthy again).
func (ro *Rollout) restartOptions() *apply.RestartOptions {
	if !ro.cfg.Restart {
		return nil
	}
	o := &apply.RestartOptions{Timeout: ro.cfg.RestartTimeout, Watch: ro.cfg.Watch, Refuse: map[string]string{}}
	o.Timeout = cmp.Or(o.Timeout, apply.DefaultRestartTimeout)
	o.Watch = cmp.Or(o.Watch, apply.DefaultWatch)
	for h, i := range ro.unit {
		if u := ro.Units[i]; !u.Gated {
			o.Refuse[h] = "no health gate for its cluster (" + u.NoGate + "): restart it by hand, one broker at a time, once that cluster has 0 under-replicated partitions"
		}
	}
	return o
}

func gateText(u Unit, cfg RolloutConfig) string {
	if u.Gated {
		return fmt.Sprintf("health gate on: %s %s apart (at most %s) before the first step and after each",
			words.Count(cfg.Health.Checks, "healthy read", "healthy reads"), cfg.Health.Interval, cfg.Health.Timeout)
	}
	g := "health gate off (" + u.NoGate + ")"
	switch {
	case len(u.Steps) > 1 && cfg.Pause > 0:
		g += fmt.Sprintf("; --pause %s between steps", cfg.Pause)
	case len(u.Steps) > 1:
		g += "; no pause between steps (--pause)"
	}
	return g
}

// rollbackRollout is the rollout of a rollback, which gathers nothing:
// the hosts grouped by their inventory groups (clustersOf), or, for the
// brokers of --bootstrap without an inventory, as that cluster, gated
// (their node ids not proven: every broker counts in the
// min.insync.replicas check).
func rollbackRollout(hosts []inventory.Host, jr *remediate.Journal, j RollbackJob) *Rollout {
	r := &report.Report{}
	var rc *report.Cluster
	if src := j.cluster; src != nil && src.found != nil {
		rc = &report.Cluster{ID: src.found.ID}
		for _, b := range src.found.Brokers {
			rc.Brokers = append(rc.Brokers, report.ClusterBroker{NodeID: b.NodeID})
		}
	}
	var todo []string
	j.Rollout.Racks = racksOf(hosts)
	for _, h := range hosts {
		groups := h.Groups
		if rc != nil {
			groups = []string{"cluster " + rc.ID}
		}
		r.Hosts = append(r.Hosts, report.Host{Name: h.Name, Groups: groups})
		if hj := jr.Host(h.Name); hj != nil && hj.Owns() {
			todo = append(todo, h.Name)
		}
	}
	r.Cluster = rc
	ro := PlanRollout(r, todo, j.Rollout)
	ro.cluster = rc
	return ro
}

// racksOf are the inventory's racks of hosts (RolloutConfig.Racks).
func racksOf(hosts []inventory.Host) map[string]string {
	out := map[string]string{}
	for _, h := range hosts {
		if h.Rack != "" {
			out[h.Name] = h.Rack
		}
	}
	return out
}

// CheckRestart refuses --restart without --bootstrap (cluster: the
// command has one): kaudit restarts a broker only while it can see its
// cluster healthy again.
func (r RolloutConfig) CheckRestart(cluster bool) error {
	if !r.Restart || cluster {
		return nil
	}
	return located.Hint(errors.New("--restart needs --bootstrap: kaudit restarts a broker only while it can see its cluster healthy again"),
		"give --bootstrap HOST:PORT of the cluster (and --broker-map if its brokers advertise other names), or restart the brokers by hand")
}
