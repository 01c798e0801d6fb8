package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/rules"
)

func init() { Register("prometheus", renderPrometheus) }

// renderPrometheus writes the Prometheus text exposition format (0.0.4) for
// node_exporter's textfile collector: write it to a temp file in the
// collector directory and rename it to *.prom. It is WriteMetrics with the
// per host × rule families on (a textfile is one scan, read whole).
func renderPrometheus(w io.Writer, r *Report, _ Options) error {
	return WriteMetrics(w, r, MetricOptions{HostRules: true})
}

// MetricOptions choose what WriteMetrics writes.
type MetricOptions struct {
	// HostRules adds the per host × rule families (kaudit_rule_status,
	// kaudit_rule_failed, kaudit_rule_source): hosts × rules series, so
	// kaudit serve writes them only behind --host-rules.
	HostRules bool
	// LastAudited, when set, is when a host was last audited
	// (kaudit serve remembers it across scans, so that a host that
	// became unreachable keeps its time); nil: the report's start for
	// every audited host.
	LastAudited func(host string) (time.Time, bool)
}

// WriteMetrics writes the metrics of one report, the one home of kaudit's
// metric set (scan -f prometheus and kaudit serve's /metrics): gauges
// only, no sample carries a timestamp (the scan time is its own gauge),
// every known series is present (0 when none), and a series repeated
// (a host listed twice) is written once, the first time.
//
// Fleet view (bounded: rules × severities + states, whatever the fleet):
//
//	kaudit_hosts{state}                          hosts by state: audited, or the error kind (unreachable, auth, hostkey, timeout, protocol)
//	kaudit_rule_failing_hosts{rule,severity}     hosts on which the rule fails (every catalog rule, 0 when none)
//	kaudit_rule_unknown_hosts{rule,severity}     hosts on which the rule is unknown (not proven safe)
//	kaudit_fleet_score                           mean score of audited hosts (absent when none)
//	kaudit_scan_timestamp_seconds                scan start, Unix seconds
//	kaudit_scan_duration_seconds                 scan wall time
//
// Per host (hosts × a few):
//
//	kaudit_host_up{host}                         1 audited, 0 could not be audited
//	kaudit_host_error{host,kind}                 1, hosts that could not be audited only
//	kaudit_host_score{host}                      audited hosts only: an unaudited host has no score
//	kaudit_host_failed_findings{host,severity}   failing rules by severity, audited hosts (every severity, 0 when none)
//	kaudit_host_last_audit_timestamp_seconds{host}  when the host was last audited
//
// Per host × rule (MetricOptions.HostRules):
//
//	kaudit_rule_status{host,rule,severity,status}  1, the current status
//	kaudit_rule_failed{host,rule,severity}         1 when the status is fail, else 0
//	kaudit_rule_source{host,rule,source}           1, rules that name the evidence that decided them
//
// kaudit_rule_failed is 0 for unknown: alert on kaudit_rule_unknown_hosts
// (or kaudit_rule_status{status="unknown"}) to catch rules not proven safe.
func WriteMetrics(w io.Writer, r *Report, o MetricOptions) error {
	p := NewPromWriter(w)
	promFleetFamilies(p, r)
	promHostFamilies(p, r, o)
	if o.HostRules {
		promRuleFamilies(p, r)
	}
	promScanFamilies(p, r)
	promClusterFamilies(p, r.Cluster)
	return p.Close()
}

