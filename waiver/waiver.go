// Package waiver loads waiver files and applies them to a report: a waiver
// accepts a known failing (or unknown) finding on some hosts for a stated
// reason until a date. A waived finding gets the status "waived"; it no
// longer counts in the score or the exit status (both count only "fail"),
// and its evidence says who waived it, why and until when.
//
// File format (YAML):
//
//	waivers:
//	  - rule: kernel-synack-wscale       # a rule ID (kaudit rules)
//	    hosts: [kafka-centos7-*]         # host names or globs (path.Match)
//	    groups: [legacy]                 # and/or inventory groups
//	    reason: kernel upgrade is CHG-1234, cookies monitored   # required
//	    owner: platform-team
//	    expires: 2027-01-31              # YYYY-MM-DD, valid through that day (UTC)
//	  - rule: broker-unaudited           # a cluster rule (scan --bootstrap)
//	    brokers: [7]                     # node IDs, or "*" (cluster.go)
//	    reason: broker 7 is the streams team's, audited by them
//
// A top-level list of entries (without "waivers:") is accepted too.
package waiver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/suggest"

	"gopkg.in/yaml.v3"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// Waived is the status of a finding a waiver accepted.
const Waived = rules.Waived

// DateLayout is the layout of "expires".
const DateLayout = "2006-01-02"

// Waiver is one entry of a waiver file.
type Waiver struct {
	Rule    string    `json:"rule"`
	Hosts   []string  `json:"hosts,omitempty"`
	Groups  []string  `json:"groups,omitempty"`
	Brokers []string  `json:"brokers,omitempty"` // node IDs or "*": cluster rules only
	Reason  string    `json:"reason"`
	Owner   string    `json:"owner,omitempty"`
	Expires time.Time `json:"expires,omitzero"` // zero: never expires; else midnight UTC of the last valid day
	File    string    `json:"file"`
	Line    int       `json:"line"`
}

// Waivers is a loaded waiver file, in file order.
type Waivers []Waiver

// Where is "FILE:LINE" of the entry.
func (w Waiver) Where() string { return w.File + ":" + strconv.Itoa(w.Line) }

// Expired reports whether now is after the last valid day (UTC).
func (w Waiver) Expired(now time.Time) bool {
	return !w.Expires.IsZero() && !now.UTC().Before(w.Expires.AddDate(0, 0, 1))
}

// DaysLeft is the number of whole days the waiver remains valid after
// today (0 on its last day, negative once expired). Meaningless when
// Expires is zero: check that first.
func (w Waiver) DaysLeft(now time.Time) int {
	today := time.Date(now.UTC().Year(), now.UTC().Month(), now.UTC().Day(), 0, 0, 0, 0, time.UTC)
	// In Unix seconds, not a time.Duration: Sub saturates at 292 years,
	// which made 2999-12-31 "expires in 106751d".
	return int((w.Expires.Unix() - today.Unix()) / 86400)
}

// Matches reports whether w covers rule on a host with this name and groups.
func (w Waiver) Matches(rule, host string, groups []string) bool {
	if w.Rule != rule {
		return false
	}
	for _, p := range w.Hosts {
		if ok, _ := path.Match(p, host); ok {
			return true
		}
	}
	for _, g := range w.Groups {
		if slices.Contains(groups, g) {
			return true
		}
	}
	return false
}

// Label is a short description: "rule on hosts a*; groups g; brokers 7".
func (w Waiver) Label() string {
	var on []string
	if len(w.Hosts) > 0 {
		on = append(on, "hosts "+strings.Join(w.Hosts, ","))
	}
	if len(w.Groups) > 0 {
		on = append(on, "groups "+strings.Join(w.Groups, ","))
	}
	if len(w.Brokers) > 0 {
		on = append(on, "brokers "+strings.Join(w.Brokers, ","))
	}
	return w.Rule + " on " + strings.Join(on, "; ")
}

// Error is one problem in a waiver file (internal/located's type, shared
// with inventory and profile files).
type Error = located.Error

// Load reads and validates a waiver file. Every problem is reported, each
// as an *Error naming the file, line and field, joined in line order.
// A file that cannot be read is one *Error saying why and what to give
// instead.
func Load(file string) (Waivers, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, &Error{File: file, Msg: fmt.Sprintf("cannot read the waiver file: %v", located.PathCause(err)), Hint: "give the path of a YAML waiver file; " + formatHint}
	}
	return Parse(file, data)
}

// formatHint says where the waiver file's format is shown.
const formatHint = "docs/waivers.example.yaml shows the format"

