package rules

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/redact"
)

// Check is a catalog entry's `check:` block: sysctl thresholds judged by
// one generic evaluator (evalChecks), no Go per rule. A rule whose verdict
// needs reasoning beyond the thresholds (syn-backlog, congestion-control)
// keeps a Go evaluator that starts from the same data (c.checkSysctls).
type Check struct {
	// Why follows the failing values in the reason: why they matter.
	Why string `yaml:"why"`
	// Pass is the reason when every value meets its target; "{KEY}" is
	// replaced by the value of profile key KEY.
	Pass string `yaml:"pass"`
	// Restart, when set, marks the fix as reaching the broker only after
	// a restart; its text is appended to the fix summary.
	Restart string        `yaml:"restart"`
	Sysctls []SysctlCheck `yaml:"sysctls"`
}

// Op is a check's comparison: a closed set.
type Op string

// Operators of a check.
const (
	OpAtLeast Op = "at-least"
	OpAtMost  Op = "at-most"
	OpEqual   Op = "equal"
	OpOneOf   Op = "one-of"
)

// SysctlCheck compares one gathered sysctl (or one field of it) with a
// target: a profile key's value, or a literal value / list of values.
type SysctlCheck struct {
	Key     string   `yaml:"sysctl"`
	Op      Op       `yaml:"op"`
	Profile string   `yaml:"profile"` // profile key holding the target
	Value   string   `yaml:"value"`   // literal target (equal, at-least, at-most)
	Values  []string `yaml:"values"`  // literal targets (one-of); a fix sets the first
	// Field is the 1-based field of a multi-value sysctl it compares
	// (3: the max of net.ipv4.tcp_rmem); 0 the whole value. FieldName
	// names it in texts ("max field"), else "field N".
	Field     int    `yaml:"field"`
	FieldName string `yaml:"field_name"`
	// Notes: a value -> a note added to the pass reason when the host has it.
	Notes map[string]string `yaml:"notes"`
	Boot  BootDefault       `yaml:"boot_default"`
}

// BootDefault is the value the kernel boots with when nothing persists
// one (sysctl-persisted compares it with the target).
type BootDefault struct {
	Value string `yaml:"value"`
	Note  string `yaml:"note"` // default "kernel default"
	// Before: older kernels boot with another value (sorted by kernel).
	Before []BootBefore `yaml:"before"`
	// AtMost: the kernel boots with at most Value (lower on small-memory
	// hosts): the boot value is known only when Value itself fails.
	AtMost bool `yaml:"at_most"`
	// Unknown: the boot value depends on the host; says why.
	Unknown string `yaml:"unknown"`
}

func (b BootDefault) validate() error {
	switch {
	case b.Unknown != "" && (b.Value != "" || len(b.Before) > 0 || b.AtMost):
		return fmt.Errorf("unknown takes nothing else")
	case b.Unknown == "" && b.Value == "":
		return fmt.Errorf("give the value the kernel boots with, or unknown: why it depends on the host")
	}
	prev := ""
	for _, e := range b.Before {
		if _, _, ok := parseSeries(e.Kernel); !ok || e.Value == "" || (prev != "" && cmpSeries(prev, e.Kernel) >= 0) {
			return fmt.Errorf("before: each entry needs a kernel X.Y (in rising order) and a value")
		}
		prev = e.Kernel
	}
	return nil
}

// BootBefore is the boot default of kernels before a series.
type BootBefore struct {
	Kernel string `yaml:"kernel"`
	Value  string `yaml:"value"`
	Note   string `yaml:"note"`
}

var sysctlKeyRE = regexp.MustCompile(`^[a-z0-9_-]+(\.[a-z0-9_-]+)+$`)

