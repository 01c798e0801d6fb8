package rules

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/safe"
	"github.com/kaudit/kaudit/internal/words"
)

// PeerFact is one entry of a fleet rule's peers: block: a fact every
// broker of a cluster should share, the severity of a broker that differs
// from the majority, and whether brokers of different racks may differ.
type PeerFact struct {
	// Fact names what is compared (peerFacts: kernel.release, nic.mtu, …),
	// or a family with its key: "sysctl:KEY" (or "sysctl:*": every
	// gathered sysctl), "property:KEY" (a server.properties key the
	// gather reads), "file:PATH" (a /proc or /sys file, gathered because
	// the catalog names it: no Go needed).
	Fact     string   `yaml:"fact"`
	Severity Severity `yaml:"severity"`
	// WithinRack: compared only among brokers of the same broker.rack
	// (differences between racks are expected).
	WithinRack bool `yaml:"within_rack"`
	// Except: keys of a "sysctl:*" entry that are not compared (counters).
	Except []string `yaml:"except"`
}

// peerValue is one compared value of one host: its label in texts, the
// value, and how the host is aligned with its peers (a sysctl or a
// server.properties key; neither: by hand).
type peerValue struct {
	label, value    string
	sysctl, propKey string
}

// peerFacts are the compared facts without a key, each read off a host's
// facts; ok false when the host does not have it (unknown, not different).
var peerFacts = map[string]func(f *facts.Facts) []peerValue{
	"kernel.release": func(f *facts.Facts) []peerValue { return one("kernel release", f.Kernel.Release) },
	"nic.mtu": func(f *facts.Facts) []peerValue {
		if n := firstNIC(f); n != nil && n.MTU > 0 {
			return one("MTU of the listener NIC", strconv.Itoa(n.MTU))
		}
		return nil
	},
	"nic.ring": func(f *facts.Facts) []peerValue {
		n := firstNIC(f)
		if n == nil || n.Ring == nil {
			return nil
		}
		return []peerValue{{label: "rx ring of the listener NIC", value: strconv.Itoa(n.Ring.RX)}, {label: "tx ring of the listener NIC", value: strconv.Itoa(n.Ring.TX)}}
	},
	"nic.offload": func(f *facts.Facts) []peerValue {
		n := firstNIC(f)
		if n == nil || n.Features == nil {
			return nil
		}
		var out []peerValue
		for _, k := range []string{"tso", "gso", "gro", "lro"} {
			if ft, ok := n.Features[k]; ok {
				out = append(out, peerValue{label: k + " of the listener NIC", value: words.OnOff(ft.On)})
			}
		}
		return out
	},
	"jvm.version": func(f *facts.Facts) []peerValue {
		if p := process(f); p != nil {
			return one("JVM version", p.JavaVersion)
		}
		return nil
	},
	"jvm.heap": func(f *facts.Facts) []peerValue {
		p := process(f)
		if p == nil || p.Unread["cmdline"] != "" {
			return nil
		}
		return []peerValue{{label: "JVM -Xms", value: heapText(p.Xms)}, {label: "JVM -Xmx", value: heapText(p.Xmx)}}
	},
	"broker.nofile": func(f *facts.Facts) []peerValue {
		if p := process(f); p != nil && p.NoFile != nil {
			return one("broker open-files limit (soft)", limitText(p.NoFile.Soft))
		}
		return nil
	},
	"broker.cgroup_memory": cgroupPeerValues, // storage.go
	"log_dirs.devices":     devicePeerValues,
	"kafka.log_dirs": func(f *facts.Facts) []peerValue {
		if f.Kafka != nil && f.Kafka.LogDirs != nil {
			return one("number of log dirs", strconv.Itoa(len(f.Kafka.LogDirs)))
		}
		return nil
	},
}

// peerFamilies are the compared facts with a key (FAMILY:KEY).
var peerFamilies = map[string]struct {
	valid func(key string) bool
	read  func(f *facts.Facts, key string, except []string) []peerValue
}{
	"sysctl": {func(k string) bool { return k == "*" || sysctlKeyRE.MatchString(k) }, sysctlValues},
	"property": {func(k string) bool { return propertyKeyRE.MatchString(k) }, func(f *facts.Facts, k string, _ []string) []peerValue {
		if f.Kafka == nil || f.Kafka.PropertyLines == nil {
			return nil // server.properties not read: unknown, not "unset"
		}
		v, ok := f.Kafka.Properties[k]
		if !ok {
			v = "unset (Kafka's default)"
		}
		return []peerValue{{label: k, value: v, propKey: k}}
	}},
	"file": {safe.PseudoFile, func(f *facts.Facts, k string, _ []string) []peerValue {
		if v, ok := f.Files[k]; ok {
			return one(k, v)
		}
		return nil
	}},
}

