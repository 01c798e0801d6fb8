package report

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/internal/words"
	"github.com/kaudit/kaudit/rules"
)

func init() { Register("markdown", renderMarkdown) }

// renderMarkdown writes a GitHub-flavoured Markdown change-review document:
// summary, hosts (grouped above GroupedAbove hosts: mdGrouped), failing
// rules, unknowns and unreachable hosts (grouped: counted by kind unless
// Options.Hosts). It carries
// short texts only (title, observed → expected, reason, fix summary); the
// rationale and references stay in `kaudit explain RULE`.
func renderMarkdown(w io.Writer, r *Report, opt Options) error {
	var b strings.Builder
	mdHeader(&b, r)
	mdSummary(&b, r)
	if r.Grouped() {
		mdGrouped(&b, r, opt)
	} else {
		mdHostTable(&b, r)
	}
	if r.Grouped() && !opt.Hosts {
		mdClusterBrief(&b, r)
	} else {
		mdCluster(&b, r)
	}
	mdFailing(&b, r)
	mdUnknown(&b, r)
	mdWaived(&b, r)
	mdErrors(&b, r)
	if !r.Grouped() || opt.Hosts {
		mdNotAudited(&b, r)
	}
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

// mdHeader writes the title, when and from what, and the interrupted note.
func mdHeader(b *strings.Builder, r *Report) {
	fmt.Fprintf(b, "# %s\n\n", reportTitle)
	fmt.Fprintf(b, "Generated %s by kaudit %s", scanTime(r), mdText(cmp.Or(r.ToolVersion, "-")))
	if r.Inventory != "" {
		fmt.Fprintf(b, " from %s", mdCode(r.Inventory))
	}
	fmt.Fprintf(b, " (scan took %s).\n\n", humanDuration(r.DurationMS))
	if r.Interrupted {
		b.WriteString("> **Scan interrupted:** the results below are partial.\n\n")
	}
}

// mdSummary writes the verdict and the fleet's counts.
func mdSummary(b *strings.Builder, r *Report) {
	s := r.Summary
	b.WriteString("## Summary\n\n")
	label, detail := verdict(r)
	fmt.Fprintf(b, "**%s:** %s\n\n", label, detail)
	b.WriteString("| | |\n|---|---|\n")
	fmt.Fprintf(b, "| Hosts | %d (%d audited, %s) |\n", s.Hosts, s.Audited, words.Count(s.Unreachable, "error", "errors"))
	fmt.Fprintf(b, "| Fleet score | %s |\n", fleetScoreLong(s))
	fmt.Fprintf(b, "| Failing findings | %s |\n", failCounts(s))
	fmt.Fprintf(b, "| Not proven safe | %d unknown |\n", s.StatusCounts[string(rules.Unknown)])
	if n := s.StatusCounts[string(rules.Error)]; n > 0 {
		fmt.Fprintf(b, "| Rules not evaluated | %d error |\n", n)
	}
	b.WriteString("\n")
}

// mdHostTable writes one row per host: score, counts, kernel, Kafka, backlog.
func mdHostTable(b *strings.Builder, r *Report) {
	b.WriteString("## Hosts\n\n")
	b.WriteString("| Host | Address | Score | Critical | High | Medium | Low | Unknown | Kernel | Kafka | Backlog |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|---|---|--:|\n")
	for i := range r.Hosts {
		h := &r.Hosts[i]
		if h.Error != nil {
			fmt.Fprintf(b, "| %s | %s | **error** | - | - | - | - | - | %s | - | - |\n",
				mdText(h.Name), mdText(h.Address), mdText("not audited: "+string(h.Error.Kind)))
			continue
		}
		c := countHost(h)
		fmt.Fprintf(b, "| %s | %s | %d | %d | %d | %d | %d | %d | %s | %s | %s |\n",
			mdText(h.Name), mdText(h.Address), h.Score,
			c.Fail[rules.Critical], c.Fail[rules.High], c.Fail[rules.Medium], c.Fail[rules.Low], c.Unknown,
			mdCode(kernelRelease(h.Facts)), mdText(kafkaVersion(h.Facts)), effectiveBacklog(h.Facts))
	}
	b.WriteString("\nBacklog is the Send-Q of the Kafka listener (the effective listen backlog); - when none was seen.\n\n")
}

// mdFailing writes the failing rules, or says there are none.
func mdFailing(b *strings.Builder, r *Report) {
	b.WriteString("## Failing rules\n\n")
	fails := r.GroupByRule(rules.Fail)
	if len(fails) == 0 {
		b.WriteString("No rule fails on any audited host.\n\n")
		return
	}
	b.WriteString("| Severity | Rule | Hosts | Observed → expected | Reason | Fix |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, g := range fails {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n",
			g.Severity, mdRule(g), mdHosts(g.Hosts), mdSample(g), mdText(reasonWithSource(g)), mdFix(g.Sample.Fix))
	}
	b.WriteString("\n")
}

// mdUnknown writes the rules not proven safe, when there are any.
func mdUnknown(b *strings.Builder, r *Report) {
	unknown := r.GroupByRule(rules.Unknown)
	if len(unknown) == 0 {
		return
	}
	b.WriteString("## Not proven safe (unknown)\n\n")
	b.WriteString("kaudit could not settle these rules from what it gathered. Treat them as unsafe until someone checks them.\n\n")
	b.WriteString("| Severity | Rule | Hosts | Reason | To settle it |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, g := range unknown {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n",
			g.Severity, mdRule(g), mdHosts(g.Hosts), mdText(reasonWithSource(g)), mdFix(g.Sample.Fix))
	}
	b.WriteString("\n")
}

