package remediate

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
)

// ChangeKind is what a change changes; its string is the JSON "kind".
type ChangeKind string

// Change kinds.
const (
	KindSysctl        ChangeKind = "sysctl"
	KindKafkaProperty ChangeKind = "kafka-property"
	KindNICRing       ChangeKind = "nic-ring"
	KindNICOffload    ChangeKind = "nic-offload"
	KindUnitDropIn    ChangeKind = "systemd-dropin" // dropin.go
)

// IsNIC reports whether k is a NIC ring or offload change.
func (k ChangeKind) IsNIC() bool { return k == KindNICRing || k == KindNICOffload }

// Rule IDs and keys the planner treats specially: the syncookies gate and
// the listen-backlog cross-check (the knowledge lives in package rules).
const (
	ruleKernel          = rules.RuleKernelSynackWscale
	ruleListenEffective = rules.RuleListenBacklogEffective
	keySyncookies       = rules.KeySyncookies
	keySomaxconn        = rules.KeySomaxconn
	keySynBacklog       = rules.KeySynBacklog
	propBacklog         = rules.PropBacklog
	propRcvbuf          = rules.PropRcvbuf
)

// Trade-off texts, kept here so that tests and docs quote one source.
const (
	SyncookiesTradeOff = "trade-off: SYNs are dropped instead of answered with cookies while the queue is full; clients retry after ~1 s. " +
		"Works around the kernel bug (commit 909172a: the cookie path uses a different window scale than the SYN-ACK advertised) until the kernel is upgraded"
	// SyncookiesDefaultNote is the note of tcp_syncookies=1 (undoing a
	// forced 2): true for 1, which is not the bug's workaround.
	SyncookiesDefaultNote = "1 is the kernel default: cookies only once the SYN queue is full, instead of for every SYN (2). " +
		"On a kernel without commit 909172a a reconnect storm that overflows the queue still completes connections by cookie with the wrong window scale (see kernel-synack-wscale)"
	RcvbufAlternative = "alternative (derived from the kernel code, not from the talk; not applied): set socket.receive.buffer.bytes=-1 in server.properties and restart the broker: " +
		"Kafka then leaves SO_RCVBUF unset on the listener, which removes one precondition of the bug; the kernel autotunes the receive buffer instead"
	somaxconnRestartNote = "the listener keeps the backlog it started with (min(backlog, somaxconn) is fixed when the socket starts listening): Kafka sees the new limit after its next restart"
)

// Change is one setting kaudit would change on one host.
type Change struct {
	Host string `json:"host"`
	// Rules are the rules that asked for the change, sorted (several when
	// they ask for the same target: merge.go).
	Rules           []string   `json:"rules"`
	Kind            ChangeKind `json:"kind"`
	Target          string     `json:"target"` // sysctl key, property key, or "eth0 rx" / "eth0 gro"
	From            string     `json:"from"`   // "" when unknown (or, for a property, unset)
	To              string     `json:"to"`
	Runtime         bool       `json:"runtime"` // the running value changes now
	Persist         bool       `json:"persist"` // a file changes so that it survives a reboot or restart
	PersistPath     string     `json:"persist_path,omitempty"`
	RestartRequired bool       `json:"restart_required,omitempty"` // takes effect for the broker only after a broker restart (kaudit restarts it only with --restart)
	Note            string     `json:"note,omitempty"`             // trade-offs and caveats, one per line

	// PersistMatch is, for a systemd .link file (LinkPath), its [Match]
	// keys, space-separated: "MACAddress=52:54:00:aa:bb:cc Driver=ixgbe".
	PersistMatch PersistMatch `json:"persist_match,omitempty"`
	// NM is the NetworkManager connection a NIC setting is persisted in
	// (PersistPath then names the connection, it is no file).
	NM NMConnection `json:"nm_connection,omitempty"`
}

// Manual is something kaudit cannot do itself (kernel or Kafka upgrade, a
// file it cannot find), or an alternative it does not apply by default.
type Manual struct {
	Host   string   `json:"host"`
	Rules  []string `json:"rules"` // the rules asking, sorted
	Action string   `json:"action"`
}

// HostPlan is everything kaudit would do, and would not do, on one host.
type HostPlan struct {
	Host    string   `json:"host"`
	Changes []Change `json:"changes"`
	Manual  []Manual `json:"manual,omitempty"`
	// Infeasible: what the rules ask for that this host does not allow
	// (facts.Feasibility); not planned.
	Infeasible []Infeasible `json:"cannot_apply,omitempty"`
	// Conflicts: targets rules ask for in incompatible directions; not
	// planned (merge.go).
	Conflicts []Conflict `json:"conflicts,omitempty"`
	Warnings  []string   `json:"warnings,omitempty"`
}

// RestartRequired reports whether any change needs a broker restart.
func (p HostPlan) RestartRequired() bool { return NeedsRestart(p.Changes) }

