package rules

import (
	"encoding/json"
	"hash/maphash"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/kaudit/kaudit/audit/facts"
)

// Interner makes the findings of many hosts share what is equal between
// them: each distinct text (observed, expected, reason, source, evidence)
// is held once, and each distinct fix, by value, is one *Fix. Most of
// a fleet's findings repeat from host to host, and texts cut from a
// host's facts would otherwise keep that host's whole gather output
// alive. A scan that holds 10,000 hosts' findings until the report is
// written keeps a fraction of them this way. Findings that went through
// it must be treated as read-only in their Fix (which they share); their
// other fields are values, as ever. It is safe for concurrent use.
type Interner struct {
	mu    sync.Mutex
	texts map[string]string
	fixes map[string][]*Fix // by Summary
	seed  maphash.Seed
	lists map[uint64][][]Finding // List's, by listHash
	maps  fleetMaps              // FleetFacts'
}

// NewInterner is an empty interner.
func NewInterner() *Interner {
	return &Interner{texts: map[string]string{}, fixes: map[string][]*Fix{}, seed: maphash.MakeSeed(), lists: map[uint64][][]Finding{}}
}

// maxListsPerHash bounds the lists List keeps under one hash (a
// collision is rare; a bound keeps it from being a walk).
const maxListsPerHash = 4

// List is fs (gone through Findings), or an equal list that went
// through List before: hosts the rules judged alike share one backing
// array (a fleet's hosts mostly are: 10,000 simulated hosts have 9
// distinct lists before the fleet rules). Nobody may write the elements
// of a list List returned; it is clipped, so an append copies, and
// rules.ApplyFleet copies. ForgetLists lets the lists go.
func (in *Interner) List(fs []Finding) []Finding {
	if len(fs) == 0 {
		return fs
	}
	fs = slices.Clip(fs)
	in.mu.Lock()
	defer in.mu.Unlock()
	return share(&in.lists, in.listHash(fs), fs, sameFindings)
}

// share is v, or the value equal to it (eq) kept under hash h in *by
// before; v is kept there when fewer than maxListsPerHash are.
func share[T any](by *map[uint64][]T, h uint64, v T, eq func(a, b T) bool) T {
	if *by == nil {
		*by = map[uint64][]T{}
	}
	for _, g := range (*by)[h] {
		if eq(g, v) {
			return g
		}
	}
	if len((*by)[h]) < maxListsPerHash {
		(*by)[h] = append((*by)[h], v)
	}
	return v
}

// ForgetLists drops the lists List kept and the maps FleetFacts kept,
// so that they live only as long as the hosts that share them (the fleet
// pass gives every host its own copy of its findings and lets the fleet
// facts go).
func (in *Interner) ForgetLists() {
	in.mu.Lock()
	defer in.mu.Unlock()
	clear(in.lists)
	in.maps = fleetMaps{}
}

// FleetFacts is the package's FleetFacts of f with its maps (sysctls,
// files, server.properties and their lines, sections, NIC features,
// running settings; the block devices and cgroup limits) shared with the hosts' before it that have equal
// ones: a fleet configured alike holds each once (10,000 simulated
// hosts: 7 distinct sysctl sets). The maps are read-only, as all of
// FleetFacts is.
func (in *Interner) FleetFacts(f *facts.Facts) *facts.Facts {
	out := FleetFacts(f)
	if out == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	m := &in.maps
	out.Sysctl = shareMap(in.seed, &m.strs, out.Sysctl)
	out.Files = shareMap(in.seed, &m.strs, out.Files)
	out.Sections = shareMap(in.seed, &m.sections, out.Sections)
	for i := range out.NICs {
		out.NICs[i].Features = shareMap(in.seed, &m.features, out.NICs[i].Features)
	}
	if k := out.Kafka; k != nil {
		k.Properties = shareMap(in.seed, &m.strs, k.Properties)
		k.PropertyLines = shareMap(in.seed, &m.ints, k.PropertyLines)
		k.Running = shareMap(in.seed, &m.running, k.Running)
		k.Devices = sharePtr(in.seed, &m.devices, k.Devices)
		k.Cgroup = sharePtr(in.seed, &m.cgroups, k.Cgroup)
	}
	return out
}

// sharePtr is p, or a pointer shared before to an equal value
// (reflect.DeepEqual; hashed by its JSON), kept in *by as shareMap keeps
// maps. Nil stays nil.
func sharePtr[T any](seed maphash.Seed, by *map[uint64][]*T, p *T) *T {
	if p == nil {
		return nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return p
	}
	return share(by, maphash.Bytes(seed, b), p, func(a, b *T) bool { return reflect.DeepEqual(a, b) })
}