var propertyKeyRE = regexp.MustCompile(`^[a-z0-9]+(\.[a-z0-9]+)+$`)

func sysctlValues(f *facts.Facts, key string, except []string) []peerValue {
	var out []peerValue
	for _, k := range sortedKeys(f.Sysctl) {
		if (key == "*" || k == key) && !slices.Contains(except, k) {
			out = append(out, peerValue{label: k, value: f.Sysctl[k], sysctl: k})
		}
	}
	return out
}

func one(label, v string) []peerValue {
	if v == "" {
		return nil
	}
	return []peerValue{{label: label, value: v}}
}

// firstNIC is the listener NIC: the first interface gathered (the
// inventory's first, else the default route's).
func firstNIC(f *facts.Facts) *facts.NIC {
	if len(f.NICs) == 0 {
		return nil
	}
	return &f.NICs[0]
}

func process(f *facts.Facts) *facts.BrokerProcess {
	if f.Kafka == nil {
		return nil
	}
	return f.Kafka.Process
}

func heapText(n int64) string {
	if n == 0 {
		return "unset"
	}
	return strconv.FormatInt(n, 10)
}

// validate checks one peers: entry.
func (p PeerFact) validate() error {
	if p.Severity.Rank() == 0 {
		return fmt.Errorf("fact %q: severity %q is not one of critical, high, medium, low, info", p.Fact, p.Severity)
	}
	fam, key, keyed := strings.Cut(p.Fact, ":")
	if !keyed {
		if _, ok := peerFacts[p.Fact]; !ok {
			return fmt.Errorf("fact %q is not one of %s, or sysctl:KEY, property:KEY, file:PATH", p.Fact, strings.Join(sortedKeys(peerFacts), ", "))
		}
	} else if f, ok := peerFamilies[fam]; !ok || !f.valid(key) {
		return fmt.Errorf("fact %q: not sysctl:KEY (or sysctl:*), property:KEY or file:PATH (a file under /proc/ or /sys/)", p.Fact)
	}
	if len(p.Except) > 0 && p.Fact != "sysctl:*" {
		return fmt.Errorf("fact %q: except is for sysctl:* only", p.Fact)
	}
	return nil
}

// values reads the entry's values off one host.
func (p PeerFact) values(f *facts.Facts) []peerValue {
	if fam, key, keyed := strings.Cut(p.Fact, ":"); keyed {
		return peerFamilies[fam].read(f, key, p.Except)
	}
	return peerFacts[p.Fact](f)
}

