package remediate

import (
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/remediate/sysctld"
	"github.com/kaudit/kaudit/rules"
)

func (p *planner) addSysctl(rule, key, value string, b rules.Bound, pulled bool) {
	value = sysctld.Fold(value)
	if key == keySyncookies && value == "0" {
		if !p.kernelAffected {
			p.warn("not disabling SYN cookies (%s asks for %s=0): %s is %s, and on a fixed kernel cookies are the better defence against a full SYN queue",
				rule, key, ruleKernel, kernelStatusText(p.kernelStatus))
			return
		}
		p.syncookiesOff = true
	}
	if !sysctld.ValidKey(key) || !sysctld.ValidValue(value) {
		p.warn("%s asks for %s = %q, which kaudit will not write (outside the allowed characters)", rule, key, value)
		return
	}
	r, ok := p.sysctl[key]
	if !ok {
		p.sysctl[key] = &request{to: value, rules: []string{rule}, pulled: pulled, asks: []ask{{rule, value, b}}}
		return
	}
	r.rules = appendRule(r.rules, rule)
	r.pulled = r.pulled && pulled
	if key == keySyncookies {
		if r.to != value {
			p.warn("rules ask for different values of %s (%s, %s): planning 0, the mitigation for the kernel bug", key, r.to, value)
			r.to = "0"
		}
		return
	}
	r.merge(ask{rule, value, b})
}

const pulledNote = "included because tcp_syncookies=0 drops SYNs once the listen backlog is full"

// sysctlChanges are the sysctl requests that change the running value or
// the managed file, and a warning for each file that would override it.
func (p *planner) sysctlChanges() []Change {
	f := p.f
	var changes []Change
	persistSet := map[string]string{}
	for _, key := range sortedKeys(p.sysctl) {
		r := p.sysctl[key]
		if r.conflict != "" {
			continue // listed in Conflicts
		}
		from := sysctld.Fold(f.Sysctl[key])
		runtime := from != r.to
		pv, persisted := f.Persisted[key]
		persist := !persisted || sysctld.Fold(pv.Value) != r.to
		if !runtime && !persist {
			continue
		}
		c := Change{
			Host: p.host, Rules: r.rules, Kind: KindSysctl, Target: key,
			From: from, To: r.to, Runtime: runtime, Persist: persist,
		}
		if persist {
			c.PersistPath = sysctld.ManagedPath
		}
		var notes []string
		if !runtime && persisted {
			notes = append(notes, fmt.Sprintf("already %s now, but %s line %d sets %s for the next boot", from, pv.File, pv.Line, pv.Value))
		}
		if r.pulled {
			notes = append(notes, pulledNote)
		}
		c.Note = strings.Join(append(notes, p.sysctlNotes(&c)...), "\n")
		if c = p.keep(c); c.Kind == "" {
			continue // the host does not allow it: listed in Infeasible
		}
		if c.Persist {
			persistSet[key] = r.to
		}
		changes = append(changes, c)
	}
	for _, o := range sysctld.Overriders(f.Persisted, persistSet, sysctld.ManagedPath) {
		p.warn("%s: %s line %d sets %s and wins over %s at boot, so the change would revert on reboot: remove or change that line (kaudit edits only its own file)",
			o.Key, o.File, o.Line, o.Value, sysctld.ManagedPath)
	}
	return changes
}

// sysctlNotes are the trade-offs of the two sysctls that need them; a
// runtime somaxconn change needs a broker restart to reach its listener.
func (p *planner) sysctlNotes(c *Change) []string {
	switch c.Target {
	case keySyncookies:
		if c.To != "0" {
			return []string{SyncookiesDefaultNote}
		}
		notes := []string{SyncookiesTradeOff}
		if p.kernelStatus == rules.Unknown {
			notes = append(notes, "planned because the kernel could not be settled as fixed")
		}
		return notes
	}
	if rules.ReachesBrokerOnRestart(c.Target) && p.f.Kafka != nil && c.Runtime {
		c.RestartRequired = true
		return []string{somaxconnRestartNote}
	}
	return nil
}

// PersistedSysctls returns the sysctl values the plan writes to the
// managed file (the set argument of sysctld.Render).
func (p HostPlan) PersistedSysctls() map[string]string {
	out := map[string]string{}
	for _, c := range p.Changes {
		if c.Kind == KindSysctl && c.Persist {
			out[c.Target] = c.To
		}
	}
	return out
}

// kernelStatusText is the kernel rule's status as the plan says it.
func kernelStatusText(s rules.Status) string {
	if s == "" {
		return "not evaluated"
	}
	return string(s)
}
