package rules

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"

	version "github.com/hashicorp/go-version"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/redact"
)

// kafkaVer is what kaudit knows about the broker's Apache Kafka version.
type kafkaVer struct {
	desc         string // "Apache Kafka 2.8.1", "Confluent Platform 7.1.0 (Apache Kafka 3.1, confirmed mapping)"
	configurable Answer // the broker has KIP-764 (socket.listen.backlog.size)
	reason       string // why configurable holds (mapping argument) or why it is unknown
	apache       bool   // read as Apache Kafka (reason is "Apache Kafka X")
	noVersion    bool   // the broker was found but its version not read
	ak           string // the Apache Kafka version it is or ships ("3.1"); "" when not known
}

var kafkaVersionRE = regexp.MustCompile(`^(\d+(?:\.\d+)+)`)

// kafkaNumber parses the leading dotted number of a jar version ("7.2.1-ccs" → 7.2.1).
func kafkaNumber(s string) (*version.Version, bool) {
	m := kafkaVersionRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return nil, false
	}
	v, err := version.NewVersion(m[1])
	return v, err == nil
}

var ak32 = version.Must(version.NewVersion("3.2"))
var cp72 = version.Must(version.NewVersion("7.2"))

func minorOf(v *version.Version) string {
	seg := v.Segments()
	return fmt.Sprintf("%d.%d", seg[0], seg[1])
}

// ConfluentToApache maps a Confluent Platform version to the Apache Kafka
// major.minor it ships, from confluent.yaml. ok is false when the CP minor is
// not in the table; confirmed is false for rows marked [U].
func ConfluentToApache(cp string) (ak string, confirmed bool, ok bool) {
	v, good := kafkaNumber(cp)
	if !good {
		return "", false, false
	}
	if row := confluent.row(minorOf(v)); row != nil {
		return row.AK, row.Confirmed, true
	}
	return "", false, false
}

func apacheVerdict(v *version.Version) Answer {
	if v.GreaterThanOrEqual(ak32) {
		return AnswerYes
	}
	return AnswerNo
}

// confluentVerdict decides KIP-764 for a CP version: a backport row
// (kip764_from) first, then, for any CP version, monotonicity around the
// confirmed rows 7.1 and 7.2.
func (t confluentTable) verdict(raw string, v *version.Version) (Answer, string, *cpMapping) {
	row := t.row(minorOf(v))
	if row != nil && row.KIP764From != "" {
		if from, ok := kafkaNumber(row.KIP764From); ok && v.GreaterThanOrEqual(from) {
			return AnswerYes, fmt.Sprintf("Confluent Platform %s has socket.listen.backlog.size backported (Confluent's KIP-764 backport, from CP %s; the line ships Apache Kafka %s)", raw, row.KIP764From, row.AK), row
		}
	}
	a := AnswerNo
	if v.GreaterThanOrEqual(cp72) {
		a = AnswerYes
	}
	backport := ""
	if row != nil && row.KIP764From != "" {
		backport = fmt.Sprintf("; Confluent backported socket.listen.backlog.size to this line only from CP %s", row.KIP764From)
	}
	mono := "CP 7.1 = AK 3.1 and CP 7.2 = AK 3.2 are confirmed and Confluent's numbering is monotonic, so "
	if a == AnswerYes {
		mono += "any CP ≥ 7.2 ships AK ≥ 3.2 [D]"
	} else {
		mono += "any CP < 7.2 ships AK < 3.2 [D]"
	}
	switch {
	case row == nil:
		return a, fmt.Sprintf("Confluent Platform %s is not in the CP→AK table; %s", raw, mono), nil
	case row.Confirmed:
		return a, fmt.Sprintf("Confluent Platform %s ships Apache Kafka %s (confirmed mapping)%s", raw, row.AK, backport), row
	default:
		return a, fmt.Sprintf("Confluent Platform %s ships Apache Kafka %s by the usual pattern (mapping unconfirmed [U]); the verdict does not depend on it: %s%s", raw, row.AK, mono, backport), row
	}
}

func (c *evalCtx) kafkaVersion() kafkaVer {
	k := c.f.Kafka
	if k == nil {
		return kafkaVer{reason: c.noKafka()}
	}
	kv := kafkaVersionOf(k)
	if kv.noVersion {
		kv.reason = c.notGathered(facts.SecKafka, fmt.Sprintf("Kafka broker found (pid %d) but its version", k.PID))
	}
	return kv
}

// kafkaVersionOf reads k's version with the shipped Confluent table.
func kafkaVersionOf(k *facts.Kafka) kafkaVer { return confluent.kafkaVersion(k) }

