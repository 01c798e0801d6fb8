package rules

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// shippedFS holds every rule data file; TestShippedYAML loads each one strictly.
//
//go:embed *.yaml
var shippedFS embed.FS

// Names of the shipped data files.
const (
	catalogFile   = "catalog.yaml"
	profileFile   = "profile.default.yaml"
	kernelsFile   = "kernels.yaml"
	confluentFile = "confluent.yaml"
)

// decodeStrict decodes exactly one YAML document into out, rejecting unknown
// fields. name is used in error messages.
func decodeStrict(name string, data []byte, out any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(out); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: empty document", name)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: more than one YAML document", name)
	}
	return nil
}

func mustRead(name string) []byte {
	b, err := shippedFS.ReadFile(name)
	if err != nil {
		panic("rules: embedded " + name + ": " + err.Error())
	}
	return b
}

// ---- catalog.yaml ----

// Reference is a source a rule rests on (talk, commit, KIP, documentation).
type Reference struct {
	Title string `yaml:"title" json:"title"`
	URL   string `yaml:"url" json:"url"`
}

// Rule is one catalog entry: what the rule checks and why, without the check
// itself (the evaluator, a Go function keyed by ID).
type Rule struct {
	ID         string      `yaml:"id" json:"id"`
	Title      string      `yaml:"title" json:"title"`
	Severity   Severity    `yaml:"severity" json:"severity"` // default severity; a finding may raise or lower it
	Rationale  string      `yaml:"rationale" json:"rationale"`
	References []Reference `yaml:"references" json:"references"`
	Thresholds []string    `yaml:"thresholds" json:"thresholds"` // profile keys the rule compares against
	Fix        string      `yaml:"fix" json:"fix"`
	// RestartGate: the rule must pass (or not apply) on every host of a
	// cluster for a rolling restart to be called safe (RestartGateRules).
	RestartGate bool `yaml:"restart_gate" json:"restart_gate,omitempty"`
	// Scope is ScopeFleet for a rule judged over the whole fleet's facts
	// (EvaluateFleet), "" for one judged on each host alone (Evaluate).
	Scope Scope `yaml:"scope" json:"scope,omitempty"`
	// Clients: the rule is also checked on client hosts (Facts.Role
	// client); every other rule is skip there.
	Clients bool `yaml:"clients" json:"clients,omitempty"`
	// Check: the rule's sysctl thresholds as data (check.go); a rule with
	// a check and no Go evaluator is judged by evalChecks alone.
	Check *Check `yaml:"check" json:"-"`
	// Peers: the facts a fleet rule compares across a cluster's brokers
	// (peers.go), each with its severity; data, no Go per fact.
	Peers []PeerFact `yaml:"peers" json:"peers,omitempty"`
}

// Scope is where a rule is judged (Rule.Scope): ScopeFleet, or "" for
// each host alone.
type Scope string

// ScopeFleet marks a rule evaluated over the fleet (Rule.Scope).
const ScopeFleet Scope = "fleet"

// ScopeCluster marks a rule about the Kafka cluster as a whole, judged by
// asking the cluster (scan --bootstrap: discover.Map, and
// BrokerVersionMismatch) rather than on any host: its findings are the
// report's Cluster.Problems, never a host's.
const ScopeCluster = "cluster"

type catalogDoc struct {
	Rules []Rule `yaml:"rules"`
}

// declareTarget declares the profile key of a validated check item (dyn:
// one the catalog adds) and lists it among the rule's thresholds.
func declareTarget(keys *keyTable, r *Rule, item string, t Target, kind keyKind, dyn bool, err error) error {
	if err != nil {
		return err
	}
	if dyn {
		if prev, ok := keys.all[t.Profile]; ok && prev.kind != kind {
			return fmt.Errorf("%s: profile key %q is %s elsewhere, %s needs %s", item, t.Profile, prev.kind, t.Op, kind)
		}
		keys.declare(t.Profile, kind)
	}
	if t.Profile != "" && !slices.Contains(r.Thresholds, t.Profile) {
		r.Thresholds = append(r.Thresholds, t.Profile)
	}
	return nil
}