// mdWaived writes the waived rules, when there are any.
func mdWaived(b *strings.Builder, r *Report) {
	waived := r.GroupByRule(rules.Waived)
	if len(waived) == 0 {
		return
	}
	b.WriteString("## Waived\n\n")
	b.WriteString("Accepted by a waiver file: shown here, kept out of the score and the exit code.\n\n")
	b.WriteString("| Severity | Rule | Hosts | Waiver |\n|---|---|---|---|\n")
	for _, g := range waived {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", g.Severity, mdRule(g), mdHosts(g.Hosts), mdText(waiverNote(g.Sample)))
	}
	b.WriteString("\n")
}

// mdErrors writes the rules that could not be evaluated, when there are any.
func mdErrors(b *strings.Builder, r *Report) {
	errs := r.GroupByRule(rules.Error)
	if len(errs) == 0 {
		return
	}
	b.WriteString("## Rules not evaluated (error)\n\n")
	b.WriteString("| Severity | Rule | Hosts | Reason |\n|---|---|---|---|\n")
	for _, g := range errs {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", g.Severity, mdRule(g), mdHosts(g.Hosts), mdText(g.Sample.Reason))
	}
	b.WriteString("\n")
}

// mdNotAudited writes the hosts that could not be audited, when there are any.
func mdNotAudited(b *strings.Builder, r *Report) {
	hosts := errorHosts(r)
	if len(hosts) == 0 {
		return
	}
	b.WriteString("## Hosts not audited\n\n")
	b.WriteString("| Host | Address | Error | Message |\n|---|---|---|---|\n")
	for _, h := range hosts {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdText(h.Name), mdText(h.Address), mdText(string(h.Error.Kind)), mdText(h.Error.Message))
	}
	b.WriteString("\n")
}

func fleetScoreLong(s Summary) string {
	if s.Audited == 0 {
		return "n/a (no host audited)"
	}
	return fmt.Sprintf("%d (mean of audited hosts), minimum %d", s.Score, s.MinScore)
}

func mdRule(g RuleGroup) string {
	if g.Title == "" {
		return mdCode(g.Rule)
	}
	return mdCode(g.Rule) + " " + mdText(g.Title)
}

func mdHosts(hosts []string) string {
	return fmt.Sprintf("%d: %s", len(hosts), mdText(hostList(hosts, maxListedHosts)))
}

func mdSample(g RuleGroup) string {
	f := g.Sample
	if f.Observed == "" && f.Expected == "" {
		return ""
	}
	s := mdCode(cmp.Or(f.Observed, "?")) + " → " + mdCode(cmp.Or(f.Expected, "?"))
	if len(g.Hosts) > 1 {
		s = mdText(g.Hosts[0]) + ": " + s
	}
	return s
}

func mdFix(f *rules.Fix) string {
	if f == nil {
		return ""
	}
	s := mdText(f.Summary)
	if f.Restart && !strings.Contains(strings.ToLower(f.Summary), "restart") {
		s += " (broker restart required)"
	}
	return s
}

// mdText escapes s for a Markdown table cell on one line: control
// characters, bidi overrides and invalid UTF-8 made visible (termsafe),
// Markdown
// punctuation is backslash-escaped (so text never turns into links, HTML or
// emphasis) and newlines are folded. An underscore inside a word
// (tcp_max_syn_backlog) is left alone: GFM does not emphasise it.
func mdText(s string) string {
	s = termsafe.Line(oneLine(s))
	var b strings.Builder
	rs := []rune(s)
	for i, c := range rs {
		switch c {
		case '\\', '`', '*', '[', ']', '<', '>', '|', '&', '!', '#', '~':
			b.WriteByte('\\')
		case '_':
			inWord := i > 0 && i < len(rs)-1 && isWordRune(rs[i-1]) && isWordRune(rs[i+1])
			if !inWord {
				b.WriteByte('\\')
			}
		}
		b.WriteRune(c)
	}
	return b.String()
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// mdCode renders s as an inline code span safe inside a table cell.
func mdCode(s string) string {
	s = termsafe.Line(oneLine(s))
	if s == "" {
		return ""
	}
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + strings.ReplaceAll(s, "|", `\|`) + fence
}

// mdClusterHead is the cluster section's title, heading and quorum line,
// of the per-host and the grouped report alike.
func mdClusterHead(b *strings.Builder, c *Cluster) {
	b.WriteString("## Cluster\n\n")
	b.WriteString(mdText(clusterHeading(c)) + "\n\n")
	if q := clusterQuorumLine(c); q != "" {
		b.WriteString(mdText(q) + "\n\n")
	}
}

// mdCluster writes the cluster as Kafka described it (scan --bootstrap):
// its brokers with their hosts and proof, and the cluster-level findings.
func mdCluster(b *strings.Builder, r *Report) {
	c := r.Cluster
	if c == nil {
		return
	}
	mdClusterHead(b, c)
	b.WriteString("| Broker | Advertised | Host | Proof | Kafka | Running settings |\n|---|---|---|---|---|---|\n")
	for _, br := range c.Brokers {
		host, proof := cmp.Or(br.Host, "-"), cmp.Or(string(br.Proof), "-")
		if br.Host != "" {
			proof += " (by " + br.By + "): " + br.Detail
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s |\n", br.NodeID, mdText(br.Advertised), mdText(host), mdText(proof), mdText(cmp.Or(clusterKafkaLine(br), "-")), mdText(cmp.Or(clusterConfigLine(br), "-")))
	}
	b.WriteString("\n")
	for _, p := range c.Problems {
		fmt.Fprintf(b, "- **%s** %s: %s\n", mdText(p.Label()), mdCode(p.Rule), mdText(p.Message+waivedBy(p)))
	}
	if len(c.Problems) > 0 {
		b.WriteString("\n")
	}
}