// validate checks one item and returns the kind of profile key its op
// needs, and whether its profile key is one the catalog declares (dyn).
func (s *SysctlCheck) validate(keys *keyTable) (need keyKind, dyn bool, err error) {
	if !sysctlKeyRE.MatchString(s.Key) || len(s.Key) > 128 {
		return 0, false, fmt.Errorf("sysctl %q is not a dotted sysctl key", s.Key)
	}
	if s.Field < 0 || s.Field > 8 {
		return 0, false, fmt.Errorf("%s: field %d out of range 1..8", s.Key, s.Field)
	}
	if err := s.Boot.validate(); err != nil {
		return 0, false, fmt.Errorf("%s: boot_default: %v", s.Key, err)
	}
	lits := 0
	if s.Profile != "" {
		lits++
	}
	if s.Value != "" {
		lits++
	}
	if len(s.Values) > 0 {
		lits++
	}
	if lits != 1 {
		return 0, false, fmt.Errorf("%s: give exactly one of profile, value, values", s.Key)
	}
	switch s.Op {
	case OpAtLeast, OpAtMost:
		need = kindInt
		if s.Value != "" {
			if _, err := strconv.Atoi(s.Value); err != nil {
				return 0, false, fmt.Errorf("%s: %s needs an integer value, got %q", s.Key, s.Op, s.Value)
			}
		}
		if len(s.Values) > 0 {
			return 0, false, fmt.Errorf("%s: %s takes profile or value, not values", s.Key, s.Op)
		}
	case OpEqual:
		need = kindString
		if len(s.Values) > 0 {
			return 0, false, fmt.Errorf("%s: equal takes profile or value, not values (one-of takes values)", s.Key)
		}
	case OpOneOf:
		need = kindList
		if s.Value != "" {
			return 0, false, fmt.Errorf("%s: one-of takes profile or values, not value", s.Key)
		}
	default:
		return 0, false, fmt.Errorf("%s: op %q is not one of at-least, at-most, equal, one-of", s.Key, s.Op)
	}
	if s.Profile == "" {
		return need, false, nil
	}
	if k, ok := keys.static[s.Profile]; ok {
		if k.kind != need && !(s.Op == OpEqual && k.kind == kindInt) {
			return 0, false, fmt.Errorf("%s: profile key %q is %s, %s needs %s", s.Key, s.Profile, k.kind, s.Op, need)
		}
		return need, false, nil
	}
	if !wordRE.MatchString(s.Profile) {
		return 0, false, fmt.Errorf("%s: profile key %q is not a name", s.Key, s.Profile)
	}
	return need, true, nil
}

// fieldOf picks the compared part of a gathered value.
func (s SysctlCheck) fieldOf(value string) (string, error) {
	f := strings.Fields(value)
	if s.Field == 0 {
		return strings.Join(f, " "), nil
	}
	if len(f) < s.Field {
		return "", fmt.Errorf("%s=%s does not have %d fields", s.Key, redact.Excerpt(value), s.Field)
	}
	return f[s.Field-1], nil
}

// target is the check's target under profile p: a number (at-least,
// at-most), a string (equal) or a list (one-of).
func (s SysctlCheck) target(p Profile) (n int, str string, list []string) {
	switch {
	case s.Profile != "":
		switch v := p.Value(s.Profile).(type) {
		case int:
			return v, strconv.Itoa(v), []string{strconv.Itoa(v)}
		case string:
			return 0, v, []string{v}
		case []string:
			return 0, strings.Join(v, " "), v
		}
		panic("rules: profile key " + s.Profile + " not set")
	case len(s.Values) > 0:
		return 0, s.Values[0], s.Values
	}
	n, _ = strconv.Atoi(s.Value)
	return n, s.Value, []string{s.Value}
}

func (s SysctlCheck) fieldText() string {
	switch {
	case s.Field == 0:
		return ""
	case s.FieldName != "":
		return s.FieldName + " field "
	}
	return fmt.Sprintf("field %d ", s.Field)
}

// expected is the target as a reader sees it: ">= 4096", "max field >= N", "1", "one of 1, 2".
func (s SysctlCheck) expected(p Profile) string {
	n, str, list := s.target(p)
	switch s.Op {
	case OpAtLeast:
		return fmt.Sprintf("%s>= %d", s.fieldText(), n)
	case OpAtMost:
		return fmt.Sprintf("%s<= %d", s.fieldText(), n)
	case OpOneOf:
		return s.fieldText() + "one of " + strings.Join(list, ", ")
	}
	return strings.TrimSpace(s.fieldText() + str)
}

// ok says whether a gathered value meets the target.
func (s SysctlCheck) ok(value string, p Profile) (bool, error) {
	v, err := s.fieldOf(value)
	if err != nil {
		return false, err
	}
	n, str, list := s.target(p)
	switch s.Op {
	case OpEqual:
		return v == str, nil
	case OpOneOf:
		return slices.Contains(list, v), nil
	}
	got, err := strconv.Atoi(v)
	if err != nil || strings.Contains(v, " ") {
		return false, fmt.Errorf("%s=%s is not an integer", s.Key, redact.Excerpt(value))
	}
	if s.Op == OpAtMost {
		return got <= n, nil
	}
	return got >= n, nil
}

// fixValue is the value a fix sets: the target, in its field of the
// current value (the other fields kept).
func (s SysctlCheck) fixValue(current string, p Profile) string {
	_, str, _ := s.target(p)
	if s.Field == 0 {
		return str
	}
	f := strings.Fields(current)
	f[s.Field-1] = str // ok() already required the field
	return strings.Join(f, " ")
}

