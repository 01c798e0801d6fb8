package rules

import (
	"reflect"
	"strings"
	"sync"
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
}

// NewInterner is an empty interner.
func NewInterner() *Interner {
	return &Interner{texts: map[string]string{}, fixes: map[string][]*Fix{}}
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
