package report

import (
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/internal/words"
	"github.com/kaudit/kaudit/rules"
)

// Plain-text pieces of the grouped view that every human format shows
// (each escapes them its own way).

// maxActions is how many actions the first screen ranks; the rest are
// counted (every failing rule is still in the rule × cluster table).
const maxActions = 8

// patternWhat is what a pattern's hosts have: "15 fail (critical), 1
// unknown" (the worst severity), "not audited: unreachable", "all pass"
// (nothing fails or is unknown).
func patternWhat(p Pattern) string {
	if p.ErrorKind != "" {
		return "not audited: " + string(p.ErrorKind)
	}
	var parts []string
	if len(p.Fail) > 0 {
		parts = append(parts, fmt.Sprintf("%d fail (%s)", len(p.Fail), p.Worst))
	}
	if len(p.Unknown) > 0 {
		parts = append(parts, fmt.Sprintf("%d unknown", len(p.Unknown)))
	}
	if len(parts) == 0 {
		return "all pass"
	}
	return strings.Join(parts, ", ")
}

// patternRules lists a pattern's rules: "kernel-synack-wscale, somaxconn;
// unknown: broker-open-files"; "" for a clean or not audited pattern.
func patternRules(p Pattern) string {
	s := strings.Join(p.Fail, ", ")
	if len(p.Unknown) > 0 {
		if s != "" {
			s += "; "
		}
		s += "unknown: " + strings.Join(p.Unknown, ", ")
	}
	return s
}

// patternShared is what a pattern's hosts share: "kernel 6.1.0-13-amd64 ·
// Kafka 3.6.1", or how many differ ("3 kernels").
func patternShared(p Pattern) string {
	if p.ErrorKind != "" {
		return ""
	}
	return shared(p.Kernels, "kernel ", "kernels") + " · " + shared(p.Kafkas, "Kafka ", "Kafka versions")
}

func shared(values []string, one, many string) string {
	if len(values) == 1 {
		return one + values[0]
	}
	return fmt.Sprintf("%d %s", len(values), many)
}

// hostNames are the names of hosts (indices into r.Hosts).
func hostNames(r *Report, hosts []int) []string {
	out := make([]string, len(hosts))
	for k, i := range hosts {
		out[k] = r.Hosts[i].Name
	}
	return out
}

// clusterSize is "334 hosts, 9 patterns".
func clusterSize(c ClusterGroup) string {
	return words.Count(len(c.Hosts), "host", "hosts") + ", " + words.Count(len(c.Patterns), "pattern", "patterns")
}

// errorSummary is "100 not audited: 60 unreachable, 40 auth".
func errorSummary(errs []ErrorCount) string {
	n := 0
	parts := make([]string, 0, len(errs))
	for _, e := range errs {
		n += len(e.Hosts)
		parts = append(parts, fmt.Sprintf("%d %s", len(e.Hosts), e.Kind))
	}
	return fmt.Sprintf("%d not audited: %s", n, strings.Join(parts, ", "))
}

// moreActions is "+4 more actions fixing 120 hosts (every failing rule is
// in the table below)", "" when none is left out.
func moreActions(acts []Action, shown int) string {
	if len(acts) <= shown {
		return ""
	}
	return fmt.Sprintf("+%s of lower rank (every failing rule is in the rule × cluster table)", words.Count(len(acts)-shown, "more action", "more actions"))
}

// ruleStatusWord is "fail" or "unknown" for the rule × cluster table.
func ruleStatusWord(rc RuleCount) string {
	if rc.Status == rules.Unknown {
		return "unknown"
	}
	return "fail"
}
