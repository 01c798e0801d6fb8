package remediate

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate/props"
	"github.com/kaudit/kaudit/remediate/sysctld"
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

// NICPersistPath is where ring and offload settings are persisted when
// the host's own mechanism cannot be used (facts.NIC.Persist): a udev
// rule that runs ethtool when the interface appears. See nicPersistence
// for the others (NetworkManager, ifcfg ETHTOOL_OPTS, ifupdown post-up,
// systemd .link).
const NICPersistPath = "/etc/udev/rules.d/99-kaudit-ethtool.rules"

// LinkPath is the systemd .link file kaudit writes for an interface: it
// sorts before 99-default.link (only the first matching .link applies).
func LinkPath(iface string) string { return "/etc/systemd/network/10-kaudit-" + iface + ".link" }

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
	RcvbufAlternative = "alternative (derived from the kernel code, not from the talk; not applied): set socket.receive.buffer.bytes=-1 in server.properties and restart the broker: " +
		"Kafka then leaves SO_RCVBUF unset on the listener, which removes one precondition of the bug; the kernel autotunes the receive buffer instead"
	somaxconnRestartNote = "the listener keeps the backlog it started with (min(backlog, somaxconn) is fixed when the socket starts listening): Kafka sees the new limit after its next restart"
)

// Change is one setting kaudit would change on one host.
type Change struct {
	Host string `json:"host"`
	// Rule is the rule that asked for the change; when several rules ask
	// for the same target, their IDs sorted and joined with ",".
	Rule            string     `json:"rule"`
	Kind            ChangeKind `json:"kind"`
	Target          string     `json:"target"` // sysctl key, property key, or "eth0 rx" / "eth0 gro"
	From            string     `json:"from"`   // "" when unknown (or, for a property, unset)
	To              string     `json:"to"`
	Runtime         bool       `json:"runtime"` // the running value changes now
	Persist         bool       `json:"persist"` // a file changes so that it survives a reboot or restart
	PersistPath     string     `json:"persist_path,omitempty"`
	RestartRequired bool       `json:"restart_required,omitempty"` // takes effect for the broker only after a broker restart (kaudit never restarts it)
	Note            string     `json:"note,omitempty"`             // trade-offs and caveats, one per line

	// PersistMatch is, for a systemd .link file (LinkPath), its [Match]
	// keys, space-separated: "MACAddress=52:54:00:aa:bb:cc Driver=ixgbe";
	// for a NetworkManager connection NMMatchPrefix and its UUID (and
	// PersistPath then names the connection, it is no file).
	PersistMatch string `json:"persist_match,omitempty"`
}

