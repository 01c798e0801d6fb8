package remediate

import (
	"fmt"
	"io"
	"strings"

	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/internal/termui"
)

// Summary counts what a set of plans would do.
type Summary struct {
	Changes  int // changes planned
	Hosts    int // hosts with at least one change
	Restarts int // hosts with at least one change that needs a broker restart
	Manual   int // manual actions
}

// Summarize counts plans.
func Summarize(plans []HostPlan) Summary {
	var s Summary
	for _, p := range plans {
		s.Changes += len(p.Changes)
		s.Manual += len(p.Manual)
		if len(p.Changes) > 0 {
			s.Hosts++
		}
		if p.RestartRequired() {
			s.Restarts++
		}
	}
	return s
}

// PlanOptions tune RenderPlan's text.
type PlanOptions struct {
	// Width wraps each line at word boundaries with a hanging indent so
	// that it fits this many terminal columns; 0 means no limit.
	Width int
}

// RenderPlan writes plans as text for a human deciding whether to apply
// them: per host each change ("rule: target from → to (runtime+persist)
// [restart required]") with its note, what kaudit cannot fix, the
// warnings, then one summary line. Nothing in it depends on the clock or
// map order, so it is golden-tested.
func RenderPlan(w io.Writer, plans []HostPlan) { RenderPlanOpts(w, plans, PlanOptions{}) }

// RenderPlanOpts is RenderPlan with options. Every value that came from
// a host (names, targets, from/to values, paths, notes quoting a host's
// kernel or version) is made visible with termsafe before it is written.
func RenderPlanOpts(w io.Writer, plans []HostPlan, opt PlanOptions) {
	var b strings.Builder
	// put writes s at indent, wrapped to the width with later lines at
	// indent+hang.
	put := func(indent, hang int, s string) {
		pad := strings.Repeat(" ", indent)
		width := 0
		if opt.Width > 0 {
			width = max(opt.Width-indent, termui.MinWidth/2)
		}
		for _, l := range termui.Wrap(s, width, hang) {
			b.WriteString(pad + l + "\n")
		}
	}
	ts := termsafe.Line
	for i, p := range plans {
		if i > 0 {
			b.WriteString("\n")
		}
		if len(p.Changes) == 0 && len(p.Manual) == 0 && len(p.Warnings) == 0 {
			put(0, 4, ts(p.Host)+": nothing to change")
			continue
		}
		put(0, 4, ts(p.Host)+":")
		for _, c := range p.Changes {
			line := fmt.Sprintf("%s: %s %s → %s (%s)", c.Rule, ts(c.Target), ts(showFrom(c)), ts(showValue(c.To)), scope(c))
			if c.RestartRequired {
				line += " [restart required]"
			}
			put(2, 4, line)
			if c.Persist && c.Kind != KindSysctl {
				put(6, 2, "in "+ts(c.PersistPath))
			}
			if c.Note != "" {
				for _, n := range strings.Split(c.Note, "\n") {
					put(6, 2, ts(n))
				}
			}
		}
		if len(p.Manual) > 0 {
			b.WriteString("  cannot fix automatically:\n")
			for _, m := range p.Manual {
				put(4, 4, ts(m.Rule)+": "+ts(m.Action))
			}
		}
		if len(p.Warnings) > 0 {
			b.WriteString("  warnings:\n")
			for _, wn := range p.Warnings {
				put(4, 4, ts(wn))
			}
		}
	}
	if len(plans) > 0 {
		b.WriteString("\n")
	}
	put(0, 4, summaryLine(Summarize(plans), len(plans)))
	io.WriteString(w, b.String())
}

// summaryLine is the plan's last line: "68 changes on 6 hosts, 4 need a
// broker restart; nothing changed (run with --apply)".
func summaryLine(s Summary, hosts int) string {
	if s.Changes == 0 {
		return fmt.Sprintf("nothing to change on %s; nothing changed", plural(hosts, "host", "hosts"))
	}
	verb := "need"
	if s.Restarts == 1 {
		verb = "needs"
	}
	return fmt.Sprintf("%s on %s, %d %s a broker restart; nothing changed (run with --apply)",
		plural(s.Changes, "change", "changes"), plural(s.Hosts, "host", "hosts"), s.Restarts, verb)
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

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
