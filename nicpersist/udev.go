package nicpersist

import (
	"cmp"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// udev is udev rules that RUN ethtool when the interface appears; kaudit
// writes its own rule file (UdevPath) where the host's mechanism cannot
// be used, one rule per setting.
type udev struct{}

// UdevPath is kaudit's udev rule file: where ring and offload settings
// are persisted when the host's own mechanism cannot be used.
const UdevPath = "/etc/udev/rules.d/99-kaudit-ethtool.rules"

var udevPlan = Plan{Path: UdevPath}

func (udev) Name() facts.PersistMechanism { return facts.PersistUdev }

func (udev) Owns(p string) bool { return p == UdevPath }

// detect: the udev rule is what kaudit falls back to, never detected.
func (udev) detect(*facts.NICPersist, *input) bool { return false }

func (udev) Plan(facts.NIC, map[string]string) Plan { return udevPlan }

// --- boot: rules that run ethtool for the interface ---

type udevLine struct{ loc, text string }

// udevSubst are the udev substitutions for the device's name.
var udevSubst = map[string]bool{"%k": true, "$kernel": true, "$name": true}

var reUdevKey = regexp.MustCompile(`^\s*([A-Za-z_]+)(\{[^}]*\})?\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*(,|$)`)

// boot applies the udev rules that RUN ethtool -G / -K for the interface
// (rule files by name, lines in order; the rule's ACTION, SUBSYSTEM,
// KERNEL, NAME, ATTR{address} and DRIVERS/DRIVER matches evaluated).
func (udev) boot(b *builder, in *input) {
	var rules []udevLine
	in.each("@udev-rule", func(val string) {
		loc, text, _ := strings.Cut(val, " ")
		rules = append(rules, udevLine{loc: loc, text: text})
	})
	slices.SortStableFunc(rules, func(a, b udevLine) int {
		fa, la := splitLoc(a.loc)
		fb, lb := splitLoc(b.loc)
		return cmp.Or(strings.Compare(path.Base(fa), path.Base(fb)), cmp.Compare(la, lb))
	})
	for _, r := range rules {
		text := strings.TrimSuffix(r.text, "\r")
		if t := strings.TrimSpace(text); t == "" || t[0] == '#' {
			continue
		}
		matches, undecided, runs := b.udevRule(r.loc, text, in)
		continued := text != strings.TrimLeft(text, " \t") // a continuation line: its matches are on the line before
		for _, run := range runs {
			for _, c := range ethtoolCommands(run, false) {
				b.udevRun(r.loc, c, in.name, continued, matches, undecided)
			}
		}
	}
}

// udevRule reads one rule line: whether its matches hold, the first match
// kaudit does not evaluate, and its RUN commands.
func (b *builder) udevRule(loc, text string, in *input) (matches bool, undecided string, runs []string) {
	rest := text
	matches = true
	for strings.TrimSpace(rest) != "" && strings.TrimSpace(rest) != `\` {
		m := reUdevKey.FindStringSubmatchIndex(rest)
		if m == nil {
			b.unsure("%s: udev rule not read (%q)", loc, strings.TrimSpace(text))
			return false, undecided, nil
		}
		key, attr, op, val := rest[m[2]:m[3]], "", rest[m[6]:m[7]], rest[m[8]:m[9]]
		if m[4] >= 0 {
			attr = rest[m[4]:m[5]]
		}
		rest = rest[m[1]:]
		if key == "RUN" && (op == "+=" || op == "=" || op == ":=") {
			runs = append(runs, val)
			continue
		}
		if op != "==" && op != "!=" {
			continue // an assignment
		}
		hit, known := udevMatch(key, attr, val, in)
		if !known {
			if undecided == "" {
				undecided = key + attr
			}
			continue
		}
		if hit != (op == "==") {
			matches = false
		}
	}
	return matches, undecided, runs
}

// udevMatch evaluates one match key against the interface; known is
// false for a key kaudit does not evaluate.
func udevMatch(key, attr, val string, in *input) (hit, known bool) {
	switch {
	case key == "ACTION":
		return udevGlob(val, "add"), true
	case key == "SUBSYSTEM" || key == "SUBSYSTEMS":
		return udevGlob(val, "net"), true
	case key == "KERNEL" || key == "NAME":
		return udevGlob(val, in.name), true
	case key == "DRIVERS" || key == "DRIVER":
		return in.driver != "" && udevGlob(val, in.driver), true
	case key == "ATTR" && attr == "{address}":
		return in.mac != "" && udevGlob(strings.ToLower(val), in.mac), true
	}
	return false, false
}

// udevRun records what one ethtool command of a rule sets on name.
func (b *builder) udevRun(loc string, c ethtoolCmd, name string, continued, matches bool, undecided string) {
	literal := c.iface == name
	switch {
	case !literal && !udevSubst[c.iface]:
		// another interface
	case !literal && continued:
		b.unsure("%s: ethtool %s on a continuation line: its matches were not read", loc, c.iface)
	case !matches:
	case undecided != "":
		b.unsure("%s: udev match %s not evaluated by kaudit: the rule may set %s", loc, undecided, udevSetList(c))
	case c.bad != "":
		b.unsure("%s: ethtool command not read (%s)", loc, c.bad)
	default:
		for _, kv := range c.set {
			b.set(kv[0], kv[1], facts.PersistUdev, loc)
		}
	}
}

func udevSetList(c ethtoolCmd) string {
	var s []string
	for _, kv := range c.set {
		s = append(s, kv[0]+" "+kv[1])
	}
	if len(s) == 0 {
		return "nothing kaudit audits"
	}
	return strings.Join(s, ", ")
}

// udevGlob matches a udev pattern: "|"-separated globs.
func udevGlob(pattern, s string) bool {
	return slices.ContainsFunc(strings.Split(pattern, "|"), func(p string) bool {
		m, err := path.Match(p, s)
		return m && err == nil
	})
}

func splitLoc(loc string) (file string, line int) {
	i := strings.LastIndexByte(loc, ':')
	if i < 0 {
		return loc, 0
	}
	n, _ := strconv.Atoi(loc[i+1:])
	return loc[:i], n
}

// --- render: kaudit's rule file ---

const udevHeader = "# Managed by kaudit — do not edit by hand; changes are overwritten by 'kaudit fix'."

var reUdevRule = regexp.MustCompile(`^ACTION=="add", SUBSYSTEM=="net", KERNEL=="([A-Za-z0-9_.:@-]{1,15})", RUN\+="(/[A-Za-z0-9_./-]+) -([GK]) ([A-Za-z0-9_.:@-]{1,15}) ([a-z]+) ([a-z0-9]+)"$`)

func (udev) Render(f File, ss []Setting, env Env) ([]byte, bool, error) {
	if f.Exists && udevHolds(f.Content, ss) {
		return nil, true, nil
	}
	content, err := RenderUdev(f.Content, ss, env.Ethtool, env.RunID)
	return content, false, err
}

// RenderUdev returns the new content of the udev rule file: the header
// with runID, then one rule per setting of existing (kaudit's own earlier
// rules; anything else in the file is refused) and set, sorted; set wins.
func RenderUdev(existing []byte, set []Setting, ethtool, runID string) ([]byte, error) {
	if err := checkEthtool(ethtool); err != nil {
		return nil, err
	}
	vals := map[string]Setting{}
	for i, line := range strings.Split(string(existing), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := reUdevRule.FindStringSubmatch(line)
		if m == nil || m[1] != m[4] {
			return nil, fmt.Errorf("%s line %d is not a rule kaudit wrote: fix or remove the line, then re-run", UdevPath, i+1)
		}
		s := Setting{Iface: m[1], Setting: m[5], Value: m[6]}
		if err := Check([]Setting{s}); err != nil {
			return nil, fmt.Errorf("%s line %d: %v", UdevPath, i+1, err)
		}
		if s.flag() != m[3] {
			return nil, fmt.Errorf("%s line %d: %s is not set with ethtool -%s", UdevPath, i+1, s.Setting, m[3])
		}
		vals[s.Iface+" "+s.Setting] = s
	}
	if err := Check(set); err != nil {
		return nil, err
	}
	for _, s := range set {
		vals[s.Iface+" "+s.Setting] = s
	}
	var b strings.Builder
	b.WriteString(udevHeader + "\n# Last run: " + runID + "\n")
	for _, k := range sortedKeys(vals) {
		s := vals[k]
		fmt.Fprintf(&b, "ACTION==\"add\", SUBSYSTEM==\"net\", KERNEL==\"%s\", RUN+=\"%s -%s %s %s %s\"\n", s.Iface, ethtool, s.flag(), s.Iface, s.Setting, s.Value)
	}
	return []byte(b.String()), nil
}

// udevHolds reports whether a rule file already holds every setting.
func udevHolds(existing []byte, set []Setting) bool {
	have := map[string]string{}
	for _, line := range strings.Split(string(existing), "\n") {
		if m := reUdevRule.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			have[m[1]+" "+m[5]] = m[6]
		}
	}
	for _, s := range set {
		if have[s.Iface+" "+s.Setting] != s.Value {
			return false
		}
	}
	return true
}