// parseCatalog reads a catalog and declares in keys the profile keys its
// checks name that are not static.
func parseCatalog(name string, data []byte, keys *keyTable) ([]Rule, error) {
	var doc catalogDoc
	if err := decodeStrict(name, data, &doc); err != nil {
		return nil, err
	}
	var checkKeys []string
	for i := range doc.Rules {
		r := &doc.Rules[i]
		if r.Check == nil {
			continue
		}
		where := fmt.Sprintf("%s: rule %d (%q): check", name, i+1, r.ID)
		if len(r.Check.Sysctls)+len(r.Check.Properties)+len(r.Check.Limits)+len(r.Check.Mounts) == 0 || strings.TrimSpace(r.Check.Why) == "" {
			return nil, fmt.Errorf("%s: needs sysctls, properties, limits or mounts, and why", where)
		}
		for j := range r.Check.Sysctls {
			sc := &r.Check.Sysctls[j]
			kind, dyn, err := sc.validate(keys)
			if err := declareTarget(keys, r, sc.Key, sc.Target, kind, dyn, err); err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
			if sc.Profile != "" && !slices.Contains(checkKeys, sc.Profile) {
				checkKeys = append(checkKeys, sc.Profile)
			}
		}
		for j := range r.Check.Properties {
			pc := &r.Check.Properties[j]
			kind, dyn, err := pc.validate(keys)
			if err := declareTarget(keys, r, pc.Key, pc.Target, kind, dyn, err); err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
		}
		for j := range r.Check.Mounts {
			mc := &r.Check.Mounts[j]
			kind, dyn, err := mc.validate(keys)
			if err := declareTarget(keys, r, mc.Option, mc.Target, kind, dyn, err); err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
		}
		for j := range r.Check.Limits {
			lc := &r.Check.Limits[j]
			kind, dyn, err := lc.validate(keys)
			if err := declareTarget(keys, r, string(lc.Limit), lc.Target, kind, dyn, err); err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
		}
	}
	// sysctl-persisted compares the boot value of every checked key.
	for i := range doc.Rules {
		if doc.Rules[i].ID == RuleSysctlPersisted {
			for _, k := range checkKeys {
				if !slices.Contains(doc.Rules[i].Thresholds, k) {
					doc.Rules[i].Thresholds = append(doc.Rules[i].Thresholds, k)
				}
			}
		}
	}
	if len(doc.Rules) == 0 {
		return nil, fmt.Errorf("%s: no rules", name)
	}
	seen := map[string]bool{}
	for i, r := range doc.Rules {
		where := fmt.Sprintf("%s: rule %d (%q)", name, i+1, r.ID)
		switch {
		case r.ID == "":
			return nil, fmt.Errorf("%s: missing id", where)
		case seen[r.ID]:
			return nil, fmt.Errorf("%s: duplicate id", where)
		case strings.TrimSpace(r.Title) == "":
			return nil, fmt.Errorf("%s: missing title", where)
		case r.Severity.Rank() == 0:
			return nil, fmt.Errorf("%s: severity %q is not one of critical, high, medium, low, info", where, r.Severity)
		case strings.TrimSpace(r.Rationale) == "":
			return nil, fmt.Errorf("%s: missing rationale", where)
		case len(r.References) == 0:
			return nil, fmt.Errorf("%s: no references", where)
		case strings.TrimSpace(r.Fix) == "":
			return nil, fmt.Errorf("%s: missing fix", where)
		case r.Scope != "" && r.Scope != ScopeFleet && r.Scope != ScopeCluster:
			return nil, fmt.Errorf("%s: scope %q is not %q or %q (leave it out for a per-host rule)", where, r.Scope, ScopeFleet, ScopeCluster)
		}
		seen[r.ID] = true
		if len(r.Peers) > 0 && r.Scope != ScopeFleet {
			return nil, fmt.Errorf("%s: peers: needs scope: fleet (peers are compared once every host is gathered)", where)
		}
		for _, pf := range r.Peers {
			if err := pf.validate(); err != nil {
				return nil, fmt.Errorf("%s: peers: %v", where, err)
			}
		}
		for _, ref := range r.References {
			if ref.Title == "" || !strings.HasPrefix(ref.URL, "https://") {
				return nil, fmt.Errorf("%s: reference %q needs a title and an https URL", where, ref.Title)
			}
		}
		for _, k := range r.Thresholds {
			if _, ok := keys.all[k]; !ok {
				return nil, fmt.Errorf("%s: threshold %q is not a profile key", where, k)
			}
		}
	}
	return doc.Rules, nil
}

// ---- kernels.yaml ----

type kernelSeries struct {
	Series     string `yaml:"series"`
	FirstFixed string `yaml:"first_fixed"`
}