// MaxErrors is how many problems of one file Parse lists; the rest are
// counted in a last line.
const MaxErrors = 20

var knownKeys = []string{"rule", "hosts", "groups", "brokers", "reason", "owner", "expires"}

type parser struct {
	file string
	errs []*Error
}

func (p *parser) add(line int, field, format string, args ...any) {
	p.addHint(line, field, "", format, args...)
}

// addHint is add with what to do about the problem.
func (p *parser) addHint(line int, field, hint, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// Parse validates data read from file (the name is used in errors).
func Parse(file string, data []byte) (Waivers, error) {
	root, err := decode(file, data)
	if err != nil {
		return nil, err
	}
	p := &parser{file: file}
	var out Waivers
	if list := p.top(root); list != nil {
		for i, e := range list.Content {
			if w, ok := p.entry(fmt.Sprintf("waivers[%d]", i), e); ok {
				out = append(out, w)
			}
		}
	}
	if len(p.errs) > 0 {
		sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
		n := min(len(p.errs), MaxErrors)
		errs := make([]error, n, n+1)
		for i, e := range p.errs[:n] {
			errs[i] = e
		}
		if more := len(p.errs) - n; more > 0 {
			errs = append(errs, fmt.Errorf("… and %d more problems in %s", more, file))
		}
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// decode is the file's one YAML document, its root node.
func decode(file string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: file, Msg: "empty file (expected waivers: followed by a list of entries)"}
		}
		return nil, located.YAMLSyntax(file, data, err, formatHint)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &Error{File: file, Line: extra.Line, Msg: "more than one YAML document"}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	return root, nil
}

// top is the list of entries under the file's one key, waivers: (a bare
// list is accepted too); nil, with the problems added, when there is none.
func (p *parser) top(root *yaml.Node) *yaml.Node {
	switch root.Kind {
	case yaml.SequenceNode:
		return root
	case yaml.MappingNode:
	default:
		p.add(root.Line, "", "expected waivers: followed by a list of entries, got %s", located.DescribeNode(root))
		return nil
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch {
		case k.Value != "waivers":
			p.add(k.Line, k.Value, "unknown top-level key (the file has one key, waivers:)")
		case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
			list = &yaml.Node{Kind: yaml.SequenceNode}
		case v.Kind != yaml.SequenceNode:
			p.add(v.Line, "waivers", "expected a list of entries, got %s", located.DescribeNode(v))
		default:
			list = v
		}
	}
	if list == nil && len(p.errs) == 0 {
		p.add(root.Line, "", "no waivers: key")
	}
	return list
}

func (p *parser) entry(field string, n *yaml.Node) (Waiver, bool) {
	w := Waiver{File: p.file, Line: n.Line}
	if n.Kind != yaml.MappingNode {
		p.add(n.Line, field, "expected a mapping with rule, hosts/groups, reason, owner, expires; got %s", located.DescribeNode(n))
		return w, false
	}
	before := len(p.errs)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f := field + "." + k.Value
		if seen[k.Value] {
			p.add(k.Line, f, "given twice")
			continue
		}
		seen[k.Value] = true
		p.field(&w, f, k, v)
	}
	if !seen["rule"] {
		p.add(n.Line, field, "rule is required")
	}
	if strings.TrimSpace(w.Reason) == "" && !seen["reason"] {
		p.addHint(n.Line, field, "say why this finding is accepted", "reason is required")
	} else if strings.TrimSpace(w.Reason) == "" {
		p.add(n.Line, field+".reason", "must not be empty")
	}
	if len(w.Hosts) == 0 && len(w.Groups) == 0 && len(w.Brokers) == 0 && !seen["hosts"] && !seen["groups"] && !seen["brokers"] {
		p.addHint(n.Line, field, "write hosts: [\"*\"] to waive a rule fleet-wide, or brokers: [\"*\"] for a cluster rule", "hosts, groups or brokers is required")
	}
	if r, ok := rules.Lookup(w.Rule); ok && seen["brokers"] && r.Scope != rules.ScopeCluster {
		p.addHint(n.Line, field+".brokers", "brokers are for the cluster rules that kaudit rules lists last; use hosts or groups", "%s is a host rule", w.Rule)
	}
	return w, len(p.errs) == before
}