func (t confluentTable) kafkaVersion(k *facts.Kafka) kafkaVer {
	raw := strings.TrimSuffix(strings.TrimSpace(k.Version), "-ccs")
	if raw == "" {
		return kafkaVer{noVersion: true, reason: fmt.Sprintf("Kafka broker found (pid %d) but its version not gathered", k.PID)}
	}
	v, ok := kafkaNumber(raw)
	if !ok || len(v.Segments()) < 2 {
		return kafkaVer{reason: fmt.Sprintf("Kafka version %q is not a version number", k.Version)}
	}
	switch strings.ToLower(k.Distribution) {
	case "apache":
		return kafkaVer{desc: "Apache Kafka " + raw, configurable: apacheVerdict(v), reason: "Apache Kafka " + raw, apache: true, ak: raw}
	case "confluent":
		a, why, row := t.verdict(raw, v)
		desc := "Confluent Platform " + raw
		if row != nil {
			desc += " (Apache Kafka " + row.AK
			if !row.Confirmed {
				desc += ", unconfirmed mapping"
			}
			desc += ")"
		}
		kv := kafkaVer{desc: desc, configurable: a, reason: why}
		if row != nil {
			kv.ak = row.AK
		}
		return kv
	}
	// Distribution not recorded: settle only if both readings agree.
	ta := apacheVerdict(v)
	tc, _, _ := t.verdict(raw, v)
	if ta == tc {
		return kafkaVer{desc: "Kafka " + raw + " (distribution unknown)", configurable: ta,
			reason: "Kafka " + raw + " (distribution not recorded; read as Apache Kafka or as Confluent Platform, the verdict is the same)"}
	}
	return kafkaVer{desc: "Kafka " + raw + " (distribution unknown)",
		reason: fmt.Sprintf("Kafka version %s: the distribution (Apache or Confluent, whose jars end in -ccs) was not recorded and the two readings disagree on ≥ 3.2", raw)}
}

// kafkaConfigRead reports whether server.properties was read.
func (c *evalCtx) kafkaConfigRead() bool {
	k := c.f.Kafka
	if k == nil {
		return false
	}
	if _, bad := c.f.Sections[facts.SecKafkaConf]; bad {
		return false
	}
	return k.Properties != nil || k.Config != ""
}

// kafkaBacklogProp is socket.listen.backlog.size as the broker uses it
// (backlogProp), whatever its version honours; false when server.properties
// was not read.
func (c *evalCtx) kafkaBacklogProp() (int, bool) {
	if !c.kafkaConfigRead() {
		return 0, false
	}
	return backlogProp(c.f.Kafka)
}

// brokerProp is key's value as the broker uses it: the running broker's
// when the cluster reported it (note then says so, naming the file's value
// when it differs: runningObserved), else server.properties'.
func (c *evalCtx) brokerProp(key string) (v string, set bool, note string) {
	raw, inFile := c.f.Kafka.Properties[key]
	if run, ok := c.f.Kafka.Running[key]; ok {
		return run.Value, true, c.runningObserved(key, run, raw, inFile)
	}
	return raw, inFile, ""
}

// runningObserved says what the running broker uses for key and where
// from, and what server.properties says when it differs: "the file says
// 4096 (path:line), the running broker uses 50 (default): the file is not
// the one this broker read".
func (c *evalCtx) runningObserved(key string, run facts.RunningConfig, file string, inFile bool) string {
	s := fmt.Sprintf("%s=%s on the running broker (%s)", key, shown(run.Value), run.Source)
	switch {
	case !c.kafkaConfigRead() || strings.TrimSpace(file) == run.Value:
	case !inFile && run.Source != "default":
		s += fmt.Sprintf("; the file%s does not set it", c.propWhere(key))
	case inFile:
		s = fmt.Sprintf("the file says %s%s, the running broker uses %s (%s)", shown(strings.TrimSpace(file)), c.propWhere(key), shown(run.Value), run.Source)
		if run.Source == "default" || run.Source == "static" {
			s += ": the file is not the one this broker read"
		} else {
			s += ": a dynamic config overrides the file"
		}
	}
	return s
}

// maxShown is the longest host or cluster value a finding quotes whole.
const maxShown = 256

// shown is v as a finding quotes it: whole up to maxShown bytes, else a
// short excerpt with its size (redact.Excerpt), so that a host's 1 MB
// value is not copied into every finding that names it.
func shown(v string) string {
	if len(v) <= maxShown {
		return v
	}
	return redact.Excerpt(v)
}

// notAnInteger says which value of prop is not an integer: the running
// broker's (the one it uses, whatever the file says) or the file's, at
// its line; shown as an excerpt (redact.Excerpt: short, secrets hidden).
func (c *evalCtx) notAnInteger(prop, v string, running bool) string {
	if running {
		return fmt.Sprintf("%s=%s on the running broker is not an integer", prop, redact.Excerpt(v))
	}
	return fmt.Sprintf("%s=%s%s is not an integer", prop, redact.Excerpt(v), c.propWhere(prop))
}

