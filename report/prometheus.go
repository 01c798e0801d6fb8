package report

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/rules"
)

func init() { Register("prometheus", renderPrometheus) }

// renderPrometheus writes the Prometheus text exposition format (0.0.4) for
// node_exporter's textfile collector: write it to a temp file in the
// collector directory and rename it to *.prom. No sample carries a
// timestamp (the collector rejects them); the scan time is its own gauge.
//
// Families:
//
//	kaudit_rule_status{host,rule,severity,status}  1, one series per host × rule (the current status)
//	kaudit_rule_failed{host,rule,severity}         1 when the status is fail, else 0
//	kaudit_rule_source{host,rule,source}           1, rules that name the evidence that decided them
//	kaudit_host_score{host}                        audited hosts only: an unaudited host has no score
//	kaudit_host_up{host}                           1 audited, 0 could not be audited
//	kaudit_host_error{host,kind}                   1, hosts that could not be audited only
//	kaudit_fleet_score                             mean score of audited hosts (absent when none)
//	kaudit_scan_timestamp_seconds                  scan start, Unix seconds
//	kaudit_scan_duration_seconds                   scan wall time
//
// kaudit_rule_failed is 0 for unknown: alert on
// kaudit_rule_status{status="unknown"} to catch rules not proven safe.
func renderPrometheus(w io.Writer, r *Report, _ Options) error {
	bw := bufio.NewWriter(w)
	p := promWriter{w: bw}
	promRuleFamilies(&p, r)
	promHostFamilies(&p, r)
	promScanFamilies(&p, r)
	p.flush()
	if p.err != nil {
		return p.err
	}
	return bw.Flush()
}

// promRuleFamilies writes the per host × rule families: status, failed, source.
func promRuleFamilies(p *promWriter, r *Report) {
	p.family("kaudit_rule_status", "Status of a kaudit rule on a host: 1 for the status it has (pass, fail, warn, unknown, skip, error).")
	for _, h := range r.Hosts {
		for _, f := range firstPerRule(h.Findings) {
			p.sample("kaudit_rule_status", 1, "host", h.Name, "rule", f.Rule, "severity", string(f.Severity), "status", string(f.Status))
		}
	}

	p.family("kaudit_rule_failed", "1 when a kaudit rule fails on a host, 0 otherwise (unknown is 0: see kaudit_rule_status).")
	for _, h := range r.Hosts {
		for _, f := range firstPerRule(h.Findings) {
			v := 0.0
			if f.Status == rules.Fail {
				v = 1
			}
			p.sample("kaudit_rule_failed", v, "host", h.Name, "rule", f.Rule, "severity", string(f.Severity))
		}
	}

	p.family("kaudit_rule_source", "1 for the evidence that decided a rule with several sources on a host (kernel-synack-wscale: probe, changelog, version, none).")
	for _, h := range r.Hosts {
		for _, f := range firstPerRule(h.Findings) {
			if f.Source != "" {
				p.sample("kaudit_rule_source", 1, "host", h.Name, "rule", f.Rule, "source", f.Source)
			}
		}
	}
}

// promHostFamilies writes the per-host families: score, up, error.
func promHostFamilies(p *promWriter, r *Report) {
	p.family("kaudit_host_score", "kaudit compliance score of an audited host, 0 to 100 (100 minus the weights of failing rules).")
	for _, h := range r.Hosts {
		if h.Error == nil {
			p.sample("kaudit_host_score", float64(h.Score), "host", h.Name)
		}
	}

	p.family("kaudit_host_up", "1 when kaudit audited the host, 0 when it could not (see kaudit_host_error).")
	for _, h := range r.Hosts {
		v := 1.0
		if h.Error != nil {
			v = 0
		}
		p.sample("kaudit_host_up", v, "host", h.Name)
	}

	p.family("kaudit_host_error", "1 for a host kaudit could not audit, labelled with the error kind (unreachable, auth, hostkey, timeout, protocol).")
	for _, h := range r.Hosts {
		if h.Error != nil {
			p.sample("kaudit_host_error", 1, "host", h.Name, "kind", string(h.Error.Kind))
		}
	}
}

// promScanFamilies writes the fleet score and the scan's time and duration.
func promScanFamilies(p *promWriter, r *Report) {
	p.family("kaudit_fleet_score", "Mean kaudit score of the audited hosts.")
	if r.Summary.Audited > 0 {
		p.sample("kaudit_fleet_score", float64(r.Summary.Score))
	}

	if !r.StartedAt.IsZero() {
		p.family("kaudit_scan_timestamp_seconds", "Start of the kaudit scan, Unix time in seconds.")
		p.sample("kaudit_scan_timestamp_seconds", float64(r.StartedAt.UnixNano())/1e9)
	}
	p.family("kaudit_scan_duration_seconds", "Wall time of the kaudit scan in seconds.")
	p.sample("kaudit_scan_duration_seconds", float64(r.DurationMS)/1000)
}

// firstPerRule keeps the first finding of each rule: one series per
// host × rule even if a report carries a rule twice for a host.
func firstPerRule(fs []rules.Finding) []rules.Finding {
	seen := map[string]bool{}
	out := make([]rules.Finding, 0, len(fs))
	for _, f := range fs {
		if !seen[f.Rule] {
			seen[f.Rule] = true
			out = append(out, f)
		}
	}
	return out
}

// promWriter buffers one family at a time so that a family without
// samples is left out entirely (HELP and TYPE included).
//
// A series repeated within a family (the same host name listed twice) is
// written once, the first time: the textfile collector rejects a file
// with duplicate series.
type promWriter struct {
	w       *bufio.Writer
	head    string
	samples []string
	seen    map[string]bool
	err     error
}

func (p *promWriter) family(name, help string) {
	p.flush()
	p.head = "# HELP " + name + " " + promEscapeHelp(help) + "\n# TYPE " + name + " gauge\n"
}

// sample adds one series; labels are name, value pairs.
func (p *promWriter) sample(name string, v float64, labels ...string) {
	var b strings.Builder
	b.WriteString(name)
	if len(labels) > 0 {
		b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(labels[i])
			b.WriteString(`="`)
			b.WriteString(promEscapeLabel(labels[i+1]))
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	series := b.String()
	if p.seen[series] {
		return
	}
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	p.seen[series] = true
	p.samples = append(p.samples, series+" "+strconv.FormatFloat(v, 'f', -1, 64)+"\n")
}

func (p *promWriter) flush() {
	if len(p.samples) > 0 && p.err == nil {
		_, p.err = p.w.WriteString(p.head + strings.Join(p.samples, ""))
	}
	p.head, p.samples, p.seen = "", nil, nil
}

// promEscapeLabel makes a label value's control characters, bidi
// overrides and invalid UTF-8 (which the format does not allow) visible
// (termsafe, so a newline becomes the two characters \n), then escapes
// backslash and double quote as the format asks.
var promLabelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

func promEscapeLabel(s string) string {
	return promLabelEscaper.Replace(termsafe.Line(s))
}

// promEscapeHelp escapes HELP text: backslash and newline.
var promHelpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

func promEscapeHelp(s string) string { return promHelpEscaper.Replace(s) }
