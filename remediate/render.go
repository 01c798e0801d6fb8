package remediate

import (
	"fmt"
	"io"
	"strings"
)

// Summary counts what a set of plans would do.
type Summary struct {
	Changes  int // changes planned
	Hosts    int // hosts with at least one change
	Restarts int // hosts with at least one change that needs a broker restart
	Manual   int // manual actions
	Cannot   int // changes the hosts do not allow (HostPlan.Infeasible)
}

// Summarize counts plans.
func Summarize(plans []HostPlan) Summary {
	var s Summary
	for _, p := range plans {
		s.Changes += len(p.Changes)
		s.Manual += len(p.Manual)
		s.Cannot += len(p.Infeasible)
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
	// Unaudited is the number of hosts that could not be audited (they
	// have no plan): the summary says so instead of counting them as
	// having nothing to change.
	Unaudited int
}

// RenderPlan writes plans as text for a human deciding whether to apply
// them: per host each change ("rule: target from → to (runtime+persist)
// [restart required]") with its note, what kaudit cannot fix, the
// warnings, then one summary line. Nothing in it depends on the clock or
// map order, so it is golden-tested.
func RenderPlan(w io.Writer, plans []HostPlan, opts PlanOptions) {
	var b strings.Builder
	for i, p := range plans {
		if i > 0 {
			b.WriteString("\n")
		}
		renderHost(&b, p)
	}
	if len(plans) > 0 {
		b.WriteString("\n")
	}
	s := Summarize(plans)
	var tail string
	if s.Cannot > 0 {
		tail += fmt.Sprintf("; %s cannot be applied on %s (listed above, with what to do instead)", plural(s.Cannot, "change", "changes"), hostsWord(plans))
	}
	if opts.Unaudited > 0 {
		tail += fmt.Sprintf("; %s not audited: no plan for %s", plural(opts.Unaudited, "host", "hosts"), map[bool]string{true: "it", false: "them"}[opts.Unaudited == 1])
	}
	hosts := plural(len(plans), "host", "hosts")
	if opts.Unaudited > 0 {
		hosts = plural(len(plans), "audited host", "audited hosts")
	}
	switch {
	case s.Changes == 0:
		fmt.Fprintf(&b, "nothing to change on %s%s; nothing changed\n", hosts, tail)
	case !opts.Applying:
		verb := "need"
		if s.Restarts == 1 {
			verb = "needs"
		}
		fmt.Fprintf(&b, "%s on %s, %d %s a broker restart%s; nothing changed (run with --apply)\n",
			plural(s.Changes, "change", "changes"), plural(s.Hosts, "host", "hosts"), s.Restarts, verb, tail)
	case tail != "":
		fmt.Fprintf(&b, "%s\n", strings.TrimPrefix(tail, "; "))
	}
	io.WriteString(w, b.String())
}

// renderHost writes one host's part of RenderPlan.
func renderHost(b *strings.Builder, p HostPlan) {
	if len(p.Changes) == 0 && len(p.Manual) == 0 && len(p.Warnings) == 0 && len(p.Infeasible) == 0 {
		fmt.Fprintf(b, "%s: nothing to change\n", p.Host)
		return
	}
	fmt.Fprintf(b, "%s:\n", p.Host)
	for _, c := range p.Changes {
		fmt.Fprintf(b, "  %s: %s %s → %s (%s)", c.Rule, c.Target, showFrom(c), showValue(c.To), scope(c))
		if c.RestartRequired {
			b.WriteString(" [restart required]")
		}
		b.WriteString("\n")
		if c.Persist && c.Kind != KindSysctl {
			fmt.Fprintf(b, "      in %s\n", c.PersistPath)
		}
		if c.Note != "" {
			for _, n := range strings.Split(c.Note, "\n") {
				fmt.Fprintf(b, "      %s\n", n)
			}
		}
	}
	if len(p.Infeasible) > 0 {
		b.WriteString("  cannot apply on this host (not planned):\n")
		for _, c := range p.Infeasible {
			fmt.Fprintf(b, "    %s: %s → %s: %s\n      instead: %s\n", c.Rule, c.Target, showValue(c.To), c.Reason, c.Instead)
		}
	}
	if len(p.Manual) > 0 {
		b.WriteString("  cannot fix automatically:\n")
		for _, m := range p.Manual {
			fmt.Fprintf(b, "    %s: %s\n", m.Rule, m.Action)
		}
	}
	if len(p.Warnings) > 0 {
		b.WriteString("  warnings:\n")
		for _, wn := range p.Warnings {
			fmt.Fprintf(b, "    %s\n", wn)
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
	return plural(n, "host", "hosts")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