// field reads one key k of an entry (named f in errors) into w.
func (p *parser) field(w *Waiver, f string, k, v *yaml.Node) {
	switch k.Value {
	case "rule":
		if s, ok := p.str(f, v); ok {
			if _, known := rules.Lookup(s); !known {
				p.addHint(v.Line, f, suggest.DidYouMean(s, rules.IDs()), "unknown rule %q", s)
			}
			w.Rule = s
		}
	case "hosts":
		w.Hosts = p.list(f, v)
		for _, h := range w.Hosts {
			if _, err := path.Match(h, ""); err != nil {
				p.add(v.Line, f, "bad glob %q", h)
			}
		}
	case "groups":
		w.Groups = p.list(f, v)
	case "brokers":
		w.Brokers = p.list(f, v)
		for i, b := range w.Brokers {
			if n, err := strconv.ParseUint(b, 10, 31); err == nil {
				w.Brokers[i] = strconv.FormatUint(n, 10) // 07 is node 7
			} else if b != "*" {
				p.add(v.Line, f, "expected node IDs (0, 7, …) or \"*\", got %q", b)
			}
		}
	case "reason":
		w.Reason, _ = p.str(f, v)
	case "owner":
		w.Owner, _ = p.str(f, v)
	case "expires":
		if s, ok := p.str(f, v); ok {
			t, err := time.Parse(DateLayout, s)
			if err != nil {
				p.add(v.Line, f, "expected a date YYYY-MM-DD, got %q", s)
			}
			w.Expires = t
		}
	default:
		p.addHint(k.Line, f, suggest.DidYouMean(k.Value, knownKeys), "unknown key (known: %s)", strings.Join(knownKeys, ", "))
	}
}

func (p *parser) str(field string, v *yaml.Node) (string, bool) {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		p.add(v.Line, field, "expected a string, got %s", located.DescribeNode(v))
		return "", false
	}
	return v.Value, true
}

// list accepts a list of strings or one string.
func (p *parser) list(field string, v *yaml.Node) []string {
	if v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
		return []string{v.Value}
	}
	if v.Kind != yaml.SequenceNode {
		p.add(v.Line, field, "expected a list of strings, got %s", located.DescribeNode(v))
		return nil
	}
	if len(v.Content) == 0 {
		p.add(v.Line, field, "empty list")
	}
	var out []string
	for _, e := range v.Content {
		if e.Kind != yaml.ScalarNode || e.Tag == "!!null" || e.Value == "" {
			p.add(e.Line, field, "expected a string, got %s", located.DescribeNode(e))
			continue
		}
		out = append(out, e.Value)
	}
	return out
}

// ApplyWaivers marks every failing or unknown finding that an unexpired
// waiver covers as waived (first matching waiver in file order wins),
// records the waiver in the finding's evidence, and re-summarizes r.
// It returns one warning per expired waiver, saying how many findings it
// would have covered.
func ApplyWaivers(r *report.Report, w Waivers, now time.Time) []string {
	var warnings []string
	for _, wv := range w {
		if !wv.Expired(now) {
			continue
		}
		n := clusterCovered(r, wv)
		for _, h := range r.Hosts {
			for _, f := range h.Findings {
				if waivable(f.Status) && wv.Matches(f.Rule, h.Name, h.Groups) {
					n++
				}
			}
		}
		warnings = append(warnings, fmt.Sprintf("%s: waiver for %s expired on %s%s: %d finding(s) it covers are not waived",
			wv.Where(), wv.Label(), wv.Expires.Format(DateLayout), ownerSuffix(wv), n))
	}
	for i := range r.Hosts {
		h := &r.Hosts[i]
		for j := range h.Findings {
			f := &h.Findings[j]
			if !waivable(f.Status) {
				continue
			}
			for _, wv := range w {
				if wv.Expired(now) || !wv.Matches(f.Rule, h.Name, h.Groups) {
					continue
				}
				f.Evidence = append(f.Evidence, fmt.Sprintf("waived (was %s) %s", f.Status, wv.note()))
				f.Status = Waived
				break
			}
		}
	}
	waiveCluster(r, w, now)
	report.Summarize(r)
	return warnings
}

// note is "by FILE:LINE, until DATE, owner O: REASON", what a waived
// finding's evidence says of the waiver.
func (w Waiver) note() string {
	until := "no expiry"
	if !w.Expires.IsZero() {
		until = "until " + w.Expires.Format(DateLayout)
	}
	return fmt.Sprintf("by %s, %s%s: %s", w.Where(), until, ownerSuffix(w), w.Reason)
}

func waivable(s rules.Status) bool { return s == rules.Fail || s == rules.Unknown }

func ownerSuffix(w Waiver) string {
	if w.Owner == "" {
		return ""
	}
	return ", owner " + w.Owner
}