func (c *evalCtx) propWhere(key string) string {
	k := c.f.Kafka
	if k == nil || k.Config == "" {
		return ""
	}
	if line, ok := k.PropertyLines[key]; ok && line > 0 {
		return fmt.Sprintf(" (%s:%d)", k.Config, line)
	}
	return " (" + k.Config + ")"
}

// noKafkaFinding is skip when the host has no broker, unknown when looking
// for one failed (permission denied, error).
func (c *evalCtx) noKafkaFinding() Finding {
	if st, ok := c.f.Sections[facts.SecKafka]; ok && (st.State == facts.SectionDenied || st.State == facts.SectionError) {
		return unknown(c.notGathered(facts.SecKafka, "Kafka broker"))
	}
	return skip(c.noKafka())
}

func evalKafkaBacklogHardcoded(c *evalCtx) Finding {
	if c.f.Kafka == nil {
		return c.noKafkaFinding()
	}
	kv := c.kafkaVersion()
	if kv.configurable == AnswerUnknown {
		return unknown(kv.reason)
	}
	fd := Finding{Observed: kv.desc, Expected: "Apache Kafka ≥ 3.2 (Confluent Platform ≥ 7.2, or " + confluent.backports() + ")"}
	if kv.configurable == AnswerYes {
		fd.Status = Pass
		fd.Reason = kv.reason + " ≥ 3.2: the listen backlog is configurable (socket.listen.backlog.size, KIP-764)"
		if !kv.apache {
			fd.Reason = kv.reason + "; the listen backlog is configurable (socket.listen.backlog.size, KIP-764)"
		}
		return fd
	}
	fd.Status = Fail
	fd.Reason = kv.reason + ": before Apache Kafka 3.2 the listen backlog is hard-coded to 50 (the JDK default, KIP-764), so a restart or preferred leader election overflows the SYN queue and triggers SYN cookies"
	manual := "upgrade Kafka to ≥ 3.2"
	if strings.EqualFold(c.f.Kafka.Distribution, "confluent") {
		manual = "upgrade Confluent Platform to ≥ 7.2 (Apache Kafka ≥ 3.2)"
		if from := confluent.backportFor(c.f.Kafka.Version); from != "" {
			manual = "upgrade Confluent Platform to " + from + " or a later patch of its line (socket.listen.backlog.size backported), or to ≥ 7.2"
		}
	}
	fd.Fix = &Fix{
		Summary: "upgrade Kafka to a release with socket.listen.backlog.size (KIP-764)",
		Manual:  manual + ", then set socket.listen.backlog.size (see kafka-backlog-config)",
		Alternatives: []Alternative{
			{Text: "until the upgrade: a kernel with commit 909172a makes the cookies harmless (see kernel-synack-wscale)"},
			{Text: "until the upgrade: net.ipv4.tcp_syncookies=0 (SYNs dropped when the 50-entry queue is full; clients retry with a connect delay)", Sysctl: map[string]string{KeySyncookies: "0"}},
		},
	}
	return fd
}

func evalKafkaBacklogConfig(c *evalCtx) Finding {
	if c.f.Kafka == nil {
		return c.noKafkaFinding()
	}
	kv := c.kafkaVersion()
	switch kv.configurable {
	case AnswerUnknown:
		return unknown(kv.reason)
	case AnswerNo:
		return skip("Kafka < 3.2 ignores socket.listen.backlog.size; see kafka-backlog-hardcoded (" + kv.desc + ")")
	}
	if !c.kafkaConfigRead() {
		return unknown(c.notGathered(facts.SecKafkaConf, "server.properties"))
	}
	target := c.p.ListenBacklog
	fd := Finding{Expected: fmt.Sprintf(">= %d", target)}
	raw, set := c.f.Kafka.Properties[PropBacklog]
	n, ok := c.kafkaBacklogProp()
	run, running := c.f.Kafka.Running[PropBacklog]
	switch {
	case !ok && running:
		return unknown(c.notAnInteger(PropBacklog, run.Value, true))
	case !ok:
		return unknown(c.notAnInteger(PropBacklog, raw, false))
	case running:
		fd.Observed = c.runningObserved(PropBacklog, run, raw, set)
	case !set:
		fd.Observed = fmt.Sprintf("socket.listen.backlog.size unset (default %d)", DefaultListenBacklog)
	default:
		fd.Observed = fmt.Sprintf("socket.listen.backlog.size=%d%s", n, c.propWhere(PropBacklog))
	}
	capNote := ""
	if s, _, ok := c.sysctlInt(KeySomaxconn); ok && s < n {
		capNote = fmt.Sprintf("; note: net.core.somaxconn=%d caps it, the effective backlog is min(%d, %d) = %d", s, n, s, s)
	}
	if n >= target {
		fd.Status = Pass
		fd.Reason = fmt.Sprintf("socket.listen.backlog.size %d ≥ target %d%s", n, target, capNote)
		return fd
	}
	fd.Status = Fail
	fd.Reason = fmt.Sprintf("socket.listen.backlog.size %d < target %d: the broker's SYN and accept queues hold only %d pending connections, too few for a restart or leader election%s", n, target, n, capNote)
	fd.Fix = &Fix{
		Summary:         fmt.Sprintf("set socket.listen.backlog.size=%d in server.properties and restart the broker", target),
		KafkaProperties: map[string]string{PropBacklog: fmt.Sprint(target)},
		Bounds:          map[string]Bound{PropBacklog: {Dir: AtLeast}},
		Restart:         true,
	}
	return fd
}

