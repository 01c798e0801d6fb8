package rules

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/redact"
)

// Check is a catalog entry's `check:` block: thresholds judged by one
// generic evaluator (evalChecks), no Go per rule: on sysctls, on the
// broker's server.properties keys (properties:), on the broker
// process's limits (limits:) and on the mount options of its log
// directories (mounts:), with the same closed set of operators. A rule whose verdict needs reasoning beyond the thresholds
// (syn-backlog, congestion-control) keeps a Go evaluator that starts from
// the same data (c.checkItems).
type Check struct {
	// Why follows the failing values in the reason: why they matter.
	Why string `yaml:"why"`
	// Pass is the reason when every value meets its target; "{KEY}" is
	// replaced by the value of profile key KEY.
	Pass string `yaml:"pass"`
	// Restart, when set, marks the fix as reaching the broker only after
	// a restart; its text is appended to the fix summary.
	Restart    string          `yaml:"restart"`
	Sysctls    []SysctlCheck   `yaml:"sysctls"`
	Properties []PropertyCheck `yaml:"properties"`
	Limits     []LimitCheck    `yaml:"limits"`
	Mounts     []MountCheck    `yaml:"mounts"`
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

// Target is what a check item compares a value with: an operator and a
// profile key's value, or a literal value / list of values; every kind of
// item (SysctlCheck, PropertyCheck) has one.
type Target struct {
	Op      Op       `yaml:"op"`
	Profile string   `yaml:"profile"` // profile key holding the target
	Value   string   `yaml:"value"`   // literal target (equal, at-least, at-most)
	Values  []string `yaml:"values"`  // literal targets (one-of); a fix sets the first
	// Field is the 1-based field of a multi-value setting it compares
	// (3: the max of net.ipv4.tcp_rmem); 0 the whole value. FieldName
	// names it in texts ("max field"), else "field N".
	Field     int    `yaml:"field"`
	FieldName string `yaml:"field_name"`
}

// SysctlCheck compares one gathered sysctl (or one field of it) with its
// Target.
type SysctlCheck struct {
	Key    string `yaml:"sysctl"`
	Target `yaml:",inline"`
	// Notes: a value -> a note added to the pass reason when the host has it.
	Notes map[string]string `yaml:"notes"`
	Boot  BootDefault       `yaml:"boot_default"`
}

// PropertyCheck compares one server.properties key, as the broker runs it
// (the running broker's value when the cluster reported it, else the
// file's, else Kafka's default), with its Target. The gather reads the
// keys the catalog names (Set.PropertyKeys), nothing else of the file.
type PropertyCheck struct {
	Key string `yaml:"property"`
	// Default is Kafka's default: the value the broker runs with when
	// server.properties does not set the key.
	Default string `yaml:"default"`
	Target  `yaml:",inline"`
}

// LimitCheck compares one of the broker process's limits (its soft
// value, the one the process runs with: /proc/PID/limits) with its
// Target; "unlimited" meets any at-least and no at-most.
type LimitCheck struct {
	Limit  ProcessLimit `yaml:"limit"`
	Target `yaml:",inline"`
}

// ProcessLimit names a limit of the broker process a check may read: a
// closed set, each a fact the gather reads (facts.BrokerProcess).
type ProcessLimit string

// LimitOpenFiles is "Max open files" (facts.BrokerProcess.NoFile); a
// failing check's fix raises LimitNOFILE (Fix.NoFile).
const LimitOpenFiles ProcessLimit = "open-files"

// MountCheck compares one mount option of every log directory's mount
// with its Target: the option's value ("commit=5": 5), "set" for a flag
// the mount has (noatime), else Default. A failing mount's fix is a
// manual fstab change and a remount.
type MountCheck struct {
	Option string `yaml:"mount_option"`
	// Default is the value when the mount does not list the option:
	// "unset" for a flag, the filesystem's default for a valued one.
	Default string `yaml:"default"`
	Target  `yaml:",inline"`
}

// Mount option values of a flag (MountCheck).
const (
	MountFlagSet   = "set"
	MountFlagUnset = "unset"
)

var mountOptionRE = regexp.MustCompile(`^[a-z0-9_]+$`)

func (s *MountCheck) validate(keys *keyTable) (need keyKind, dyn bool, err error) {
	switch {
	case !mountOptionRE.MatchString(s.Option) || len(s.Option) > 64:
		return 0, false, fmt.Errorf("mount_option %q is not a mount option name", s.Option)
	case s.Default == "":
		return 0, false, fmt.Errorf("%s: give default, the value when the mount does not list the option (%s for a flag)", s.Option, MountFlagUnset)
	case s.Field != 0:
		return 0, false, fmt.Errorf("%s: a mount option has no fields", s.Option)
	}
	return s.Target.validate(s.Option, keys)
}

// value is the option's value in a mount's options.
func (s MountCheck) value(opts []string) string {
	for _, o := range opts {
		if o == s.Option {
			return MountFlagSet
		}
		if v, ok := strings.CutPrefix(o, s.Option+"="); ok {
			return v
		}
	}
	return s.Default
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
	if err := s.Boot.validate(); err != nil {
		return 0, false, fmt.Errorf("%s: boot_default: %v", s.Key, err)
	}
	return s.Target.validate(s.Key, keys)
}

// secretWordRE names what a server.properties value may hold a secret in:
// such a key never leaves the host, so no check may name it.
var secretWordRE = regexp.MustCompile(`password|secret|jaas|sasl|ssl|token|credential|key`)

func (s *PropertyCheck) validate(keys *keyTable) (need keyKind, dyn bool, err error) {
	switch {
	case !propertyKeyRE.MatchString(s.Key) || len(s.Key) > 128:
		return 0, false, fmt.Errorf("property %q is not a Kafka property name", s.Key)
	case secretWordRE.MatchString(s.Key):
		return 0, false, fmt.Errorf("property %q may hold a secret: kaudit reads no such key off a host", s.Key)
	case s.Default == "":
		return 0, false, fmt.Errorf("%s: give default, the value Kafka runs with when server.properties does not set it", s.Key)
	}
	return s.Target.validate(s.Key, keys)
}

func (s *LimitCheck) validate(keys *keyTable) (need keyKind, dyn bool, err error) {
	switch {
	case s.Limit != LimitOpenFiles:
		return 0, false, fmt.Errorf("limit %q is not one of %s", s.Limit, LimitOpenFiles)
	case s.Op != OpAtLeast && s.Op != OpAtMost:
		return 0, false, fmt.Errorf("%s: a limit takes at-least or at-most, not %q", s.Limit, s.Op)
	case s.Field != 0:
		return 0, false, fmt.Errorf("%s: a limit has no fields", s.Limit)
	}
	return s.Target.validate(string(s.Limit), keys)
}

// validate checks the target of item name.
func (s *Target) validate(name string, keys *keyTable) (need keyKind, dyn bool, err error) {
	if s.Field < 0 || s.Field > 8 {
		return 0, false, fmt.Errorf("%s: field %d out of range 1..8", name, s.Field)
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
		return 0, false, fmt.Errorf("%s: give exactly one of profile, value, values", name)
	}
	switch s.Op {
	case OpAtLeast, OpAtMost:
		need = kindInt
		if s.Value != "" {
			if _, err := strconv.Atoi(s.Value); err != nil {
				return 0, false, fmt.Errorf("%s: %s needs an integer value, got %q", name, s.Op, s.Value)
			}
		}
		if len(s.Values) > 0 {
			return 0, false, fmt.Errorf("%s: %s takes profile or value, not values", name, s.Op)
		}
	case OpEqual:
		need = kindString
		if len(s.Values) > 0 {
			return 0, false, fmt.Errorf("%s: equal takes profile or value, not values (one-of takes values)", name)
		}
	case OpOneOf:
		need = kindList
		if s.Value != "" {
			return 0, false, fmt.Errorf("%s: one-of takes profile or values, not value", name)
		}
	default:
		return 0, false, fmt.Errorf("%s: op %q is not one of at-least, at-most, equal, one-of", name, s.Op)
	}
	if s.Profile == "" {
		return need, false, nil
	}
	if k, ok := keys.static[s.Profile]; ok {
		if k.kind != need && !(s.Op == OpEqual && k.kind == kindInt) {
			return 0, false, fmt.Errorf("%s: profile key %q is %s, %s needs %s", name, s.Profile, k.kind, s.Op, need)
		}
		return need, false, nil
	}
	if !wordRE.MatchString(s.Profile) {
		return 0, false, fmt.Errorf("%s: profile key %q is not a name", name, s.Profile)
	}
	return need, true, nil
}

// fieldOf picks the compared part of item name's gathered value.
func (s Target) fieldOf(name, value string) (string, error) {
	f := strings.Fields(value)
	if s.Field == 0 {
		return strings.Join(f, " "), nil
	}
	if len(f) < s.Field {
		return "", fmt.Errorf("%s=%s does not have %d fields", name, redact.Excerpt(value), s.Field)
	}
	return f[s.Field-1], nil
}

// target is the check's target under profile p: a number (at-least,
// at-most), a string (equal) or a list (one-of).
func (s Target) target(p Profile) (n int, str string, list []string) {
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

func (s Target) fieldText() string {
	switch {
	case s.Field == 0:
		return ""
	case s.FieldName != "":
		return s.FieldName + " field "
	}
	return fmt.Sprintf("field %d ", s.Field)
}

// expected is the target as a reader sees it: ">= 4096", "max field >= N", "1", "one of 1, 2".
func (s Target) expected(p Profile) string {
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
func (s SysctlCheck) ok(value string, p Profile) (bool, error) { return s.meets(s.Key, value, p) }

// meets says whether item name's value meets the target.
func (s Target) meets(name, value string, p Profile) (bool, error) {
	v, err := s.fieldOf(name, value)
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
		return false, fmt.Errorf("%s=%s is not an integer", name, redact.Excerpt(value))
	}
	if s.Op == OpAtMost {
		return got <= n, nil
	}
	return got >= n, nil
}

// fixValue is the value a fix sets: the target, in its field of the
// current value (the other fields kept).
func (s Target) fixValue(current string, p Profile) string {
	_, str, _ := s.target(p)
	if s.Field == 0 {
		return str
	}
	f := strings.Fields(current)
	f[s.Field-1] = str // ok() already required the field
	return strings.Join(f, " ")
}

// bound is the direction of the fix.
func (s Target) bound() Bound {
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
	note = cmp.Or(b.Note, "kernel default")
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
	fd := c.checkItems(ck.Why)
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

// reading is one check item's value on the host, or why there is none.
type reading struct {
	key      string
	target   Target
	value    string // what is compared
	observed string // as the finding shows it
	missing  string // why there is no value; "" when there is one
	property bool   // a server.properties key
	limit    bool   // a process limit
	mount    string // a mount option: the mount (else a sysctl)
	option   string // the mount option
}

// meets says whether the reading meets its target; an unlimited limit
// meets any at-least and no at-most.
func (r reading) meets(p Profile) (bool, error) {
	if r.limit && r.value == "unlimited" {
		return r.target.Op == OpAtLeast, nil
	}
	return r.target.meets(r.key, r.value, p)
}

// readings reads the rule's check items, or returns the finding when what
// they read is not there at all: no sysctls gathered, no broker.
func (c *evalCtx) readings() ([]reading, *Finding) {
	ck := c.rule.Check
	if len(ck.Sysctls) > 0 && c.f.Sysctl == nil {
		fd := unknown(c.notGathered(facts.SecSysctl, "sysctl values"))
		return nil, &fd
	}
	if len(ck.Properties)+len(ck.Limits) > 0 && c.f.Kafka == nil {
		fd := c.noKafkaFinding()
		return nil, &fd
	}
	var out []reading
	for _, s := range ck.Sysctls {
		v, miss, _ := c.sysctl(s.Key)
		out = append(out, reading{key: s.Key, target: s.Target, value: v, observed: s.Key + "=" + v, missing: miss})
	}
	for _, s := range ck.Properties {
		out = append(out, c.propertyReading(s))
	}
	for _, s := range ck.Limits {
		out = append(out, c.limitReading(s))
	}
	if len(ck.Mounts) > 0 {
		dirs, stop := c.logDirs()
		if stop != nil {
			return nil, stop
		}
		for _, s := range ck.Mounts {
			out = append(out, mountReadings(s, dirs)...)
		}
	}
	return out, nil
}

// mountReadings are option s of each log directory's mount, once per
// mount; a directory whose mount is not known is missing.
func mountReadings(s MountCheck, dirs []facts.LogDir) []reading {
	var out []reading
	seen := map[string]bool{}
	for _, d := range dirs {
		if why := unreached(d); why != "" {
			out = append(out, reading{key: d.Path + " " + s.Option, target: s.Target, missing: why})
			continue
		}
		if seen[d.Mount] {
			continue
		}
		seen[d.Mount] = true
		r := reading{key: d.Mount + " " + s.Option, target: s.Target, value: s.value(d.Options), mount: d.Mount, option: s.Option}
		r.observed = r.key + "=" + r.value
		out = append(out, r)
	}
	return out
}

// limitReading is the soft value of the broker process's limit s.
func (c *evalCtx) limitReading(s LimitCheck) reading {
	r := reading{key: string(s.Limit), target: s.Target, limit: true}
	p := c.f.Kafka.Process
	switch {
	case p == nil:
		r.missing = c.notGathered(facts.SecProcess, fmt.Sprintf("the broker process (pid %d)", c.f.Kafka.PID))
	case p.NoFile == nil:
		r.missing = unread(p, "limits", "the broker's open-files limit (/proc/PID/limits)")
	default:
		r.value = limitText(p.NoFile.Soft)
		r.observed = fmt.Sprintf("%s soft %s, hard %s (Max open files)", s.Limit, r.value, limitText(p.NoFile.Hard))
	}
	return r
}

// propertyReading is the value the broker runs with for s's key: the
// running broker's (as the cluster reported it), else server.properties',
// else Kafka's default when the file does not set it.
func (c *evalCtx) propertyReading(s PropertyCheck) reading {
	r := reading{key: s.Key, target: s.Target, property: true}
	v, set, running := c.brokerProp(s.Key)
	switch {
	case running != "":
		r.value, r.observed = strings.TrimSpace(v), running
	case !c.kafkaConfigRead():
		r.missing = c.notGathered(facts.SecKafkaConf, "server.properties")
	case !set:
		r.value, r.observed = s.Default, s.Key+" unset (Kafka's default "+s.Default+")"
	default:
		r.value = strings.TrimSpace(v)
		r.observed = s.Key + "=" + r.value + c.propWhere(s.Key)
	}
	return r
}

// checkItems evaluates the rule's check items. Missing values make the
// result unknown unless something already fails. The severity is the
// catalog's (filled in by Evaluate).
func (c *evalCtx) checkItems(why string) Finding {
	rs, stop := c.readings()
	if stop != nil {
		return *stop
	}
	var obs, bad, missing, exp []string
	sysctls, props, limits := map[string]string{}, map[string]string{}, map[string]string{}
	var mounts []reading
	bounds := map[string]Bound{}
	seen := map[string]bool{}
	for _, r := range rs {
		exp = append(exp, r.key+" "+r.target.expected(c.p))
		if r.missing != "" {
			missing = append(missing, r.missing)
			continue
		}
		if !seen[r.key] {
			obs = append(obs, r.observed)
			seen[r.key] = true
		}
		good, err := r.meets(c.p)
		if err != nil {
			missing = append(missing, err.Error())
			continue
		}
		if !good {
			bad = append(bad, fmt.Sprintf("%s=%s (want %s)", r.key, r.value, r.target.expected(c.p)))
			if r.mount != "" {
				mounts = append(mounts, r)
				continue
			}
			to := sysctls
			switch {
			case r.property:
				to = props
			case r.limit:
				to = limits
			}
			cur := r.value
			if prev, ok := to[r.key]; ok {
				cur = prev // a second field of the same key
			}
			to[r.key] = r.target.fixValue(cur, c.p)
			if !r.limit {
				bounds[r.key] = r.target.bound()
			}
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
		fd.Fix = checkFix(sysctls, props, limits, bounds)
		if len(mounts) > 0 {
			c.mountFix(fd.Fix, mounts)
		}
	case len(missing) > 0:
		fd.Status = Unknown
		fd.Reason = strings.Join(missing, "; ")
	default:
		fd.Status = Pass
		fd.Reason = "meets the target"
	}
	return fd
}

// checkFix is the fix of a failed check: the sysctls set and persisted,
// the properties set in server.properties and the open-files limit
// raised (LimitNOFILE), both with a broker restart.
func checkFix(sysctls, props, limits map[string]string, bounds map[string]Bound) *Fix {
	fx := &Fix{Bounds: bounds}
	var do []string
	if len(sysctls) > 0 {
		fx.Sysctl = sysctls
		do = append(do, "set "+strings.Join(sortedKeys(sysctls), ", ")+" and persist")
	}
	if len(props) > 0 {
		fx.KafkaProperties, fx.Restart = props, true
		var kv []string
		for _, k := range sortedKeys(props) {
			kv = append(kv, k+"="+props[k])
		}
		do = append(do, "set "+strings.Join(kv, ", ")+" in server.properties and restart the broker")
	}
	if v, ok := limits[string(LimitOpenFiles)]; ok {
		n, _ := strconv.ParseInt(v, 10, 64) // validated: an integer target
		fx.NoFile, fx.Restart = n, true
		do = append(do, fmt.Sprintf("raise the broker service's open-files limit to %d (LimitNOFILE) and restart the broker", n))
	}
	fx.Summary = strings.Join(do, "; ")
	return fx
}

// Tuned is base with every sysctl a shipped check names brought to its
// target under p where base's value does not meet it: a host tuned as
// the catalog asks (the demo's tuned hosts are built from it).
func Tuned(base map[string]string, p Profile) map[string]string { return shipped.Tuned(base, p) }

// Tuned is Tuned for the set's checks: a field target is set in its field
// (the other fields kept), one-of sets the first value; a value without
// the field a check compares is left as it is.
func (s *Set) Tuned(base map[string]string, p Profile) map[string]string {
	out := maps.Clone(base)
	for _, c := range s.checked() {
		v, ok := out[c.Key]
		good, err := c.ok(v, p)
		switch {
		case ok && err == nil && good:
		case c.Field > 0 && len(strings.Fields(v)) < c.Field:
		default:
			out[c.Key] = c.fixValue(v, p)
		}
	}
	return out
}

// mountFix adds to fx what a person does for failing mount options: each
// mount's fstab entry and a remount (kaudit changes no mount itself).
func (c *evalCtx) mountFix(fx *Fix, bad []reading) {
	var do []string
	for _, r := range bad {
		want := r.target.fixValue(r.value, c.p)
		switch want {
		case MountFlagSet:
			do = append(do, fmt.Sprintf("add %s to the options of %s in /etc/fstab and run mount -o remount,%s %s", r.option, r.mount, r.option, r.mount))
		case MountFlagUnset:
			do = append(do, fmt.Sprintf("remove %s from the options of %s in /etc/fstab and remount %s", r.option, r.mount, r.mount))
		default:
			do = append(do, fmt.Sprintf("set %s=%s in the options of %s in /etc/fstab and run mount -o remount,%s=%s %s", r.option, want, r.mount, r.option, want, r.mount))
		}
	}
	if fx.Summary != "" {
		fx.Summary += "; "
	}
	fx.Summary += "change the log directories' mount options"
	fx.Manual = strings.Join(do, "; ")
}
