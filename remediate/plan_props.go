package remediate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/remediate/props"
	"github.com/kaudit/kaudit/rules"
)

// addBacklogParts takes from an unselected failing finding only what
// raises the listen backlog.
func (p *planner) addBacklogParts(fd rules.Finding) {
	for _, k := range []string{keySomaxconn, keySynBacklog} {
		if v, ok := fd.Fix.Sysctl[k]; ok {
			p.addSysctl(fd.Rule, k, v, fd.Fix.BoundOf(k), true)
		}
	}
	if v, ok := fd.Fix.KafkaProperties[propBacklog]; ok {
		p.addProperty(fd, propBacklog, v, true)
	}
}

func (p *planner) addProperty(fd rules.Finding, key, value string, pulled bool) {
	rule := fd.Rule
	if key == propRcvbuf && value == "-1" {
		p.offer(rule, rcvbufAlternative(fd.Fix))
		return
	}
	k := p.f.Kafka
	if k == nil {
		p.addManual(rule, fmt.Sprintf("no Kafka broker found on this host: set %s=%s in its server.properties by hand", key, value))
		return
	}
	if key == propBacklog {
		switch a, _ := rules.BacklogConfigurable(k); a {
		case rules.AnswerUnknown:
			p.addManual(rule, fmt.Sprintf("set %s=%s in server.properties if the broker is Apache Kafka ≥ 3.2 / Confluent Platform ≥ 7.2 (its version %q, distribution %q, could not be read)",
				key, value, k.Version, k.Distribution))
			return
		case rules.AnswerNo:
			// One "upgrade Kafka" per host: the Fix's own text where a
			// rule has one (added with the Fix), else kaudit's, in finish.
			if fd.Fix.Manual != "" {
				p.addManual(rule, fd.Fix.Manual)
				p.upgradeText = true
			}
			p.upgrades = appendRule(p.upgrades, rule)
			return
		}
	}
	if k.Config == "" {
		p.addManual(rule, fmt.Sprintf("server.properties not found (the broker's command line names none; set the config path in the inventory): set %s=%s by hand", key, value))
		return
	}
	if err := props.Check(key, value); err != nil {
		p.warn("%s: %v", rule, err)
		return
	}
	b := fd.Fix.BoundOf(key)
	r, ok := p.prop[key]
	if !ok {
		p.prop[key] = &request{to: value, rules: []string{rule}, pulled: pulled, asks: []ask{{rule, value, b}}}
		return
	}
	r.pulled = r.pulled && pulled
	r.merge(ask{rule, value, b})
}

// offer lists an alternative as a manual action, never applying it;
// socket.receive.buffer.bytes=-1 is offered once per host, whichever rule
// asks for it.
func (p *planner) offer(rule string, alt rules.Alternative) {
	if alt.KafkaProperties[propRcvbuf] == "-1" {
		if p.offeredRcvbuf {
			return
		}
		p.offeredRcvbuf = true
	}
	if alt.Text == "" {
		p.addManual(rule, RcvbufAlternative)
		return
	}
	p.addManual(rule, "alternative (not applied): "+alt.Text)
}

// rcvbufAlternative is fix's own socket.receive.buffer.bytes=-1
// alternative, or one without a text (offer then uses RcvbufAlternative).
func rcvbufAlternative(fix *rules.Fix) rules.Alternative {
	if fix != nil {
		for _, alt := range fix.Alternatives {
			if alt.KafkaProperties[propRcvbuf] == "-1" {
				return alt
			}
		}
	}
	return rules.Alternative{KafkaProperties: map[string]string{propRcvbuf: "-1"}}
}

// propertyChanges are the server.properties edits, and a warning when the
// planned listen backlog would be capped by somaxconn.
func (p *planner) propertyChanges() []Change {
	var changes []Change
	for _, key := range sortedKeys(p.prop) {
		r := p.prop[key]
		if r.conflict != "" {
			continue // listed in Conflicts
		}
		from := p.f.Kafka.Properties[key]
		if strings.TrimSpace(from) == r.to {
			continue
		}
		c := Change{
			Host: p.host, Rules: r.rules, Kind: KindKafkaProperty, Target: key,
			From: from, To: r.to, Persist: true, PersistPath: p.f.Kafka.Config, RestartRequired: true,
			Note: "read by the broker at start: " + RestartByHand,
		}
		if r.pulled {
			c.Note = pulledNote + "\n" + c.Note
		}
		if key == propBacklog {
			if n, err := strconv.Atoi(r.to); err == nil {
				if s, ok := p.somaxconnAfter(); ok && rules.EffectiveBacklog(n, s) < n {
					p.warn("%s=%d will be capped at net.core.somaxconn=%d (effective backlog = min of the two)", propBacklog, n, s)
				}
			}
		}
		if c = p.keep(c); c.Kind != "" {
			changes = append(changes, c)
		}
	}
	return changes
}