// bound is the direction of the fix.
func (s SysctlCheck) bound() Bound {
	switch s.Op {
	case OpAtLeast:
		return Bound{Dir: AtLeast, Field: s.Field}
	case OpAtMost:
		return Bound{Dir: AtMost, Field: s.Field}
	}
	return Bound{Dir: Exactly, Field: s.Field}
}

// bootDefault is the value the kernel boots with when nothing is
// persisted, whether it is known, and a note saying where it comes from.
func (s SysctlCheck) bootDefault(a kernelAnalysis, p Profile) (value string, known bool, note string) {
	b := s.Boot
	if b.Unknown != "" {
		return "", false, b.Unknown
	}
	note = b.Note
	if note == "" {
		note = "kernel default"
	}
	if len(b.Before) > 0 {
		if a.series == "" {
			var parts []string
			for _, e := range b.Before {
				parts = append(parts, e.Value+" before Linux "+e.Kernel)
			}
			last := b.Before[len(b.Before)-1]
			return "", false, strings.Join(parts, ", ") + ", " + b.Value + " from " + last.Kernel + "; the kernel version is not known"
		}
		for _, e := range b.Before {
			if cmpSeries(a.series, e.Kernel) < 0 {
				return e.Value, true, e.Note
			}
		}
	}
	if b.AtMost {
		good, err := s.ok(b.Value, p)
		return b.Value, err == nil && !good, note
	}
	return b.Value, true, note
}

// evalChecks is the one evaluator of every rule whose catalog entry has a
// check and no Go evaluator.
func evalChecks(c *evalCtx) Finding {
	ck := c.rule.Check
	fd := c.checkSysctls(ck.Why)
	if fd.Status == Pass {
		fd.Reason = c.passText(ck.Pass)
		for _, s := range ck.Sysctls {
			if v, _, ok := c.sysctl(s.Key); ok && s.Notes[v] != "" {
				fd.Reason += " (" + s.Notes[v] + ")"
			}
		}
	}
	if fd.Fix != nil && ck.Restart != "" {
		fd.Fix.Restart = true
		fd.Fix.Summary += "; " + ck.Restart
	}
	return fd
}

// passText fills "{KEY}" with profile values.
func (c *evalCtx) passText(s string) string {
	if s == "" {
		return "meets the target"
	}
	for _, k := range c.p.keyNames() {
		if strings.Contains(s, "{"+k+"}") {
			s = strings.ReplaceAll(s, "{"+k+"}", fmt.Sprint(c.p.Value(k)))
		}
	}
	return s
}

// checkSysctls evaluates the rule's check items. Missing values make the
// result unknown unless something already fails. The severity is the
// catalog's (filled in by Evaluate).
func (c *evalCtx) checkSysctls(why string) Finding {
	if c.f.Sysctl == nil {
		return unknown(c.notGathered(facts.SecSysctl, "sysctl values"))
	}
	var obs, bad, missing, exp []string
	fix := map[string]string{}
	bounds := map[string]Bound{}
	seen := map[string]bool{}
	for _, s := range c.rule.Check.Sysctls {
		exp = append(exp, s.Key+" "+s.expected(c.p))
		v, miss, found := c.sysctl(s.Key)
		if !found {
			missing = append(missing, miss)
			continue
		}
		if !seen[s.Key] {
			obs = append(obs, s.Key+"="+v)
			seen[s.Key] = true
		}
		good, err := s.ok(v, c.p)
		if err != nil {
			missing = append(missing, err.Error())
			continue
		}
		if !good {
			bad = append(bad, fmt.Sprintf("%s=%s (want %s)", s.Key, v, s.expected(c.p)))
			cur := v
			if prev, ok := fix[s.Key]; ok {
				cur = prev // a second field of the same key
			}
			fix[s.Key] = s.fixValue(cur, c.p)
			bounds[s.Key] = s.bound()
		}
	}
	fd := Finding{Observed: strings.Join(obs, ", "), Expected: strings.Join(exp, ", ")}
	switch {
	case len(bad) > 0:
		fd.Status = Fail
		fd.Reason = strings.Join(bad, "; ") + ": " + why
		if len(missing) > 0 {
			fd.Reason += " (also unknown: " + strings.Join(missing, "; ") + ")"
		}
		fd.Fix = &Fix{Summary: "set " + strings.Join(sortedKeys(fix), ", ") + " and persist", Sysctl: fix, Bounds: bounds}
	case len(missing) > 0:
		fd.Status = Unknown
		fd.Reason = strings.Join(missing, "; ")
	default:
		fd.Status = Pass
		fd.Reason = "meets the target"
	}
	return fd
}