// promFleetFamilies writes the bounded fleet view: hosts by state and
// failing (unknown) hosts per rule and severity.
func promFleetFamilies(p *PromWriter, r *Report) {
	states := map[string]int{"audited": 0}
	order := []string{"audited"}
	for _, k := range facts.ErrorKinds {
		states[string(k)] = 0
		order = append(order, string(k))
	}
	for _, h := range uniqueHosts(r.Hosts) {
		s := "audited"
		if h.Error != nil {
			s = string(h.Error.Kind)
		}
		if _, ok := states[s]; !ok {
			order = append(order, s)
		}
		states[s]++
	}
	p.Family("kaudit_hosts", "gauge", "Hosts of the last kaudit scan by state: audited, or why not (unreachable, auth, hostkey, timeout, protocol).")
	for _, s := range order {
		p.Sample("kaudit_hosts", float64(states[s]), "state", s)
	}

	type key struct{ rule, sev string }
	var keys []key
	failing, unknown := map[key]int{}, map[key]int{}
	add := func(k key) {
		if _, ok := failing[k]; !ok {
			keys = append(keys, k)
			failing[k], unknown[k] = 0, 0
		}
	}
	for _, ru := range rules.Catalog() {
		add(key{ru.ID, string(ru.Severity)})
	}
	for _, h := range uniqueHosts(r.Hosts) {
		for _, f := range firstPerRule(h.Findings) {
			k := key{f.Rule, string(f.Severity)}
			add(k)
			switch f.Status {
			case rules.Fail:
				failing[k]++
			case rules.Unknown:
				unknown[k]++
			}
		}
	}
	p.Family("kaudit_rule_failing_hosts", "gauge", "Hosts of the last kaudit scan on which the rule fails, by the finding's severity (0 when none).")
	for _, k := range keys {
		p.Sample("kaudit_rule_failing_hosts", float64(failing[k]), "rule", k.rule, "severity", k.sev)
	}
	p.Family("kaudit_rule_unknown_hosts", "gauge", "Hosts of the last kaudit scan on which the rule is unknown: the facts could not prove it safe (0 when none).")
	for _, k := range keys {
		p.Sample("kaudit_rule_unknown_hosts", float64(unknown[k]), "rule", k.rule, "severity", k.sev)
	}
}

// promRuleFamilies writes the per host × rule families: status, failed, source.
func promRuleFamilies(p *PromWriter, r *Report) {
	p.Family("kaudit_rule_status", "gauge", "Status of a kaudit rule on a host: 1 for the status it has (pass, fail, warn, unknown, skip, error, waived).")
	for _, h := range uniqueHosts(r.Hosts) {
		for _, f := range firstPerRule(h.Findings) {
			p.Sample("kaudit_rule_status", 1, "host", h.Name, "rule", f.Rule, "severity", string(f.Severity), "status", string(f.Status))
		}
	}

	p.Family("kaudit_rule_failed", "gauge", "1 when a kaudit rule fails on a host, 0 otherwise (unknown is 0: see kaudit_rule_status).")
	for _, h := range uniqueHosts(r.Hosts) {
		for _, f := range firstPerRule(h.Findings) {
			v := 0.0
			if f.Status == rules.Fail {
				v = 1
			}
			p.Sample("kaudit_rule_failed", v, "host", h.Name, "rule", f.Rule, "severity", string(f.Severity))
		}
	}

	p.Family("kaudit_rule_source", "gauge", "1 for the evidence that decided a rule with several sources on a host (kernel-synack-wscale: probe, changelog, version, none).")
	for _, h := range uniqueHosts(r.Hosts) {
		for _, f := range firstPerRule(h.Findings) {
			if f.Source != "" {
				p.Sample("kaudit_rule_source", 1, "host", h.Name, "rule", f.Rule, "source", string(f.Source))
			}
		}
	}
}