// Manual is something kaudit cannot do itself (kernel or Kafka upgrade, a
// file it cannot find), or an alternative it does not apply by default.
type Manual struct {
	Host   string `json:"host"`
	Rule   string `json:"rule"`
	Action string `json:"action"`
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
func (p HostPlan) RestartRequired() bool {
	for _, c := range p.Changes {
		if c.RestartRequired {
			return true
		}
	}
	return false
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
	if len(s.Rules) == 0 {
		return true
	}
	for _, r := range s.Rules {
		if r == rule {
			return true
		}
	}
	return false
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
		seenMan: map[Manual]bool{},
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
	var st rules.Status
	p.kernelAffected, st = rules.SyncookiesOffWarranted(findings)
	p.kernelStatus = "not evaluated"
	if st != "" {
		p.kernelStatus = string(st)
	}

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
	p.finish(&plan)
	return plan
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
	kernelStatus   string
	syncookiesOff  bool
	offeredRcvbuf  bool
	// upgrades: rules whose socket.listen.backlog.size cannot be set on
	// this Kafka; upgradeText: a Fix's own Manual text for it, if any.
	upgrades    []string
	upgradeText bool

	sysctl, prop, nic map[string]*request
	manual            []Manual
	seenMan           map[Manual]bool
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

func (p *planner) addManual(rule, action string) {
	m := Manual{Host: p.host, Rule: rule, Action: action}
	if !p.seenMan[m] {
		p.seenMan[m] = true
		p.manual = append(p.manual, m)
	}
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

// addBacklogParts takes from an unselected failing finding only what
// raises the listen backlog.
func (p *planner) addBacklogParts(fd rules.Finding) {
	for _, k := range []string{keySomaxconn, keySynBacklog} {
		if v, ok := fd.Fix.Sysctl[k]; ok {
			p.addSysctl(fd.Rule, k, v, fd.Fix.BoundOf(k), true)
		}
	}
	if v, ok := fd.Fix.KafkaProperties[propBacklog]; ok {
		p.addProperty(fd, propBacklog, v, true)
	}
}

func (p *planner) addSysctl(rule, key, value string, b rules.Bound, pulled bool) {
	value = sysctld.Fold(value)
	if key == keySyncookies && value == "0" {
		if !p.kernelAffected {
			p.warn("not disabling SYN cookies (%s asks for %s=0): %s is %s, and on a fixed kernel cookies are the better defence against a full SYN queue",
				rule, key, ruleKernel, p.kernelStatus)
			return
		}
		p.syncookiesOff = true
	}
	if !sysctld.ValidKey(key) || !sysctld.ValidValue(value) {
		p.warn("%s asks for %s = %q, which kaudit will not write (outside the allowed characters)", rule, key, value)
		return
	}
	r, ok := p.sysctl[key]
	if !ok {
		p.sysctl[key] = &request{to: value, rules: []string{rule}, pulled: pulled, asks: []ask{{rule, value, b}}}
		return
	}
	r.rules = appendRule(r.rules, rule)
	r.pulled = r.pulled && pulled
	if key == keySyncookies {
		if r.to != value {
			p.warn("rules ask for different values of %s (%s, %s): planning 0, the mitigation for the kernel bug", key, r.to, value)
			r.to = "0"
		}
		return
	}
	r.merge(ask{rule, value, b})
}

func (p *planner) addProperty(fd rules.Finding, key, value string, pulled bool) {
	rule := fd.Rule
	if key == propRcvbuf && value == "-1" {
		p.offer(rule, rcvbufAlternative(fd.Fix))
		return
	}
	k := p.f.Kafka
	if k == nil {
		p.addManual(rule, fmt.Sprintf("no Kafka broker found on this host: set %s=%s in its server.properties by hand", key, value))
		return
	}
	if key == propBacklog {
		switch a, _ := rules.BacklogConfigurable(k); a {
		case rules.AnswerUnknown:
			p.addManual(rule, fmt.Sprintf("set %s=%s in server.properties if the broker is Apache Kafka ≥ 3.2 / Confluent Platform ≥ 7.2 (its version %q, distribution %q, could not be read)",
				key, value, k.Version, k.Distribution))
			return
		case rules.AnswerNo:
			// One "upgrade Kafka" per host: the Fix's own text where a
			// rule has one (added with the Fix), else kaudit's, in finish.
			if fd.Fix.Manual != "" {
				p.addManual(rule, fd.Fix.Manual)
				p.upgradeText = true
			}
			p.upgrades = appendRule(p.upgrades, rule)
			return
		}
	}
	if k.Config == "" {
		p.addManual(rule, fmt.Sprintf("server.properties not found (the broker's command line names none; set the config path in the inventory): set %s=%s by hand", key, value))
		return
	}
	if err := props.Check(key, value); err != nil {
		p.warn("%s: %v", rule, err)
		return
	}
	b := fd.Fix.BoundOf(key)
	r, ok := p.prop[key]
	if !ok {
		p.prop[key] = &request{to: value, rules: []string{rule}, pulled: pulled, asks: []ask{{rule, value, b}}}
		return
	}
	r.pulled = r.pulled && pulled
	r.merge(ask{rule, value, b})
}

// offer lists an alternative as a manual action, never applying it;
// socket.receive.buffer.bytes=-1 is offered once per host, whichever rule
// asks for it.
func (p *planner) offer(rule string, alt rules.Alternative) {
	if alt.KafkaProperties[propRcvbuf] == "-1" {
		if p.offeredRcvbuf {
			return
		}
		p.offeredRcvbuf = true
	}
	if alt.Text == "" {
		p.addManual(rule, RcvbufAlternative)
		return
	}
	p.addManual(rule, "alternative (not applied): "+alt.Text)
}

// rcvbufAlternative is fix's own socket.receive.buffer.bytes=-1
// alternative, or one without a text (offer then uses RcvbufAlternative).
func rcvbufAlternative(fix *rules.Fix) rules.Alternative {
	if fix != nil {
		for _, alt := range fix.Alternatives {
			if alt.KafkaProperties[propRcvbuf] == "-1" {
				return alt
			}
		}
	}
	return rules.Alternative{KafkaProperties: map[string]string{propRcvbuf: "-1"}}
}

func (p *planner) addNIC(rule, ifc, setting, value string) {
	nic := p.findNIC(ifc)
	if nic == nil {
		p.warn("%s: interface %s is not in the gathered facts: %s %s not planned", rule, ifc, ifc, setting)
		return
	}
	switch setting {
	case "rx", "tx":
		p.addRing(rule, nic, setting, value)
	default:
		p.addOffload(rule, nic, setting, value)
	}
}

// addRing asks for a ring size, capped at the NIC's pre-set maximum.
func (p *planner) addRing(rule string, nic *facts.NIC, setting, value string) {
	ifc, target := nic.Name, nic.Name+" "+setting
	want, err := strconv.Atoi(value)
	if err != nil || want <= 0 {
		p.warn("%s: ring size %q for %s is not a positive number", rule, value, target)
		return
	}
	if nic.Ring == nil {
		reason := nic.RingErr
		if strings.Contains(strings.ToLower(reason), "not supported") {
			// The driver has no ring settings (veth, virtual NICs): ethtool -G would fail.
			p.cannotNIC(rule, KindNICRing, target, value, fmt.Sprintf("the %s driver of %s has no ring settings (ethtool -g: %s)", driverName(nic), ifc, reason),
				"nothing to change on this host; waive the finding here")
			return
		}
		if reason == "" {
			reason = "not read"
		}
		p.warn("%s: %s ring sizes are unavailable (%s): %s not planned", rule, ifc, reason, target)
		return
	}
	cur, top := ring(nic.Ring, setting)
	if top <= 0 {
		shown := "n/a"
		if top == 0 {
			shown = "0"
		}
		p.cannotNIC(rule, KindNICRing, target, value, fmt.Sprintf("%s reports no %s ring maximum (Pre-set maximums %s: %s): kaudit never sets a ring above the pre-set maximum", ifc, setting, strings.ToUpper(setting), shown),
			fmt.Sprintf("nothing kaudit can check on this host: if the %s driver documents a larger %s ring, set it with ethtool -G %s %s N yourself", driverName(nic), setting, ifc, setting))
		return
	}
	to := min(want, top)
	if cur >= to {
		return
	}
	p.mergeNIC(rule, target, strconv.Itoa(to), func(a, b string) string {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return strconv.Itoa(max(x, y))
	})
}

// addOffload asks for an offload on or off, unless the driver fixes it.
func (p *planner) addOffload(rule string, nic *facts.NIC, setting, value string) {
	ifc, target := nic.Name, nic.Name+" "+setting
	want := strings.ToLower(value)
	if want != "on" && want != "off" {
		p.warn("%s: offload %s wants %q, not on or off", rule, target, value)
		return
	}
	feat, ok := nic.Features[setting]
	if !ok {
		p.warn("%s: %s does not report feature %s: not planned", rule, ifc, setting)
		return
	}
	if feat.On == (want == "on") {
		return
	}
	if want == "on" {
		if reason, instead := rules.OffloadBlocked(nic, setting); reason != "" {
			p.cannotNIC(rule, KindNICOffload, target, want, reason, instead)
			return
		}
	}
	if feat.Fixed {
		p.cannotNIC(rule, KindNICOffload, target, want, fmt.Sprintf("%s cannot be turned %s: it is %s [fixed] by the %s driver", setting, want, onOff(feat.On), driverName(nic)),
			fmt.Sprintf("nothing to change on this host: the %s driver does not let it change; waive the finding here", driverName(nic)))
		return
	}
	p.mergeNIC(rule, target, want, func(a, b string) string {
		if a == "on" || b == "on" {
			return "on"
		}
		return "off"
	})
}

func (p *planner) mergeNIC(rule, target, to string, pick func(a, b string) string) {
	r, ok := p.nic[target]
	if !ok {
		p.nic[target] = &request{to: to, rules: []string{rule}}
		return
	}
	r.rules = appendRule(r.rules, rule)
	if r.persistOnly {
		r.persistOnly, r.to = false, to
		return
	}
	r.to = pick(r.to, to)
}

// addNICPersist asks for a NIC setting to be persisted only: the running
// value already is value (nic-persisted), nothing sets it at boot or
// something sets another. A runtime request for the same target covers it.
func (p *planner) addNICPersist(rule, ifc, setting, value string) {
	nic := p.findNIC(ifc)
	if nic == nil {
		p.warn("%s: interface %s is not in the gathered facts: %s %s not persisted", rule, ifc, ifc, setting)
		return
	}
	target := ifc + " " + setting
	switch setting {
	case "rx", "tx":
		if nic.Ring == nil {
			p.warn("%s: %s ring sizes are unavailable: %s not persisted", rule, ifc, target)
			return
		}
		if cur, _ := ring(nic.Ring, setting); strconv.Itoa(cur) != value {
			p.warn("%s: %s runs %d, not %s: not persisted", rule, target, cur, value)
			return
		}
	default:
		ft, ok := nic.Features[setting]
		if !ok || onOff(ft.On) != value {
			p.warn("%s: %s is not %s now: not persisted", rule, target, value)
			return
		}
	}
	if r, ok := p.nic[target]; ok {
		r.rules = appendRule(r.rules, rule)
		return
	}
	p.nic[target] = &request{to: value, rules: []string{rule}, persistOnly: true}
}

// finish turns the requests into sorted changes and adds the cross-checks.
func (p *planner) finish(plan *HostPlan) {
	changes := p.sysctlChanges()
	changes = append(changes, p.propertyChanges()...)
	changes = append(changes, p.nicChanges()...)
	changes = append(changes, p.dropIns...)
	sort.SliceStable(changes, func(i, j int) bool {
		if changes[i].Kind != changes[j].Kind {
			return changes[i].Kind < changes[j].Kind
		}
		return changes[i].Target < changes[j].Target
	})
	if changes != nil {
		plan.Changes = changes
	}
	sort.SliceStable(p.infeasible, func(i, j int) bool {
		if p.infeasible[i].Kind != p.infeasible[j].Kind {
			return p.infeasible[i].Kind < p.infeasible[j].Kind
		}
		return p.infeasible[i].Target < p.infeasible[j].Target
	})
	plan.Infeasible = p.infeasible
	plan.Conflicts = p.conflicts()
	p.checkSELinux(plan.Changes)

	if len(p.upgrades) > 0 && !p.upgradeText {
		p.addManual(strings.Join(p.upgrades, ","), fmt.Sprintf("upgrade Kafka to ≥ 3.2 (Confluent Platform ≥ 7.2): %s runs %s, where the listen backlog is fixed at %d (KIP-764)",
			p.host, kafkaName(p.f.Kafka), rules.DefaultListenBacklog))
	}
	if p.syncookiesOff {
		p.checkBacklog(changes)
	}
	plan.Manual = mergeManual(p.manual)
	plan.Warnings = p.warnings
}

const pulledNote = "included because tcp_syncookies=0 drops SYNs once the listen backlog is full"

// sysctlChanges are the sysctl requests that change the running value or
// the managed file, and a warning for each file that would override it.
func (p *planner) sysctlChanges() []Change {
	f := p.f
	var changes []Change
	persistSet := map[string]string{}
	for _, key := range sortedKeys(p.sysctl) {
		r := p.sysctl[key]
		if r.conflict != "" {
			continue // listed in Conflicts
		}
		from := sysctld.Fold(f.Sysctl[key])
		runtime := from != r.to
		pv, persisted := f.Persisted[key]
		persist := !persisted || sysctld.Fold(pv.Value) != r.to
		if !runtime && !persist {
			continue
		}
		c := Change{
			Host: p.host, Rule: strings.Join(r.rules, ","), Kind: KindSysctl, Target: key,
			From: from, To: r.to, Runtime: runtime, Persist: persist,
		}
		if persist {
			c.PersistPath = sysctld.ManagedPath
		}
		var notes []string
		if !runtime && persisted {
			notes = append(notes, fmt.Sprintf("already %s now, but %s line %d sets %s for the next boot", from, pv.File, pv.Line, pv.Value))
		}
		if r.pulled {
			notes = append(notes, pulledNote)
		}
		c.Note = strings.Join(append(notes, p.sysctlNotes(&c)...), "\n")
		if c = p.keep(c); c.Kind == "" {
			continue // the host does not allow it: listed in Infeasible
		}
		if c.Persist {
			persistSet[key] = r.to
		}
		changes = append(changes, c)
	}
	for _, o := range sysctld.Overriders(f.Persisted, persistSet, sysctld.ManagedPath) {
		p.warn("%s: %s line %d sets %s and wins over %s at boot, so the change would revert on reboot: remove or change that line (kaudit edits only its own file)",
			o.Key, o.File, o.Line, o.Value, sysctld.ManagedPath)
	}
	return changes
}

// sysctlNotes are the trade-offs of the two sysctls that need them; a
// runtime somaxconn change needs a broker restart to reach its listener.
func (p *planner) sysctlNotes(c *Change) []string {
	switch c.Target {
	case keySyncookies:
		notes := []string{SyncookiesTradeOff}
		if p.kernelStatus == string(rules.Unknown) {
			notes = append(notes, "planned because the kernel could not be settled as fixed")
		}
		return notes
	}
	if rules.ReachesBrokerOnRestart(c.Target) && p.f.Kafka != nil && c.Runtime {
		c.RestartRequired = true
		return []string{somaxconnRestartNote}
	}
	return nil
}

// propertyChanges are the server.properties edits, and a warning when the
// planned listen backlog would be capped by somaxconn.
func (p *planner) propertyChanges() []Change {
	var changes []Change
	for _, key := range sortedKeys(p.prop) {
		r := p.prop[key]
		if r.conflict != "" {
			continue // listed in Conflicts
		}
		from := p.f.Kafka.Properties[key]
		if strings.TrimSpace(from) == r.to {
			continue
		}
		c := Change{
			Host: p.host, Rule: strings.Join(r.rules, ","), Kind: KindKafkaProperty, Target: key,
			From: from, To: r.to, Persist: true, PersistPath: p.f.Kafka.Config, RestartRequired: true,
			Note: "read by the broker at start: restart it when convenient (kaudit never restarts it)",
		}
		if r.pulled {
			c.Note = pulledNote + "\n" + c.Note
		}
		if key == propBacklog {
			if n, err := strconv.Atoi(r.to); err == nil {
				if s, ok := p.somaxconnAfter(); ok && rules.EffectiveBacklog(n, s) < n {
					p.warn("%s=%d will be capped at net.core.somaxconn=%d (effective backlog = min of the two)", propBacklog, n, s)
				}
			}
		}
		if c = p.keep(c); c.Kind != "" {
			changes = append(changes, c)
		}
	}
	return changes
}

// nicChanges are the ring and offload requests, each with where its
// interface's settings are persisted.
func (p *planner) nicChanges() []Change {
	perIface := map[string]map[string]string{} // iface → setting → value
	for _, target := range sortedKeys(p.nic) {
		ifc, setting, _ := strings.Cut(target, " ")
		if perIface[ifc] == nil {
			perIface[ifc] = map[string]string{}
		}
		perIface[ifc][setting] = p.nic[target].to
	}
	persistBy := map[string]nicPersistence{}
	for _, ifc := range sortedKeys(perIface) {
		if nic := p.findNIC(ifc); nic != nil {
			persistBy[ifc] = p.nicPersistence(*nic, perIface[ifc])
		}
	}
	var changes []Change
	for _, target := range sortedKeys(p.nic) {
		ifc, _, _ := strings.Cut(target, " ")
		var nic facts.NIC
		if n := p.findNIC(ifc); n != nil {
			nic = *n
		}
		if c := p.keep(p.nicChange(target, nic, persistBy[ifc])); c.Kind != "" {
			changes = append(changes, c)
		}
	}
	return changes
}

func (p *planner) nicChange(target string, nic facts.NIC, np nicPersistence) Change {
	r := p.nic[target]
	_, setting, _ := strings.Cut(target, " ")
	c := Change{
		Host: p.host, Rule: strings.Join(r.rules, ","), Target: target, To: r.to,
		Runtime: !r.persistOnly, Persist: true, PersistPath: np.path, PersistMatch: np.match,
	}
	switch setting {
	case "rx", "tx":
		c.Kind = KindNICRing
		cur, top := ring(nic.Ring, setting)
		if cur >= 0 {
			c.From = strconv.Itoa(cur)
		}
		c.Note = "changing ring sizes resets the NIC on many drivers (a brief link drop)"
		if r.to == strconv.Itoa(top) {
			c.Note += fmt.Sprintf("\n%d is the NIC's pre-set maximum", top)
		}
	default:
		c.Kind = KindNICOffload
		c.From = onOff(nic.Features[setting].On)
	}
	if r.persistOnly {
		// Nothing changes on the running NIC: no link reset either.
		c.Note = fmt.Sprintf("already %s now, but not what the host sets at boot: persisted only (the running NIC is not touched)", r.to)
	}
	if np.note != "" {
		c.Note = strings.TrimPrefix(c.Note+"\n"+np.note, "\n")
	}
	return c
}

// ring is the current size and pre-set maximum of the rx or tx ring.
func ring(r *facts.Ring, setting string) (cur, top int) {
	if setting == "tx" {
		return r.TX, r.TXMax
	}
	return r.RX, r.RXMax
}

// findNIC is the last gathered interface named ifc, nil when none is.
func (p *planner) findNIC(ifc string) *facts.NIC {
	var nic *facts.NIC
	for i := range p.f.NICs {
		if p.f.NICs[i].Name == ifc {
			nic = &p.f.NICs[i]
		}
	}
	return nic
}

// mergeManual folds identical actions asked by several rules into one
// entry (rules joined with ","), sorted by rule then action.
func mergeManual(ms []Manual) []Manual {
	var out []Manual
	idx := map[string]int{}
	for _, m := range ms {
		if i, ok := idx[m.Action]; ok {
			out[i].Rule = strings.Join(appendRule(strings.Split(out[i].Rule, ","), m.Rule), ",")
			continue
		}
		idx[m.Action] = len(out)
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Rule != out[j].Rule {
			return out[i].Rule < out[j].Rule
		}
		return out[i].Action < out[j].Action
	})
	return out
}

// checkBacklog warns when tcp_syncookies=0 is planned and the effective
// listen backlog of the broker would not grow.
func (p *planner) checkBacklog(changes []Change) {
	if fd, ok := p.byRule[ruleListenEffective]; ok && fd.Status == rules.Pass {
		return // already large enough for the profile
	}
	before, okBefore := p.effectiveBacklogNow()
	after, okAfter := p.effectiveBacklogAfter()
	if okBefore && okAfter && after > before {
		return
	}
	var why string
	switch {
	case p.f.Kafka != nil && backlogFixed(p.f.Kafka):
		why = fmt.Sprintf("%s fixes the listen backlog at %d (KIP-764): upgrade to Kafka ≥ 3.2 / Confluent Platform ≥ 7.2 and raise socket.listen.backlog.size and net.core.somaxconn",
			kafkaName(p.f.Kafka), rules.DefaultListenBacklog)
	case !okAfter:
		why = "kaudit cannot tell the broker's listen backlog (Kafka version or net.core.somaxconn unknown): check it with `ss -ltn` (Send-Q) and raise socket.listen.backlog.size and net.core.somaxconn"
	default:
		why = "raise socket.listen.backlog.size and net.core.somaxconn"
	}
	if okAfter {
		p.warn("tcp_syncookies=0 is planned but the broker's listen backlog stays at %d: beyond %d pending connections SYNs are dropped and clients wait ~1 s to retry; %s", after, after, why)
	} else {
		p.warn("tcp_syncookies=0 is planned but no larger listen backlog could be planned: %s", why)
	}
}

// effectiveBacklogNow is the Kafka listener's Send-Q when observed, else
// min(Kafka backlog, somaxconn) from the facts.
func (p *planner) effectiveBacklogNow() (int, bool) {
	best := -1
	for _, l := range p.f.Listeners {
		if l.Port == p.f.KafkaPort && l.Backlog > best {
			best = l.Backlog
		}
	}
	if best >= 0 {
		return best, true
	}
	kb, ok1 := p.kafkaBacklog(false)
	s, ok2 := atoi(p.f.Sysctl[keySomaxconn])
	if !ok1 || !ok2 {
		return 0, false
	}
	return rules.EffectiveBacklog(kb, s), true
}

func (p *planner) effectiveBacklogAfter() (int, bool) {
	kb, ok1 := p.kafkaBacklog(true)
	s, ok2 := p.somaxconnAfter()
	if !ok1 || !ok2 {
		return 0, false
	}
	return rules.EffectiveBacklog(kb, s), true
}

// kafkaBacklog is the backlog the broker asks for (now, or after the plan).
func (p *planner) kafkaBacklog(after bool) (int, bool) {
	k := p.f.Kafka
	if r, planned := p.prop[propBacklog]; after && planned && k != nil && !p.cannot(KindKafkaProperty, propBacklog) {
		if a, _ := rules.BacklogConfigurable(k); a == rules.AnswerYes {
			return atoi(r.to)
		}
	}
	return rules.RequestedBacklog(k)
}

func (p *planner) somaxconnAfter() (int, bool) {
	if r, ok := p.sysctl[keySomaxconn]; ok && r.conflict == "" && !p.cannot(KindSysctl, keySomaxconn) {
		return atoi(r.to)
	}
	return atoi(p.f.Sysctl[keySomaxconn])
}

// backlogFixed reports whether the broker is known to ignore
// socket.listen.backlog.size.
func backlogFixed(k *facts.Kafka) bool {
	a, _ := rules.BacklogConfigurable(k)
	return a == rules.AnswerNo
}

func kafkaName(k *facts.Kafka) string {
	switch k.Distribution {
	case "confluent":
		return "Confluent Platform " + k.Version
	case "apache":
		return "Apache Kafka " + k.Version
	}
	return "Kafka " + k.Version
}

func appendRule(rs []string, r string) []string {
	for _, x := range rs {
		if x == r {
			return rs
		}
	}
	rs = append(rs, r)
	sort.Strings(rs)
	return rs
}

func atoi(s string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	return n, err == nil
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

func driverName(n *facts.NIC) string {
	if n.Driver != "" {
		return n.Driver
	}
	return "NIC"
}

// PersistedSysctls returns the sysctl values the plan writes to the
// managed file (the set argument of sysctld.Render).
func (p HostPlan) PersistedSysctls() map[string]string {
	out := map[string]string{}
	for _, c := range p.Changes {
		if c.Kind == KindSysctl && c.Persist {
			out[c.Target] = c.To
		}
	}
	return out
}

// KafkaProperties returns the server.properties edits of the plan, by
// file (normally one), as props.Set takes them.
func (p HostPlan) KafkaProperties() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, c := range p.Changes {
		if c.Kind == KindKafkaProperty {
			if out[c.PersistPath] == nil {
				out[c.PersistPath] = map[string]string{}
			}
			out[c.PersistPath][c.Target] = c.To
		}
	}
	return out
}

// nicPersistence is where one interface's settings are persisted.
type nicPersistence struct {
	path  string // Change.PersistPath
	match string // Change.PersistMatch (systemd .link)
	note  string // added to each change's note
}

var (
	rePersistFile = regexp.MustCompile(`^/[A-Za-z0-9_./+@,=-]*$`)
	reLinkIface   = regexp.MustCompile(`^[A-Za-z0-9_.:@-]{1,15}$`)
)

// linkKeys are the systemd.link [Link] keys of the settings kaudit changes.
var linkKeys = map[string]string{
	"rx": "RxBufferSize", "tx": "TxBufferSize",
	"gro": "GenericReceiveOffload", "gso": "GenericSegmentationOffload",
	"tso": "TCPSegmentationOffload", "lro": "LargeReceiveOffload",
}

// nicPersistence picks how the settings of one interface are persisted,
// from facts.NIC.Persist: a NetworkManager connection (nmPersistence), an
// ifcfg file's ETHTOOL_OPTS, post-up lines in an ifupdown stanza, a
// systemd .link file of kaudit's own (LinkPath, matched by MAC address
// and driver), else the udev rule NICPersistPath.
// Where the host's mechanism cannot be used safely (NetworkManager too old
// for a setting or its connection UUID unknown; a .link file of the
// host's that already matches the interface and would win; a legacy
// ETHTOOL_OPTS), it falls back to the udev rule and adds a manual action
// saying how to persist in the host's own mechanism instead.
func (p *planner) nicPersistence(nic facts.NIC, set map[string]string) nicPersistence {
	udev := nicPersistence{path: NICPersistPath}
	ps := nic.Persist
	if ps == nil {
		return udev
	}
	switch ps.Mechanism {
	case facts.PersistNetworkManager:
		if np, ok := nmPersistence(nic, set); ok {
			return np
		}
		return p.nmFallback(nic, set)
	case facts.PersistIfcfg:
		if !p.editable(nic, ps.File) {
			return udev
		}
		if o := strings.TrimSpace(ps.EthtoolOpts); o != "" && !strings.HasPrefix(o, "-") {
			p.addManual(p.nicRules(nic.Name), fmt.Sprintf("%s line %d sets ETHTOOL_OPTS in the legacy form (%q, options for ethtool -s): kaudit persisted %s's settings in %s; to keep them in %s, rewrite it as \"-s %s %s; -G %s ...; -K %s ...\"",
				ps.File, ps.Line, o, nic.Name, NICPersistPath, ps.File, nic.Name, o, nic.Name, nic.Name))
			return udev
		}
		return nicPersistence{path: ps.File, note: fmt.Sprintf("persisted in ETHTOOL_OPTS of %s (other lines kept byte for byte): applied at the interface's next ifup", ps.File)}
	case facts.PersistIfupdown:
		if !p.editable(nic, ps.File) {
			return udev
		}
		return nicPersistence{path: ps.File, note: fmt.Sprintf("persisted as post-up lines in the \"iface %s\" stanza of %s (line %d; other lines kept byte for byte): applied at the interface's next ifup", nic.Name, ps.File, ps.Line)}
	case facts.PersistSystemdLink:
		return p.linkPersistence(nic, set)
	}
	return udev
}

// editable reports whether kaudit may edit file for nic, with a warning
// when it may not.
func (p *planner) editable(nic facts.NIC, file string) bool {
	if rePersistFile.MatchString(file) {
		return true
	}
	p.warn("%s: %s cannot be edited by kaudit (unusual characters in its path): persisting in %s", nic.Name, file, NICPersistPath)
	return false
}

// nmFallback persists a NetworkManager interface with the udev rule and
// says how to keep the settings in NetworkManager instead.
func (p *planner) nmFallback(nic facts.NIC, set map[string]string) nicPersistence {
	ps := nic.Persist
	var args []string
	rings := false
	for _, s := range sortedKeys(set) {
		switch s {
		case "rx", "tx":
			rings = true
			args = append(args, "ethtool.ring-"+s+" "+set[s])
		default:
			args = append(args, "ethtool.feature-"+s+" "+set[s])
		}
	}
	action := fmt.Sprintf("%s is managed by NetworkManager (connection %q): kaudit persisted its settings in %s; to keep them in NetworkManager instead run `nmcli connection modify %s %s`, then remove %s's lines from %s",
		nic.Name, ps.Connection, NICPersistPath, remote.QuoteWord(ps.Connection), strings.Join(args, " "), nic.Name, NICPersistPath)
	if rings && !versionAtLeast(ps.NMVersion, 1, 26) {
		action = fmt.Sprintf("%s is managed by NetworkManager %s (connection %q): kaudit persisted its settings in %s (NetworkManager takes ring sizes only from 1.26 on)",
			nic.Name, orUnknown(ps.NMVersion), ps.Connection, NICPersistPath)
	}
	p.addManual(p.nicRules(nic.Name), action)
	return nicPersistence{path: NICPersistPath,
		note: fmt.Sprintf("%s is managed by NetworkManager (connection %q): persisted with the udev rule; ethtool settings in that connection, if any, win when it is activated", nic.Name, ps.Connection)}
}

// linkPersistence persists in a systemd .link file of kaudit's own,
// unless one of the host's already matches the interface (it would win).
func (p *planner) linkPersistence(nic facts.NIC, set map[string]string) nicPersistence {
	ps := nic.Persist
	udev := nicPersistence{path: NICPersistPath}
	if ps.File != "" {
		var keys []string
		for _, s := range sortedKeys(set) {
			v := set[s]
			if v == "on" || v == "off" {
				v = map[string]string{"on": "true", "off": "false"}[v]
			}
			keys = append(keys, linkKeys[s]+"="+v)
		}
		p.addManual(p.nicRules(nic.Name), fmt.Sprintf("%s already matches %s and applies before any .link kaudit could add: kaudit persisted the settings in %s; to keep them in systemd instead add %s to its [Link] section, then remove %s's lines from %s",
			ps.File, nic.Name, NICPersistPath, strings.Join(keys, " "), nic.Name, NICPersistPath))
		return udev
	}
	if ps.MAC == "" || nic.Driver == "" || !reLinkIface.MatchString(nic.Name) || strings.ContainsAny(nic.Driver, " \t\n=\"'\\") {
		return udev // a .link needs a stable match: MAC address and driver
	}
	return nicPersistence{
		path:  LinkPath(nic.Name),
		match: "MACAddress=" + ps.MAC + " Driver=" + nic.Driver,
		note:  fmt.Sprintf("persisted in %s (matched by MAC address and driver): systemd applies it when the interface next appears (reboot, or udevadm trigger); if the NIC's driver is in the initramfs, rebuild it", LinkPath(nic.Name)),
	}
}

// NMMatchPrefix starts Change.PersistMatch when a NIC setting is persisted
// in a NetworkManager connection: "nm-uuid=<connection UUID>".
const NMMatchPrefix = "nm-uuid="

var reUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// nmPersistence persists in the NetworkManager connection (nmcli
// connection modify UUID ethtool.…, the previous values journalled) when
// its UUID is known and NetworkManager takes every setting: offloads from
// 1.14, ring sizes from 1.26.
func nmPersistence(nic facts.NIC, set map[string]string) (nicPersistence, bool) {
	ps := nic.Persist
	need := 14
	var args []string
	for _, s := range sortedKeys(set) {
		prop := "ethtool.feature-" + s
		if s == "rx" || s == "tx" {
			need, prop = 26, "ethtool.ring-"+s
		}
		args = append(args, prop+" "+set[s])
	}
	if !reUUID.MatchString(ps.ConnectionUUID) || !versionAtLeast(ps.NMVersion, 1, need) {
		return nicPersistence{}, false
	}
	return nicPersistence{
		path:  fmt.Sprintf("NetworkManager connection %q", ps.Connection),
		match: NMMatchPrefix + ps.ConnectionUUID,
		note: fmt.Sprintf("persisted in NetworkManager connection %q (nmcli connection modify %s %s; the previous values are journalled for rollback): NetworkManager applies it when the connection is next activated",
			ps.Connection, ps.ConnectionUUID, strings.Join(args, " ")),
	}, true
}

// nicRules is the rules that asked for changes on an interface, joined.
func (p *planner) nicRules(ifc string) string {
	var rs []string
	for _, target := range sortedKeys(p.nic) {
		if i, _, _ := strings.Cut(target, " "); i == ifc {
			for _, r := range p.nic[target].rules {
				rs = appendRule(rs, r)
			}
		}
	}
	return strings.Join(rs, ",")
}

var reMajorMinor = regexp.MustCompile(`^(\d+)\.(\d+)`)

// versionAtLeast compares a NetworkManager version ("1.42.2-1.el9") with
// major.minor.
func versionAtLeast(v string, major, minor int) bool {
	m := reMajorMinor.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	ma, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	return ma > major || (ma == major && mi >= minor)
}

func orUnknown(s string) string {
	if s == "" {
		return "(version unknown)"
	}
	return s
}
