package remediate

import (
	"fmt"
	"io"
	"strings"

	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/internal/words"
)

// Summary counts what a set of plans would do.
type Summary struct {
	Changes  int // changes planned
	Hosts    int // hosts with at least one change
	Restarts int // hosts with at least one change that needs a broker restart
	Manual   int // manual actions
	Cannot   int // changes the hosts do not allow (HostPlan.Infeasible)
	Conflict int // targets rules ask for in incompatible directions (HostPlan.Conflicts)
}

// Summarize counts plans.
func Summarize(plans []HostPlan) Summary {
	var s Summary
	for _, p := range plans {
		s.Changes += len(p.Changes)
		s.Manual += len(p.Manual)
		s.Cannot += len(p.Infeasible)
		s.Conflict += len(p.Conflicts)
		if len(p.Changes) > 0 {
			s.Hosts++
		}
		if p.RestartRequired() {
			s.Restarts++
		}
	}
	return s
}

// PlanOptions change how RenderPlan words a plan.
type PlanOptions struct {
	// Applying: the plan is about to be applied, so the closing "N changes
	// on M hosts …; nothing changed (run with --apply)" line is left out
	// (the applier reports what it did). "nothing to change" stays.
	Applying bool
	// Width wraps each line at word boundaries with a hanging indent so
	// that it fits this many terminal columns; 0 means no limit.
	Width int
	// Unaudited is the number of hosts that could not be audited (they
	// have no plan): the summary says so instead of counting them as
	// having nothing to change.
	Unaudited int
	// Refused is the number of audited hosts kaudit does not act on (not
	// proven a broker of the cluster, listed before the plan): no plan.
	Refused int
}

// RenderPlan writes plans as text for a human deciding whether to apply
// them: per host each change ("rule: target from → to (runtime+persist)
// [restart required]") with its note, what kaudit cannot fix, the
// warnings, then one summary line. Every value that came from a host
// (names, targets, from/to values, paths, notes quoting a host's kernel
// or version) is made visible with termsafe before it is written. Nothing
// in it depends on the clock or map order, so it is golden-tested.
func RenderPlan(w io.Writer, plans []HostPlan, opts PlanOptions) {
	pw := planWriter{width: opts.Width}
	for i, p := range plans {
		if i > 0 {
			pw.b.WriteString("\n")
		}
		pw.host(p)
	}
	if len(plans) > 0 {
		pw.b.WriteString("\n")
	}
	s := Summarize(plans)
	var tail string
	if s.Cannot > 0 {
		tail += fmt.Sprintf("; %s cannot be applied on %s (listed above, with what to do instead)", words.Count(s.Cannot, "change", "changes"), hostsWord(plans))
	}
	if s.Conflict > 0 {
		tail += fmt.Sprintf("; %s asked for in incompatible directions, not planned (CONFLICT above)", words.Count(s.Conflict, "target", "targets"))
	}
	if opts.Unaudited > 0 {
		tail += fmt.Sprintf("; %s not audited: no plan for %s", words.Count(opts.Unaudited, "host", "hosts"), map[bool]string{true: "it", false: "them"}[opts.Unaudited == 1])
	}
	if opts.Refused > 0 {
		tail += fmt.Sprintf("; %s not proven a broker of the cluster: not changed", words.Count(opts.Refused, "host", "hosts"))
	}
	hosts := words.Count(len(plans), "host", "hosts")
	if opts.Unaudited+opts.Refused > 0 {
		hosts = words.Count(len(plans), "audited host", "audited hosts")
	}
	switch {
	case s.Changes == 0:
		pw.put(0, 4, fmt.Sprintf("nothing to change on %s%s; nothing changed", hosts, tail))
	case !opts.Applying:
		verb := "need"
		if s.Restarts == 1 {
			verb = "needs"
		}
		pw.put(0, 4, fmt.Sprintf("%s on %s, %d %s a broker restart%s; nothing changed (run with --apply)",
			words.Count(s.Changes, "change", "changes"), words.Count(s.Hosts, "host", "hosts"), s.Restarts, verb, tail))
	case tail != "":
		pw.put(0, 4, strings.TrimPrefix(tail, "; "))
	}
	io.WriteString(w, pw.b.String())
}