// promHostFamilies writes the per-host families: up, error, score,
// failed findings by severity, last audit time.
func promHostFamilies(p *PromWriter, r *Report, o MetricOptions) {
	p.Family("kaudit_host_up", "gauge", "1 when kaudit audited the host in its last scan, 0 when it could not (see kaudit_host_error).")
	for _, h := range uniqueHosts(r.Hosts) {
		v := 1.0
		if h.Error != nil {
			v = 0
		}
		p.Sample("kaudit_host_up", v, "host", h.Name)
	}

	p.Family("kaudit_host_error", "gauge", "1 for a host kaudit could not audit, labelled with the error kind (unreachable, auth, hostkey, timeout, protocol).")
	for _, h := range uniqueHosts(r.Hosts) {
		if h.Error != nil {
			p.Sample("kaudit_host_error", 1, "host", h.Name, "kind", string(h.Error.Kind))
		}
	}

	p.Family("kaudit_host_score", "gauge", "kaudit compliance score of an audited host, 0 to 100 (100 minus the weights of failing rules).")
	for _, h := range uniqueHosts(r.Hosts) {
		if h.Error == nil {
			p.Sample("kaudit_host_score", float64(h.Score), "host", h.Name)
		}
	}

	p.Family("kaudit_host_failed_findings", "gauge", "Rules failing on an audited host, by severity (0 when none).")
	for _, h := range uniqueHosts(r.Hosts) {
		if h.Error != nil {
			continue
		}
		n := map[rules.Severity]int{}
		for _, f := range firstPerRule(h.Findings) {
			if f.Status == rules.Fail {
				n[f.Severity]++
			}
		}
		for _, s := range rules.Severities() {
			p.Sample("kaudit_host_failed_findings", float64(n[s]), "host", h.Name, "severity", string(s))
		}
	}

	p.Family("kaudit_host_last_audit_timestamp_seconds", "gauge", "When kaudit last audited the host, Unix time in seconds (the start of that scan).")
	for _, h := range uniqueHosts(r.Hosts) {
		t, ok := r.StartedAt, h.Error == nil && !r.StartedAt.IsZero()
		if o.LastAudited != nil {
			t, ok = o.LastAudited(h.Name)
		}
		if ok {
			p.Sample("kaudit_host_last_audit_timestamp_seconds", unixSeconds(t), "host", h.Name)
		}
	}
}

// promScanFamilies writes the fleet score and the scan's time and duration.
func promScanFamilies(p *PromWriter, r *Report) {
	p.Family("kaudit_fleet_score", "gauge", "Mean kaudit score of the audited hosts.")
	if r.Summary.Audited > 0 {
		p.Sample("kaudit_fleet_score", float64(r.Summary.Score))
	}

	if !r.StartedAt.IsZero() {
		p.Family("kaudit_scan_timestamp_seconds", "gauge", "Start of the kaudit scan, Unix time in seconds.")
		p.Sample("kaudit_scan_timestamp_seconds", unixSeconds(r.StartedAt))
	}
	p.Family("kaudit_scan_duration_seconds", "gauge", "Wall time of the kaudit scan in seconds.")
	p.Sample("kaudit_scan_duration_seconds", float64(r.DurationMS)/1000)
}

// unixSeconds is t in Unix seconds to the millisecond (a report keeps milliseconds).
func unixSeconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1e3 }

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

// uniqueHosts keeps the first host of each name, as the per-host series
// do, so that the fleet counts agree with them.
func uniqueHosts(hs []Host) []*Host {
	seen := map[string]bool{}
	out := make([]*Host, 0, len(hs))
	for i := range hs {
		k := promEscapeLabel(hs[i].Name)
		if !seen[k] {
			seen[k] = true
			out = append(out, &hs[i])
		}
	}
	return out
}

// PromWriter writes the text exposition format one family at a time, so
// that a family without samples is left out entirely (HELP and TYPE
// included). A series repeated within a family (the same host name
// listed twice, two names the same once made safe) is written once, the
// first time: Prometheus fails a whole scrape, and the textfile collector
// a whole file, on a duplicate series.
type PromWriter struct {
	w       *bufio.Writer
	head    string
	samples []string
	seen    map[string]bool
	err     error
}

// NewPromWriter writes to w; Close flushes.
func NewPromWriter(w io.Writer) *PromWriter { return &PromWriter{w: bufio.NewWriter(w)} }

// Family starts family name of type typ (gauge or counter) with its HELP.
func (p *PromWriter) Family(name, typ, help string) {
	p.flush()
	p.head = "# HELP " + name + " " + promEscapeHelp(help) + "\n# TYPE " + name + " " + typ + "\n"
}