type distroNote struct {
	Distro       string `yaml:"distro"`
	Release      string `yaml:"release"`
	KernelSeries string `yaml:"kernel_series"`
	FirstFixed   string `yaml:"first_fixed"`
	Confirmed    bool   `yaml:"confirmed"`
	Note         string `yaml:"note"`
}

type kernelTable struct {
	Commit            string         `yaml:"commit"`
	Title             string         `yaml:"title"`
	Mainline          string         `yaml:"mainline"`
	OldestFixedSeries string         `yaml:"oldest_fixed_series"`
	Stable            []kernelSeries `yaml:"stable"`
	Distros           []distroNote   `yaml:"distros"`
}

func parseKernels(name string, data []byte) (kernelTable, error) {
	var t kernelTable
	if err := decodeStrict(name, data, &t); err != nil {
		return t, err
	}
	if len(t.Commit) != 40 || t.Title == "" {
		return t, fmt.Errorf("%s: commit (40 hex digits) and title are required", name)
	}
	if _, _, ok := parseSeries(t.Mainline); !ok {
		return t, fmt.Errorf("%s: mainline %q is not X.Y", name, t.Mainline)
	}
	if _, _, ok := parseSeries(t.OldestFixedSeries); !ok {
		return t, fmt.Errorf("%s: oldest_fixed_series %q is not X.Y", name, t.OldestFixedSeries)
	}
	seen := map[string]bool{}
	for _, s := range t.Stable {
		v, err := parseKernelVersion(s.FirstFixed)
		if err != nil || seriesOf(v) != s.Series || seen[s.Series] {
			return t, fmt.Errorf("%s: stable series %q: first_fixed %q must be X.Y.Z in that series, once", name, s.Series, s.FirstFixed)
		}
		seen[s.Series] = true
	}
	for _, d := range t.Distros {
		if d.FirstFixed != "" && !seen[d.KernelSeries] {
			return t, fmt.Errorf("%s: distro %s %s: first_fixed %q needs a kernel_series with a stable first_fixed release", name, d.Distro, d.Release, d.FirstFixed)
		}
	}
	return t, nil
}

// ---- confluent.yaml ----

type cpMapping struct {
	CP        string `yaml:"cp"`
	AK        string `yaml:"ak"`
	Confirmed bool   `yaml:"confirmed"`
	// KIP764From is the first patch release of this CP minor with
	// socket.listen.backlog.size backported ("7.1.7"); "" when none.
	KIP764From string `yaml:"kip764_from"`
}

type confluentTable struct {
	Mappings []cpMapping `yaml:"mappings"`
}

// row is the mapping of a CP major.minor, nil when it is not in the table.
func (t confluentTable) row(minor string) *cpMapping {
	for i := range t.Mappings {
		if t.Mappings[i].CP == minor {
			return &t.Mappings[i]
		}
	}
	return nil
}

// backports lists the first CP release of every line with KIP-764
// backported: "CP 6.1.11+, 6.2.10+, 7.0.9+, 7.1.7+".
func (t confluentTable) backports() string {
	var out []string
	for _, m := range t.Mappings {
		if m.KIP764From != "" {
			out = append(out, m.KIP764From+"+")
		}
	}
	if len(out) == 0 {
		return "no backport"
	}
	return "CP " + strings.Join(out, ", ")
}

// backportFor is the first release of the CP line of version v that has
// KIP-764 backported, "" when that line has none (or v is no version).
func (t confluentTable) backportFor(v string) string {
	n, ok := kafkaNumber(strings.TrimSuffix(strings.TrimSpace(v), "-ccs"))
	if !ok || len(n.Segments()) < 2 {
		return ""
	}
	if row := t.row(minorOf(n)); row != nil {
		return row.KIP764From
	}
	return ""
}

func parseConfluent(name string, data []byte) (confluentTable, error) {
	var t confluentTable
	if err := decodeStrict(name, data, &t); err != nil {
		return t, err
	}
	seen := map[string]bool{}
	for i, m := range t.Mappings {
		_, _, ok1 := parseSeries(m.CP)
		_, _, ok2 := parseSeries(m.AK)
		if !ok1 || !ok2 || seen[m.CP] {
			return t, fmt.Errorf("%s: mapping %d: cp %q and ak %q must be major.minor, each cp once", name, i+1, m.CP, m.AK)
		}
		seen[m.CP] = true
		if m.KIP764From != "" {
			v, ok := kafkaNumber(m.KIP764From)
			if !ok || len(v.Segments()) < 3 || minorOf(v) != m.CP || v.String() != m.KIP764From {
				return t, fmt.Errorf("%s: mapping %d (cp %s): kip764_from %q must be a patch release X.Y.Z of that cp line", name, i+1, m.CP, m.KIP764From)
			}
		}
	}
	// Monotonic: the verdict argument in kafka-backlog-hardcoded relies on it.
	for i := 1; i < len(t.Mappings); i++ {
		a, b := t.Mappings[i-1], t.Mappings[i]
		if cmpSeries(a.CP, b.CP) >= 0 || cmpSeries(a.AK, b.AK) > 0 {
			return t, fmt.Errorf("%s: mappings must be sorted by cp with non-decreasing ak (%s=%s before %s=%s)", name, a.CP, a.AK, b.CP, b.AK)
		}
	}
	return t, nil
}

