package remediate

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/rules"
)

// Conflict is a target that rules ask for in incompatible directions (at
// least 10 and at most 5, or exactly two different values): nothing is
// planned for it, and the plan says so instead of picking one.
type Conflict struct {
	Host   string     `json:"host"`
	Rules  []string   `json:"rules"` // the rules asking, sorted
	Kind   ChangeKind `json:"kind"`
	Target string     `json:"target"`
	Asks   []string   `json:"asks"` // each rule's request: "swappiness: at most 1"
	Reason string     `json:"reason"`
}

// ask is one rule's request for a target: a value and its direction.
type ask struct {
	rule  string
	value string
	bound rules.Bound
}

func (a ask) String() string {
	s := fmt.Sprintf("%s: %s %s", a.rule, a.bound.Dir, a.value)
	if a.bound.Field > 0 {
		s = fmt.Sprintf("%s: field %d %s %s", a.rule, a.bound.Field, a.bound.Dir, fieldOr(a.value, a.bound.Field))
	}
	return s
}

// fieldOr is field n (1-based) of v, or v when it has fewer.
func fieldOr(v string, n int) string {
	if f := strings.Fields(v); n > 0 && n <= len(f) {
		return f[n-1]
	}
	return v
}

// limits is what the asks allow for one field (0: the whole value).
type limits struct {
	lo, hi       int64
	hasLo, hasHi bool
	exact        string
	hasExact     bool
	by           []ask
}

// resolve merges the requests for one target: the tighter bound wins
// where they are compatible (at least 10 and at least 20: 20; at least 10
// and at most 50: 10; exactly 30 and at least 10: 30); where no value
// satisfies them all it returns an error naming them. A plain numeric
// value with several fields ("4096 87380 6291456") asked at least or at
// most is bounded field by field. The value planned keeps the first
// request's other fields.
func resolve(asks []ask) (string, error) {
	base := strings.Fields(asks[0].value)
	byField := map[int]*limits{}
	get := func(f int) *limits {
		if byField[f] == nil {
			byField[f] = &limits{}
		}
		return byField[f]
	}
	for _, a := range asks {
		fields := strings.Fields(a.value)
		type part struct {
			field int
			value string
		}
		var parts []part
		switch {
		case a.bound.Field > 0:
			if a.bound.Field > len(fields) {
				return "", fmt.Errorf("%s: the value has no field %d", a, a.bound.Field)
			}
			parts = []part{{a.bound.Field, fields[a.bound.Field-1]}}
		case a.bound.Dir != rules.Exactly && len(fields) > 1:
			for i, v := range fields {
				parts = append(parts, part{i + 1, v})
			}
		default:
			parts = []part{{0, strings.Join(fields, " ")}}
		}
		for _, pt := range parts {
			l := get(pt.field)
			l.by = append(l.by, a)
			if a.bound.Dir == rules.Exactly {
				if l.hasExact && l.exact != pt.value {
					return "", incompatible(l.by)
				}
				l.exact, l.hasExact = pt.value, true
				continue
			}
			n, err := strconv.ParseInt(pt.value, 10, 64)
			if err != nil {
				return "", fmt.Errorf("%s: %q is not a number, so it cannot be %s", a, pt.value, a.bound.Dir)
			}
			if a.bound.Dir == rules.AtLeast {
				if !l.hasLo || n > l.lo {
					l.lo = n
				}
				l.hasLo = true
			} else {
				if !l.hasHi || n < l.hi {
					l.hi = n
				}
				l.hasHi = true
			}
		}
	}
	out := base
	for _, f := range slices.Sorted(maps.Keys(byField)) { // the whole value (0) first, then its fields
		l := byField[f]
		if whole := byField[0]; f > 0 && whole != nil && whole.hasExact {
			// The whole value is asked exactly: its field must already
			// satisfy this field's bounds.
			ef := fieldOr(whole.exact, f)
			if l.hasExact && l.exact != ef {
				return "", incompatible(append(whole.by, l.by...))
			}
			fixed := *l
			fixed.exact, fixed.hasExact, fixed.by = ef, true, append(append([]ask(nil), whole.by...), l.by...)
			l = &fixed
		}
		v, err := l.pick()
		if err != nil {
			return "", err
		}
		switch {
		case f == 0:
			out = strings.Fields(v)
		case f > len(out):
			return "", fmt.Errorf("%s: the value has no field %d", l.by[0], f)
		default:
			out[f-1] = v
		}
	}
	return strings.Join(out, " "), nil
}

// pick is the value that satisfies every bound: the exact one, else the
// lower bound (what an at-least rule asks for), else the upper.
func (l *limits) pick() (string, error) {
	if l.hasLo && l.hasHi && l.lo > l.hi {
		return "", incompatible(l.by)
	}
	if l.hasExact {
		if l.hasLo || l.hasHi {
			n, err := strconv.ParseInt(l.exact, 10, 64)
			if err != nil || (l.hasLo && n < l.lo) || (l.hasHi && n > l.hi) {
				return "", incompatible(l.by)
			}
		}
		return l.exact, nil
	}
	if l.hasLo {
		return strconv.FormatInt(l.lo, 10), nil
	}
	return strconv.FormatInt(l.hi, 10), nil
}

func incompatible(by []ask) error {
	parts := make([]string, len(by))
	for i, a := range by {
		parts[i] = a.String()
	}
	return fmt.Errorf("no value satisfies %s", strings.Join(parts, " and "))
}

// merge adds one rule's ask to a request and re-resolves it; a conflict
// is kept on the request (and listed in the plan), never settled by a pick.
func (r *request) merge(a ask) {
	r.asks = append(r.asks, a)
	r.rules = appendRule(r.rules, a.rule)
	to, err := resolve(r.asks)
	if err != nil {
		r.conflict = err.Error()
		return
	}
	r.to, r.conflict = to, ""
}

// conflicts lists the requests that cannot be planned, by target.
func (p *planner) conflicts() []Conflict {
	var out []Conflict
	for _, kr := range []struct {
		kind ChangeKind
		reqs map[string]*request
	}{{KindSysctl, p.sysctl}, {KindKafkaProperty, p.prop}} {
		for _, key := range sortedKeys(kr.reqs) {
			r := kr.reqs[key]
			if r.conflict == "" {
				continue
			}
			var asks []string
			for _, a := range r.asks {
				asks = append(asks, a.String())
			}
			out = append(out, Conflict{
				Host: p.host, Rules: r.rules, Kind: kr.kind, Target: key, Asks: asks,
				Reason: r.conflict + ": not planned; decide which rule wins for this host (a profile override, or a waiver of the other) and plan again",
			})
		}
	}
	return out
}