// Sample adds one series; labels are name, value pairs.
func (p *PromWriter) Sample(name string, v float64, labels ...string) {
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

func (p *PromWriter) flush() {
	if len(p.samples) > 0 && p.err == nil {
		_, p.err = p.w.WriteString(p.head + strings.Join(p.samples, ""))
	}
	p.head, p.samples, p.seen = "", nil, nil
}

// Close writes the last family and flushes.
func (p *PromWriter) Close() error {
	p.flush()
	if p.err != nil {
		return p.err
	}
	return p.w.Flush()
}

// MaxLabelBytes bounds a label value (a host name): longer values are cut
// at a character boundary and end in "…" (Prometheus's
// label_value_length_limit would otherwise reject the whole scrape).
const MaxLabelBytes = 256

// promEscapeLabel makes a label value's control characters, bidi
// overrides and invalid UTF-8 (which the format does not allow) visible
// (termsafe, so a newline becomes the two characters \n), bounds it
// (MaxLabelBytes), then escapes backslash and double quote as the format
// asks.
var promLabelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

func promEscapeLabel(s string) string {
	s = termsafe.Line(s)
	if len(s) > MaxLabelBytes {
		cut := MaxLabelBytes - len("…")
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return promLabelEscaper.Replace(s)
}

// promEscapeHelp escapes HELP text: backslash and newline.
var promHelpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

func promEscapeHelp(s string) string { return promHelpEscaper.Replace(s) }

// MaxClusterBrokerSeries bounds the kaudit_cluster_broker series of one
// cluster: discover.MaxBrokers, the most brokers a scan takes from a
// cluster (pipeline's TestClusterBoundsAgree keeps them equal); a report
// read from a file with more lists the first and counts the rest.
const MaxClusterBrokerSeries = 5000

// promClusterFamilies writes the cluster as Kafka described it (scan
// --bootstrap): one series per broker (its host and proof) and the
// cluster-level findings per rule. Nothing without a cluster.
func promClusterFamilies(p *PromWriter, c *Cluster) {
	if c == nil {
		return
	}
	p.Family("kaudit_cluster_broker", "gauge", "A broker the cluster lists: 1, labelled with the audited host it was matched to (empty: none), the proof (proven, contradicted, unproven) and the Kafka release its ApiVersions answer proves it is at least (empty: none).")
	listed := c.Brokers[:min(len(c.Brokers), MaxClusterBrokerSeries)]
	for _, b := range listed {
		p.Sample("kaudit_cluster_broker", 1, "cluster", c.ID, "node_id", strconv.Itoa(int(b.NodeID)), "advertised", b.Advertised, "host", b.Host, "proof", string(b.Proof), "kafka_at_least", b.KafkaAtLeast)
	}
	if n := len(c.Brokers) - len(listed); n > 0 {
		p.Family("kaudit_cluster_brokers_unlisted", "gauge", fmt.Sprintf("Brokers of the cluster past the first %d, which have no kaudit_cluster_broker series (a report from a file; a scan refuses such a cluster).", MaxClusterBrokerSeries))
		p.Sample("kaudit_cluster_brokers_unlisted", float64(n), "cluster", c.ID)
	}
	promClusterProblems(p, c, "kaudit_cluster_problems", "Cluster-level findings (broker-unaudited, host-not-a-broker, broker-meta-mismatch, advertised-shared, broker-version-mismatch, advertised-port-unbound) no waiver accepts, by rule and severity.", false)
	promClusterProblems(p, c, "kaudit_cluster_problems_waived", "Cluster-level findings a waiver accepts, by rule and severity (the severity they had).", true)
}

// promClusterProblems is the family name counting c's cluster findings
// by rule and severity, the waived ones or the others.
func promClusterProblems(p *PromWriter, c *Cluster, name, help string, waived bool) {
	counts := map[[2]string]int{}
	var order [][2]string
	for _, pr := range c.Problems {
		if (pr.Waived != "") != waived {
			continue
		}
		k := [2]string{pr.Rule, pr.Severity}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	if len(order) == 0 && waived {
		return
	}
	p.Family(name, "gauge", help)
	for _, k := range order {
		p.Sample(name, float64(counts[k]), "cluster", c.ID, "rule", k[0], "severity", k[1])
	}
}