func evalListenBacklogEffective(c *evalCtx) Finding {
	if c.f.Listeners == nil {
		return unknown(c.notGathered(facts.SecListeners, "listeners"))
	}
	if _, bad := c.f.Sections[facts.SecListeners]; bad && len(c.f.Listeners) == 0 {
		return unknown(c.notGathered(facts.SecListeners, "listeners"))
	}
	on := c.kafkaListeners()
	if len(on) == 0 {
		r := fmt.Sprintf("no listener on port %d: broker down?", c.kafkaPort())
		if c.f.Kafka == nil {
			r += " (and no Kafka process found)"
		}
		return unknown(r)
	}
	target := c.p.ListenBacklog
	low := on[0]
	var obs []string
	for _, l := range on {
		obs = append(obs, fmt.Sprintf("Send-Q %d on %s:%d", l.Backlog, l.Addr, l.Port))
		if l.Backlog < low.Backlog {
			low = l
		}
	}
	fd := Finding{Observed: strings.Join(obs, ", "), Expected: fmt.Sprintf("Send-Q >= %d", target)}
	if low.Backlog >= target {
		fd.Status = Pass
		fd.Reason = fmt.Sprintf("the Kafka listener runs with an effective backlog of %d ≥ target %d", low.Backlog, target)
		return fd
	}
	fd.Status = Fail
	fd.Reason, fd.Fix = c.backlogLimits(fd.Observed, target)
	return fd
}

// kafkaListeners are the listeners on the Kafka port.
func (c *evalCtx) kafkaListeners() []facts.Listener {
	port := c.kafkaPort()
	var on []facts.Listener
	for _, l := range c.f.Listeners {
		if l.Port == port {
			on = append(on, l)
		}
	}
	return on
}

// backlogLimits says which side limits a listener's effective backlog
// (min(requested, somaxconn) at listen() time) below target, and the fix.
func (c *evalCtx) backlogLimits(observed string, target int) (string, *Fix) {
	fix := &Fix{Restart: true}
	var limits []string
	somax, _, somaxOK := c.sysctlInt(KeySomaxconn)
	if somaxOK && somax < target {
		limits = append(limits, fmt.Sprintf("net.core.somaxconn=%d", somax))
		fix.Sysctl = map[string]string{KeySomaxconn: fmt.Sprint(max(target, c.p.Somaxconn))}
		fix.atLeast(KeySomaxconn)
	}
	kv := c.kafkaVersion()
	requested := "Kafka's requested backlog"
	switch {
	case c.f.Kafka == nil:
	case kv.configurable == AnswerNo:
		requested = fmt.Sprintf("Kafka's hard-coded backlog %d (before 3.2)", DefaultListenBacklog)
		limits = append(limits, requested)
		fix.Manual = "upgrade Kafka to ≥ 3.2 and set socket.listen.backlog.size (see kafka-backlog-hardcoded)"
	case kv.configurable == AnswerYes:
		if n, ok := c.kafkaBacklogProp(); ok {
			requested = fmt.Sprintf("socket.listen.backlog.size %d", n)
			if n < target {
				limits = append(limits, requested)
				fix.KafkaProperties = map[string]string{PropBacklog: fmt.Sprint(target)}
				fix.atLeast(PropBacklog)
			}
		}
	}
	somaxDesc := "net.core.somaxconn"
	if somaxOK {
		somaxDesc = fmt.Sprintf("net.core.somaxconn %d", somax)
	}
	reason := fmt.Sprintf("%s < target %d: the kernel uses min(%s, %s), taken when the broker called listen()", observed, target, requested, somaxDesc)
	if len(limits) > 0 {
		fix.Summary = "raise " + strings.Join(limits, " and ") + ", then restart the broker so it listens again"
		return reason + "; limited by " + strings.Join(limits, " and "), fix
	}
	fix.Summary = "restart the broker so it listens with the current backlog settings"
	fix.Manual = cmp.Or(fix.Manual, "restart the broker (one at a time) so its listener picks up the raised backlog")
	return reason + "; both look high enough now, so the broker has probably not been restarted since they were raised", fix
}