// checkBacklog warns when tcp_syncookies=0 is planned and the effective
// listen backlog of the broker would not grow.
func (p *planner) checkBacklog(changes []Change) {
	if fd, ok := p.byRule[ruleListenEffective]; ok && fd.Status == rules.Pass {
		return // already large enough for the profile
	}
	before, okBefore := p.effectiveBacklogNow()
	after, okAfter := p.effectiveBacklogAfter()
	if okBefore && okAfter && after > before {
		return
	}
	var why string
	switch {
	case p.f.Kafka != nil && backlogFixed(p.f.Kafka):
		why = fmt.Sprintf("%s fixes the listen backlog at %d (KIP-764): upgrade to Kafka ≥ 3.2 / Confluent Platform ≥ 7.2 and raise socket.listen.backlog.size and net.core.somaxconn",
			kafkaName(p.f.Kafka), rules.DefaultListenBacklog)
	case !okAfter:
		why = "kaudit cannot tell the broker's listen backlog (Kafka version or net.core.somaxconn unknown): check it with `ss -ltn` (Send-Q) and raise socket.listen.backlog.size and net.core.somaxconn"
	default:
		why = "raise socket.listen.backlog.size and net.core.somaxconn"
	}
	if okAfter {
		p.warn("tcp_syncookies=0 is planned but the broker's listen backlog stays at %d: beyond %d pending connections SYNs are dropped and clients wait ~1 s to retry; %s", after, after, why)
	} else {
		p.warn("tcp_syncookies=0 is planned but no larger listen backlog could be planned: %s", why)
	}
}

// effectiveBacklogNow is the Kafka listener's Send-Q when observed, else
// min(Kafka backlog, somaxconn) from the facts.
func (p *planner) effectiveBacklogNow() (int, bool) {
	best := -1
	for _, l := range p.f.Listeners {
		if l.Port == p.f.KafkaPort && l.Backlog > best {
			best = l.Backlog
		}
	}
	if best >= 0 {
		return best, true
	}
	kb, ok1 := p.kafkaBacklog(false)
	s, ok2 := atoi(p.f.Sysctl[keySomaxconn])
	if !ok1 || !ok2 {
		return 0, false
	}
	return rules.EffectiveBacklog(kb, s), true
}

func (p *planner) effectiveBacklogAfter() (int, bool) {
	kb, ok1 := p.kafkaBacklog(true)
	s, ok2 := p.somaxconnAfter()
	if !ok1 || !ok2 {
		return 0, false
	}
	return rules.EffectiveBacklog(kb, s), true
}

// kafkaBacklog is the backlog the broker asks for (now, or after the plan).
func (p *planner) kafkaBacklog(after bool) (int, bool) {
	k := p.f.Kafka
	if r, planned := p.prop[propBacklog]; after && planned && k != nil && !p.cannot(KindKafkaProperty, propBacklog) {
		if a, _ := rules.BacklogConfigurable(k); a == rules.AnswerYes {
			return atoi(r.to)
		}
	}
	return rules.RequestedBacklog(k)
}

func (p *planner) somaxconnAfter() (int, bool) {
	if r, ok := p.sysctl[keySomaxconn]; ok && r.conflict == "" && !p.cannot(KindSysctl, keySomaxconn) {
		return atoi(r.to)
	}
	return atoi(p.f.Sysctl[keySomaxconn])
}

// backlogFixed reports whether the broker is known to ignore
// socket.listen.backlog.size.
func backlogFixed(k *facts.Kafka) bool {
	a, _ := rules.BacklogConfigurable(k)
	return a == rules.AnswerNo
}

func kafkaName(k *facts.Kafka) string {
	switch k.Distribution {
	case "confluent":
		return "Confluent Platform " + k.Version
	case "apache":
		return "Apache Kafka " + k.Version
	}
	return "Kafka " + k.Version
}

// KafkaProperties returns the server.properties edits of the plan, by
// file (normally one), as props.Set takes them.
func (p HostPlan) KafkaProperties() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, c := range p.Changes {
		if c.Kind == KindKafkaProperty {
			if out[c.PersistPath] == nil {
				out[c.PersistPath] = map[string]string{}
			}
			out[c.PersistPath][c.Target] = c.To
		}
	}
	return out
}