// fleetMaps are the maps FleetFacts shares, per value type, by mapHash.
type fleetMaps struct {
	strs     map[uint64][]map[string]string
	ints     map[uint64][]map[string]int
	sections map[uint64][]map[string]facts.SectionStatus
	features map[uint64][]map[string]facts.Feature
	running  map[uint64][]map[string]facts.RunningConfig
	devices  map[uint64][]*facts.BlockDevices
	cgroups  map[uint64][]*facts.CgroupMemory
}

// shareMap is m, or an equal map shared before (kept in *by, at most
// maxListsPerHash under one hash). Nil stays nil, empty stays empty.
func shareMap[V comparable](seed maphash.Seed, by *map[uint64][]map[string]V, m map[string]V) map[string]V {
	if len(m) == 0 {
		return m
	}
	type entry struct {
		k string
		v V
	}
	var h uint64
	for k, v := range m {
		h += maphash.Comparable(seed, entry{k, v}) // a sum: the map's order does not matter
	}
	return share(by, h, m, maps.Equal[map[string]V])
}

// listHash hashes what sameFindings compares.
func (in *Interner) listHash(fs []Finding) uint64 {
	var h maphash.Hash
	h.SetSeed(in.seed)
	for i := range fs {
		fd := &fs[i]
		for _, t := range [...]string{fd.Rule, fd.Title, string(fd.Status), string(fd.Severity), fd.Observed, fd.Expected, fd.Reason, string(fd.Source)} {
			h.WriteString(t)
			h.WriteByte(0)
		}
		for _, e := range fd.Evidence {
			h.WriteString(e)
			h.WriteByte(1)
		}
		maphash.WriteComparable(&h, fd.Fix)
	}
	return h.Sum64()
}

// sameFindings: every field of every finding equal, the fixes the same
// *Fix (Findings makes equal fixes one, mostly).
func sameFindings(a, b []Finding) bool {
	return slices.EqualFunc(a, b, func(x, y Finding) bool {
		return x.Rule == y.Rule && x.Title == y.Title && x.Status == y.Status && x.Severity == y.Severity &&
			x.Observed == y.Observed && x.Expected == y.Expected && x.Reason == y.Reason && x.Source == y.Source &&
			(x.Evidence == nil) == (y.Evidence == nil) && slices.Equal(x.Evidence, y.Evidence) && x.Fix == y.Fix
	})
}

// Findings rewrites fs in place to share texts and fixes with the
// findings interned before: every field keeps its value.
func (in *Interner) Findings(fs []Finding) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for i := range fs {
		fd := &fs[i]
		fd.Observed, fd.Expected = in.text(fd.Observed), in.text(fd.Expected)
		fd.Reason, fd.Source = in.text(fd.Reason), Source(in.text(string(fd.Source)))
		for j, e := range fd.Evidence {
			fd.Evidence[j] = in.text(e)
		}
		if fd.Fix != nil {
			fd.Fix = in.fix(fd.Fix)
		}
	}
}

func (in *Interner) text(s string) string {
	if s == "" {
		return ""
	}
	if t, ok := in.texts[s]; ok {
		return t
	}
	s = strings.Clone(s)
	in.texts[s] = s
	return s
}

// maxFixesPerSummary bounds the fixes kept under one Summary: a fix
// whose typed fields vary from host to host (NIC names and ring sizes)
// would otherwise make every lookup a walk over all the fleet's variants.
const maxFixesPerSummary = 16

// fix is the interned *Fix equal to f (reflect.DeepEqual: every field,
// the typed ones JSON leaves out included), or a fresh copy of f, kept
// for the next hosts while its Summary has fewer than maxFixesPerSummary.
func (in *Interner) fix(f *Fix) *Fix {
	for _, g := range in.fixes[f.Summary] {
		if reflect.DeepEqual(f, g) {
			return g
		}
	}
	c := in.cloneFix(f)
	if len(in.fixes[c.Summary]) < maxFixesPerSummary {
		in.fixes[c.Summary] = append(in.fixes[c.Summary], c)
	}
	return c
}

// cloneFix copies f with interned texts, so the one kept holds on to no
// host's gather output.
func (in *Interner) cloneFix(f *Fix) *Fix {
	c := *f
	c.Summary, c.Manual = in.text(f.Summary), in.text(f.Manual)
	c.Sysctl, c.KafkaProperties = in.textMap(f.Sysctl), in.textMap(f.KafkaProperties)
	if f.NIC != nil {
		c.NIC = make(map[string]map[string]string, len(f.NIC))
		for k, m := range f.NIC {
			c.NIC[in.text(k)] = in.textMap(m)
		}
	}
	if f.Alternatives != nil {
		c.Alternatives = make([]Alternative, len(f.Alternatives))
		for i, a := range f.Alternatives {
			a.Text, a.Sysctl, a.KafkaProperties = in.text(a.Text), in.textMap(a.Sysctl), in.textMap(a.KafkaProperties)
			c.Alternatives[i] = a
		}
	}
	return &c
}

func (in *Interner) textMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[in.text(k)] = in.text(v)
	}
	return out
}