// peerFiles are the files the peers: entries of rules name.
func peerFiles(rules []Rule) []string {
	var out []string
	for _, r := range rules {
		for _, p := range r.Peers {
			if k, ok := strings.CutPrefix(p.Fact, "file:"); ok && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// peerSysctls are the sysctls the peers: entries of rules name by key.
func peerSysctls(rules []Rule) []string {
	var out []string
	for _, r := range rules {
		for _, p := range r.Peers {
			if k, ok := strings.CutPrefix(p.Fact, "sysctl:"); ok && k != "*" {
				out = append(out, k)
			}
		}
	}
	return out
}

// minPeers is the smallest cluster a majority is judged in: with two
// brokers, which of them differs is a coin toss.
const minPeers = 3

// peerHost is one broker as the peer comparison sees it.
type peerHost struct {
	i    int // index in the fleet
	name string
	f    *facts.Facts
}

// peerNote is what the comparison says about one host on one value.
type peerNote struct {
	sev  Severity
	text string
	fix  *peerFix // nil: no fix (no majority, or nothing to set)
	odd  bool     // the host differs from a majority that is right (else: no majority, or the majority fails a check)
}

type peerFix struct {
	sysctl, propKey, value string
}

// evalPeerConsistency compares, per peer group (FleetHost.Groups: the
// Kafka cluster the restart verdict uses, else the inventory groups),
// every peers: fact of the rule across the group's brokers.
func evalPeerConsistency(r Rule, hosts []FleetHost) []Finding {
	notes := make([][]peerNote, len(hosts))
	inGroup := make([]int, len(hosts)) // the largest group a host is compared in
	for _, g := range peerGroups(hosts) {
		for _, ph := range g.hosts {
			inGroup[ph.i] = max(inGroup[ph.i], len(g.hosts))
		}
		if len(g.hosts) < minPeers {
			continue
		}
		for _, pf := range r.Peers {
			for _, sub := range racks(g.hosts, pf.WithinRack) {
				comparePeers(g.name, sub, pf, notes)
			}
		}
	}
	out := make([]Finding, len(hosts))
	for i, h := range hosts {
		switch {
		case h.Facts == nil:
		case !isBroker(h):
			out[i] = skip("not a broker: peers are compared among a cluster's brokers")
		case inGroup[i] < minPeers:
			out[i] = skip(fmt.Sprintf("its cluster has %d audited brokers: a majority needs at least %d", inGroup[i], minPeers))
		default:
			out[i] = peerFinding(r, notes[i])
		}
	}
	return out
}

// peerGroup is one group of brokers compared with each other.
type peerGroup struct {
	name  string
	hosts []peerHost
}

func peerGroups(hosts []FleetHost) []peerGroup {
	by := map[string][]peerHost{}
	for i, h := range hosts {
		if !isBroker(h) {
			continue
		}
		for _, g := range h.Groups {
			by[g] = append(by[g], peerHost{i: i, name: h.Name, f: h.Facts})
		}
	}
	out := make([]peerGroup, 0, len(by))
	for _, n := range sortedKeys(by) {
		out = append(out, peerGroup{name: n, hosts: by[n]})
	}
	return out
}

// racks splits a group by broker.rack when the fact is compared within a
// rack only; a broker whose rack is not known stays with those of no rack.
func racks(hs []peerHost, within bool) [][]peerHost {
	if !within {
		return [][]peerHost{hs}
	}
	by := map[string][]peerHost{}
	for _, h := range hs {
		rack := ""
		if h.f.Kafka != nil {
			rack = h.f.Kafka.Properties["broker.rack"]
		}
		by[rack] = append(by[rack], h)
	}
	out := [][]peerHost{}
	for _, k := range sortedKeys(by) {
		out = append(out, by[k])
	}
	return out
}

// comparePeers judges one peers: entry in one group: per label, the
// hosts with a value (a host without one is not counted), a strict
// majority's value, and each host that differs from it; no majority
// (a tie, every value different) is said as such on every host.
func comparePeers(group string, hs []peerHost, pf PeerFact, notes [][]peerNote) {
	// Each host's values are read once and kept per label as the host's
	// index and the value (24 bytes a value; the label and how it is
	// set, the same for every host, once a label): 10,000 brokers ×
	// every sysctl was 52 MB as copies of host and value, 58 MB as each
	// host's peerValues.
	type seen struct {
		h     int32
		value string
	}
	by := map[string][]seen{}
	how := map[string]peerValue{} // label -> its sysctl or property key
	for hi, h := range hs {
		for _, v := range pf.values(h.f) {
			if _, ok := how[v.label]; !ok {
				how[v.label] = peerValue{sysctl: v.sysctl, propKey: v.propKey}
			}
			by[v.label] = append(by[v.label], seen{int32(hi), v.value})
		}
	}
	for _, label := range sortedKeys(by) {
		refs := by[label]
		if len(refs) < minPeers {
			continue
		}
		count := map[string]int{}
		for _, r := range refs {
			count[r.value]++
		}
		if len(count) == 1 {
			continue
		}
		top, n := majority(count)
		if n*2 > len(refs) {
			set := how[label]
			for _, r := range refs {
				h := hs[r.h]
				if r.value == top {
					continue
				}
				text := fmt.Sprintf("%s %s on %s; %d of %d brokers of %s have %s", label, r.value, h.name, n, len(refs), group, top)
				if set.sysctl != "" && !meetsChecks(set.sysctl, top) && meetsChecks(set.sysctl, r.value) {
					// The host is right and its peers fail a threshold rule
					// there: the peers are to align, not this host.
					notes[h.i] = append(notes[h.i], peerNote{sev: pf.Severity, text: text + " (which fails kaudit's own check: align the peers instead)"})
					continue
				}
				notes[h.i] = append(notes[h.i], peerNote{sev: pf.Severity, odd: true, text: text,
					fix: &peerFix{sysctl: set.sysctl, propKey: set.propKey, value: top}})
			}
			continue
		}
		text := fmt.Sprintf("%s: no majority among the %d brokers of %s (%s)", label, len(refs), group, valueCounts(count))
		for _, r := range refs {
			notes[hs[r.h].i] = append(notes[hs[r.h].i], peerNote{sev: pf.Severity, text: text})
		}
	}
}

// maxValuesShown bounds the values a no-majority text lists.
const maxValuesShown = 5

// valueCounts says each value with how many brokers hold it, most held
// first ("8192 on 2, 4096 on 2"), at most maxValuesShown of them.
func valueCounts(count map[string]int) string {
	vals := sortedKeys(count)
	sort.SliceStable(vals, func(i, j int) bool { return count[vals[i]] > count[vals[j]] })
	var parts []string
	for i, v := range vals {
		if i == maxValuesShown {
			parts = append(parts, fmt.Sprintf("%d more values", len(vals)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s on %d", v, count[v]))
	}
	return strings.Join(parts, ", ")
}

// majority is the most frequent value and its count (the smallest value
// on a tie, so the text does not change between runs).
func majority(count map[string]int) (string, int) {
	best, n := "", 0
	for _, v := range sortedKeys(count) {
		if count[v] > n {
			best, n = v, count[v]
		}
	}
	return best, n
}

// peerFinding is one host's verdict: fail when it differs from a
// majority (the highest severity of what differs), warn when a fact has
// no majority in its group, else pass.
func peerFinding(r Rule, notes []peerNote) Finding {
	fd := Finding{Expected: "every compared fact equal to the value most of the cluster's brokers have"}
	var odd, none []string
	sev := Severity("")
	fix := &Fix{}
	for _, n := range notes {
		if !n.odd {
			none = append(none, n.text)
			continue
		}
		odd = append(odd, n.text)
		if n.sev.Rank() > sev.Rank() {
			sev = n.sev
		}
		addPeerFix(fix, n.fix)
	}
	fd.Evidence = append(append([]string(nil), odd...), none...)
	switch {
	case len(odd) > 0:
		fd.Status, fd.Severity = Fail, sev
		fd.Observed = fmt.Sprintf("%d values differ from the majority", len(odd))
		fd.Reason = odd[0]
		if len(odd) > 1 {
			fd.Reason += fmt.Sprintf(" (and %d more in the evidence)", len(odd)-1)
		}
		fd.Reason += ": one broker unlike the others is the classic cause of a cluster that misbehaves on one node"
		fd.Fix = finishPeerFix(fix, r)
	case len(none) > 0:
		fd.Status = Warn
		fd.Observed = fmt.Sprintf("%d values without a majority", len(none))
		fd.Reason = none[0]
		if len(none) > 1 {
			fd.Reason += fmt.Sprintf(" (and %d more in the evidence)", len(none)-1)
		}
		fd.Reason += ": this broker is not the one to change (no majority, or the majority fails a threshold rule); align the brokers on one value"
	default:
		fd.Status = Pass
		fd.Reason = fmt.Sprintf("every compared fact (%d entries of the catalog's peers list) is the same as on the cluster's other brokers", len(r.Peers))
	}
	return fd
}

// addPeerFix adds one "align with peers" change: a sysctl whose peers'
// value meets every catalog check of it (never lower a host to peers that
// fail a threshold), or a server.properties key (a broker restart).
func addPeerFix(fix *Fix, p *peerFix) {
	switch {
	case p == nil:
	case p.sysctl != "" && meetsChecks(p.sysctl, p.value):
		if fix.Sysctl == nil {
			fix.Sysctl, fix.Bounds = map[string]string{}, map[string]Bound{}
		}
		fix.Sysctl[p.sysctl] = p.value
		fix.Bounds[p.sysctl] = Bound{Dir: Exactly}
	case p.propKey != "" && !strings.HasPrefix(p.value, "unset"):
		if fix.KafkaProperties == nil {
			fix.KafkaProperties = map[string]string{}
		}
		fix.KafkaProperties[p.propKey] = p.value
		fix.Restart = true
	}
}

func finishPeerFix(fix *Fix, r Rule) *Fix {
	var set []string
	for _, k := range sortedKeys(fix.Sysctl) {
		set = append(set, k+"="+fix.Sysctl[k])
	}
	for _, k := range sortedKeys(fix.KafkaProperties) {
		set = append(set, k+"="+fix.KafkaProperties[k]+" in server.properties")
	}
	if len(set) == 0 {
		return &Fix{Summary: "align with peers by hand", Manual: strings.TrimSpace(r.Fix)}
	}
	fix.Summary = "align with peers: " + strings.Join(set, ", ")
	if fix.Restart {
		fix.Summary += " (broker restart)"
	}
	return fix
}

// shippedChecks are the shipped catalog's check items and the default
// profile, made once: meetsChecks runs for every value a broker holds
// unlike its peers (10,000 brokers made 67 MB of copies of them).
var shippedChecks = sync.OnceValues(func() ([]SysctlCheck, Profile) { return shipped.checked(), DefaultProfile() })

// meetsChecks says whether value passes every catalog check of the sysctl
// key under the default profile.
func meetsChecks(key, value string) bool {
	checks, p := shippedChecks()
	for _, c := range checks {
		if c.Key != key {
			continue
		}
		if ok, err := c.ok(value, p); err != nil || !ok {
			return false
		}
	}
	return true
}