// NeedsRestart reports whether any of changes needs a broker restart.
func NeedsRestart(changes []Change) bool {
	return slices.ContainsFunc(changes, func(c Change) bool { return c.RestartRequired })
}

// Selector chooses which findings' fixes to plan, and how.
type Selector struct {
	Rules []string // rule IDs; empty means all
	// RuntimeOnlyOK: a change whose running value can be set but whose
	// persistence cannot (no udev rules directory, a read-only
	// /etc/sysctl.d) is planned runtime only, saying so, instead of being
	// listed as impossible here.
	RuntimeOnlyOK bool
}

// Match reports whether the rule is selected.
func (s Selector) Match(rule string) bool {
	return len(s.Rules) == 0 || slices.Contains(s.Rules, rule)
}

// PlanHost turns one host's findings into changes, manual actions and
// warnings. It is a pure function of its arguments.
//
// A finding contributes its Fix when it fails (or, when the Fix says
// WhenUnknown, as kernel-synack-wscale's does, when it is unknown) and sel
// selects its rule. Sysctl entries become sysctl changes (runtime and/or
// the managed file), Kafka properties become server.properties edits
// (never socket.listen.backlog.size where rules.BacklogConfigurable says
// no, never socket.receive.buffer.bytes=-1, which is only offered),
// NIC entries become ring (capped at the NIC's maximum) and offload
// changes (not for a feature the NIC or kernel does not allow: listed in
// Infeasible, see rules.OffloadBlocked), Manual becomes a manual action, and
// each Alternative marked Offer a manual action "alternative (not
// applied)".
//
// net.ipv4.tcp_syncookies=0 is planned only while
// rules.SyncookiesOffWarranted: on a fixed kernel cookies are the better
// defence.
// When it is planned, the backlog fixes other failing findings ask for
// (somaxconn, tcp_max_syn_backlog, socket.listen.backlog.size) are planned
// with it even when sel leaves their rules out, and a warning says so when
// the effective listen backlog still would not grow.
func PlanHost(host string, f *facts.Facts, findings []rules.Finding, sel Selector) HostPlan {
	p := &planner{
		host:    host,
		f:       f,
		byRule:  map[string]rules.Finding{},
		sysctl:  map[string]*request{},
		prop:    map[string]*request{},
		nic:     map[string]*request{},
		seenWrn: map[string]bool{},

		runtimeOnlyOK: sel.RuntimeOnlyOK,
	}
	plan := HostPlan{Host: host, Changes: []Change{}}
	if f == nil {
		plan.Warnings = []string{"no facts for this host: nothing planned"}
		return plan
	}
	for _, fd := range findings {
		p.byRule[fd.Rule] = fd
	}
	p.kernelAffected, p.kernelStatus = rules.SyncookiesOffWarranted(findings)

	for _, fd := range findings {
		if !sel.Match(fd.Rule) || !actionable(fd) {
			continue
		}
		p.addFix(fd, false)
	}
	if p.syncookiesOff {
		// Cookies off without a larger backlog turns every burst above
		// the backlog into dropped SYNs: bring in the backlog fixes.
		for _, fd := range findings {
			if sel.Match(fd.Rule) || fd.Status != rules.Fail || fd.Fix == nil {
				continue
			}
			p.addBacklogParts(fd)
		}
	}
	p.warnCookiePathOpen()
	p.finish(&plan)
	return plan
}

// warnCookiePathOpen says when the plan leaves the talk's failure
// possible: kernel-synack-wscale fails or is unknown on a host exposed to
// it (its fix asks for tcp_syncookies=0) and the plan does not turn
// cookies off (its rule not selected).
func (p *planner) warnCookiePathOpen() {
	k, ok := p.byRule[ruleKernel]
	if !ok || !p.kernelAffected || p.syncookiesOff || k.Fix == nil || k.Fix.Sysctl[keySyncookies] != "0" {
		return
	}
	p.warn("the SYN-cookie path stays open after this plan: %s is %s and net.ipv4.tcp_syncookies stays %s (its fix is not selected); the talk's failure remains possible here until cookies are off or the kernel is upgraded",
		ruleKernel, k.Status, p.f.Sysctl[keySyncookies])
}

func actionable(fd rules.Finding) bool {
	if fd.Fix == nil {
		return false
	}
	return fd.Status == rules.Fail || (fd.Fix.WhenUnknown && fd.Status == rules.Unknown) || (fd.Fix.WhenWarn && fd.Status == rules.Warn)
}

type planner struct {
	host           string
	f              *facts.Facts
	byRule         map[string]rules.Finding
	kernelAffected bool
	kernelStatus   rules.Status // kernel-synack-wscale's; "" when it was not evaluated
	syncookiesOff  bool
	offeredRcvbuf  bool
	// upgrades: rules whose socket.listen.backlog.size cannot be set on
	// this Kafka; upgradeText: a Fix's own Manual text for it, if any.
	upgrades    []string
	upgradeText bool

	sysctl, prop, nic map[string]*request
	manual            []Manual
	warnings          []string
	seenWrn           map[string]bool
	runtimeOnlyOK     bool
	infeasible        []Infeasible
	dropIns           []Change // dropin.go
}