// ---- loaded once at init: a broken shipped file is a build bug ----

// Set is a catalog with its profile keys and default profile: the shipped
// one (catalog.yaml, profile.default.yaml), or one loaded by LoadSet.
type Set struct {
	rules []Rule
	keys  *keyTable
	def   Profile
}

// LoadSet reads a catalog and its default profile (which must set every
// profile key, those its checks declare included), as the shipped ones
// are read. kaudit itself uses the shipped set; a set loaded here is how a
// rule added as YAML alone is run end to end (tests).
func LoadSet(catalogName string, catalogData []byte, profileName string, profileData []byte) (*Set, error) {
	s := &Set{keys: newKeyTable()}
	var err error
	if s.rules, err = parseCatalog(catalogName, catalogData, s.keys); err != nil {
		return nil, err
	}
	if s.def, err = parseProfile(profileName, profileData, Profile{keys: s.keys}, true); err != nil {
		return nil, err
	}
	return s, nil
}

// DefaultProfile is the set's default profile.
func (s *Set) DefaultProfile() Profile { return s.def.clone() }

// Rules lists the set's rules in catalog order (copies).
func (s *Set) Rules() []Rule {
	out := make([]Rule, len(s.rules))
	for i, r := range s.rules {
		out[i] = r.clone()
	}
	return out
}

var (
	shipped   *Set
	catalog   []Rule
	kernels   kernelTable
	confluent confluentTable
	defProf   Profile
)

func init() {
	var err error
	if shipped, err = LoadSet(catalogFile, mustRead(catalogFile), profileFile, mustRead(profileFile)); err != nil {
		panic("rules: " + err.Error())
	}
	catalog, defProf = shipped.rules, shipped.def
	if kernels, err = parseKernels(kernelsFile, mustRead(kernelsFile)); err != nil {
		panic("rules: " + err.Error())
	}
	if confluent, err = parseConfluent(confluentFile, mustRead(confluentFile)); err != nil {
		panic("rules: " + err.Error())
	}
}

// Catalog returns the rules judged on hosts, in catalog (report) order. The slice is a copy.
//
// It holds the rules judged on hosts (per host or over the fleet): every
// report host has one finding per rule of it. The rules about the cluster
// as a whole are ClusterCatalog's.
func Catalog() []Rule { return catalogOf(func(r Rule) bool { return r.Scope != ScopeCluster }) }

// ClusterCatalog is the catalog's rules of scope cluster, in catalog
// order: judged by asking the cluster (discover.Map), reported in the
// report's Cluster.Problems.
func ClusterCatalog() []Rule { return catalogOf(func(r Rule) bool { return r.Scope == ScopeCluster }) }

func catalogOf(keep func(Rule) bool) []Rule {
	out := []Rule{}
	for _, r := range catalog {
		if keep(r) {
			out = append(out, r.clone())
		}
	}
	return out
}

// Lookup returns the rule with the given ID.
func Lookup(id string) (Rule, bool) {
	for _, r := range catalog {
		if r.ID == id {
			return r.clone(), true
		}
	}
	return Rule{}, false
}

func (r Rule) clone() Rule {
	r.References = append([]Reference(nil), r.References...)
	r.Thresholds = append([]string(nil), r.Thresholds...)
	if r.Check != nil {
		ck := *r.Check
		ck.Sysctls = append([]SysctlCheck(nil), ck.Sysctls...)
		ck.Properties = append([]PropertyCheck(nil), ck.Properties...)
		ck.Limits = append([]LimitCheck(nil), ck.Limits...)
		ck.Mounts = append([]MountCheck(nil), ck.Mounts...)
		r.Check = &ck
	}
	r.Peers = slices.Clone(r.Peers)
	return r
}