// planWriter collects RenderPlan's lines, wrapped at width (0: no limit).
type planWriter struct {
	b     strings.Builder
	width int
}

// put writes s at indent, wrapped to the width with later lines at
// indent+hang.
func (pw *planWriter) put(indent, hang int, s string) {
	pad := strings.Repeat(" ", indent)
	width := 0
	if pw.width > 0 {
		width = max(pw.width-indent, termui.MinWidth/2)
	}
	for _, l := range termui.Wrap(s, width, hang) {
		pw.b.WriteString(pad + l + "\n")
	}
}

// host writes one host's part of RenderPlan.
func (pw *planWriter) host(p HostPlan) {
	ts := termsafe.Line
	if len(p.Changes) == 0 && len(p.Manual) == 0 && len(p.Warnings) == 0 && len(p.Infeasible) == 0 && len(p.Conflicts) == 0 {
		pw.put(0, 4, ts(p.Host)+": nothing to change")
		return
	}
	pw.put(0, 4, ts(p.Host)+":")
	for _, c := range p.Changes {
		line := fmt.Sprintf("%s: %s %s → %s (%s)", strings.Join(c.Rules, ","), ts(c.Target), ts(showFrom(c)), ts(showValue(c.To)), scope(c))
		if c.RestartRequired {
			line += " [restart required]"
		}
		pw.put(2, 4, line)
		if c.Persist && c.Kind != KindSysctl {
			pw.put(6, 2, "in "+ts(c.PersistPath))
		}
		if c.Note != "" {
			for _, n := range strings.Split(c.Note, "\n") {
				pw.put(6, 2, ts(n))
			}
		}
	}
	if len(p.Conflicts) > 0 {
		pw.b.WriteString("  CONFLICT: rules ask for incompatible values (not planned):\n")
		for _, c := range p.Conflicts {
			pw.put(4, 4, fmt.Sprintf("%s: %s: %s", strings.Join(c.Rules, ","), ts(c.Target), ts(c.Reason)))
		}
	}
	if len(p.Infeasible) > 0 {
		pw.b.WriteString("  cannot apply on this host (not planned):\n")
		for _, c := range p.Infeasible {
			pw.put(4, 4, fmt.Sprintf("%s: %s → %s: %s", strings.Join(c.Rules, ","), ts(c.Target), ts(showValue(c.To)), ts(c.Reason)))
			pw.put(6, 2, "instead: "+ts(c.Instead))
		}
	}
	if len(p.Manual) > 0 {
		pw.b.WriteString("  cannot fix automatically:\n")
		for _, m := range p.Manual {
			pw.put(4, 4, ts(strings.Join(m.Rules, ","))+": "+ts(m.Action))
		}
	}
	if len(p.Warnings) > 0 {
		pw.b.WriteString("  warnings:\n")
		for _, wn := range p.Warnings {
			pw.put(4, 4, ts(wn))
		}
	}
}

func scope(c Change) string {
	switch {
	case c.Runtime && c.Persist:
		return "runtime+persist"
	case c.Persist:
		return "persist only"
	default:
		return "runtime only"
	}
}

func showFrom(c Change) string {
	if c.From == "" {
		if c.Kind == KindKafkaProperty {
			return "(unset)"
		}
		return "(unknown)"
	}
	return showValue(c.From)
}

func showValue(v string) string {
	if v == "" || strings.TrimSpace(v) != v || strings.Contains(v, " ") {
		return fmt.Sprintf("%q", v)
	}
	return v
}

// hostsWord is "this host" or "these hosts": the hosts whose plan lists
// changes they do not allow.
func hostsWord(plans []HostPlan) string {
	n := 0
	for _, p := range plans {
		if len(p.Infeasible) > 0 {
			n++
		}
	}
	return words.Count(n, "host", "hosts")
}
