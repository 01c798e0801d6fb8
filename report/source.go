package report

import "strings"

// HostSource is one host's verdict source within a RuleGroup.
type HostSource struct {
	Host   string
	Source string // rules.Source* constant
}

// sourceText says which evidence decided a group's findings: "decided by:
// probe" when every host agrees, else per host ("decided by: a changelog,
// b probe"); "" when the rule names no source.
func sourceText(g RuleGroup) string {
	if len(g.Sources) == 0 {
		return ""
	}
	same := true
	for _, s := range g.Sources {
		same = same && s.Source == g.Sources[0].Source
	}
	if same {
		return "decided by: " + g.Sources[0].Source
	}
	parts := make([]string, len(g.Sources))
	for i, s := range g.Sources {
		parts[i] = s.Host + " " + s.Source
	}
	return "decided by: " + strings.Join(parts, ", ")
}

// reasonWithSource is the group's sample reason followed by sourceText.
func reasonWithSource(g RuleGroup) string {
	if src := sourceText(g); src != "" {
		return g.Sample.Reason + " (" + src + ")"
	}
	return g.Sample.Reason
}