// request is one target asked for by one or more rules.
type request struct {
	to     string
	rules  []string
	pulled bool // brought in for tcp_syncookies=0, its rule not selected
	// asks are the rules' requests, each with its direction; conflict
	// says why no value satisfies them all ("": to does).
	asks     []ask
	conflict string
	// persistOnly: a NIC setting that already runs at to, persisted only
	// (nic-persisted); a runtime request for the same target clears it.
	persistOnly bool
}

func (p *planner) warn(format string, args ...any) {
	w := fmt.Sprintf(format, args...)
	if !p.seenWrn[w] {
		p.seenWrn[w] = true
		p.warnings = append(p.warnings, w)
	}
}

// addManual adds action, asked by rule; mergeManual folds the same
// action asked twice into one entry.
func (p *planner) addManual(rule, action string) {
	p.addManualFor([]string{rule}, action)
}

// addManualFor adds action, asked by rules.
func (p *planner) addManualFor(rules []string, action string) {
	p.manual = append(p.manual, Manual{Host: p.host, Rules: rules, Action: action})
}

// sortedKeys lists m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func (p *planner) addFix(fd rules.Finding, pulled bool) {
	fx := fd.Fix
	for _, k := range sortedKeys(fx.Sysctl) {
		p.addSysctl(fd.Rule, k, fx.Sysctl[k], fx.BoundOf(k), pulled)
	}
	for _, k := range sortedKeys(fx.KafkaProperties) {
		p.addProperty(fd, k, fx.KafkaProperties[k], pulled)
	}
	for _, ifc := range sortedKeys(fx.NIC) {
		for _, s := range sortedKeys(fx.NIC[ifc]) {
			p.addNIC(fd.Rule, ifc, s, fx.NIC[ifc][s])
		}
	}
	for _, ifc := range sortedKeys(fx.NICPersist) {
		for _, s := range sortedKeys(fx.NICPersist[ifc]) {
			p.addNICPersist(fd.Rule, ifc, s, fx.NICPersist[ifc][s])
		}
	}
	if fx.NoFile > 0 {
		p.addNoFile(fd.Rule, fx.NoFile)
	}
	if fx.Manual != "" {
		p.addManual(fd.Rule, fx.Manual)
	}
	for _, alt := range fx.Alternatives {
		if alt.Offer {
			p.offer(fd.Rule, alt)
		}
	}
}

// finish turns the requests into sorted changes and adds the cross-checks.
func (p *planner) finish(plan *HostPlan) {
	changes := p.sysctlChanges()
	changes = append(changes, p.propertyChanges()...)
	changes = append(changes, p.nicChanges()...)
	changes = append(changes, p.dropIns...)
	slices.SortStableFunc(changes, func(a, b Change) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Target, b.Target))
	})
	if changes != nil {
		plan.Changes = changes
	}
	slices.SortStableFunc(p.infeasible, func(a, b Infeasible) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Target, b.Target))
	})
	plan.Infeasible = p.infeasible
	plan.Conflicts = p.conflicts()
	p.checkSELinux(plan.Changes)

	if len(p.upgrades) > 0 && !p.upgradeText {
		p.addManualFor(p.upgrades, fmt.Sprintf("upgrade Kafka to ≥ 3.2 (Confluent Platform ≥ 7.2): %s runs %s, where the listen backlog is fixed at %d (KIP-764)",
			p.host, kafkaName(p.f.Kafka), rules.DefaultListenBacklog))
	}
	if p.syncookiesOff {
		p.checkBacklog(changes)
	}
	plan.Manual = mergeManual(p.manual)
	plan.Warnings = p.warnings
}

// mergeManual folds identical actions asked by several rules into one
// entry (its rules merged, sorted), sorted by rules then action.
func mergeManual(ms []Manual) []Manual {
	var out []Manual
	idx := map[string]int{}
	for _, m := range ms {
		i, ok := idx[m.Action]
		if !ok {
			i = len(out)
			idx[m.Action] = i
			out = append(out, Manual{Host: m.Host, Action: m.Action})
		}
		for _, r := range m.Rules {
			out[i].Rules = appendRule(out[i].Rules, r)
		}
	}
	slices.SortStableFunc(out, func(a, b Manual) int {
		return cmp.Or(slices.Compare(a.Rules, b.Rules), strings.Compare(a.Action, b.Action))
	})
	return out
}

func appendRule(rs []string, r string) []string {
	if slices.Contains(rs, r) {
		return rs
	}
	rs = append(rs, r)
	sort.Strings(rs)
	return rs
}

func atoi(s string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	return n, err == nil
}
