package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kaudit/kaudit/rules"
)

// actionTarget is one change a failing finding's fix asks for: key merges
// the findings that ask for the same change, text says it.
type actionTarget struct{ key, text string }

// fixTargets are the changes f's fix asks for: its sysctls (one change),
// its server.properties keys, the broker's open-files limit, and its
// manual step (a kernel or Kafka upgrade, a disk to mount: kaudit cannot
// make it, and a rule may need it as well as the others); a fix with none
// of these is its summary, and a finding without a fix is its rule.
func fixTargets(f rules.Finding) []actionTarget {
	fx := f.Fix
	if fx == nil {
		return []actionTarget{{key: "rule:" + f.Rule, text: "fix " + f.Rule + " (kaudit explain " + f.Rule + ")"}}
	}
	var out []actionTarget
	if len(fx.Sysctl) > 0 {
		text := sysctlChange(fx)
		out = append(out, actionTarget{key: "sysctl:" + text, text: text})
	}
	if len(fx.KafkaProperties) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(fx.KafkaProperties)) {
			kv = append(kv, k+"="+fx.KafkaProperties[k])
		}
		text := "set " + strings.Join(kv, ", ") + " in server.properties"
		out = append(out, actionTarget{key: "props:" + text, text: text})
	}
	if fx.NoFile > 0 {
		text := fmt.Sprintf("raise the broker's open-files limit to %d", fx.NoFile)
		out = append(out, actionTarget{key: "nofile:" + text, text: text})
	}
	if fx.Manual != "" {
		out = append(out, actionTarget{key: "manual:" + fx.Manual, text: fx.Manual})
	}
	if len(out) == 0 {
		out = append(out, actionTarget{key: "fix:" + fx.Summary, text: fx.Summary})
	}
	return out
}

// sysctlChange says a fix's sysctls: "raise net.core.somaxconn to 4096",
// "lower vm.dirty_background_ratio to 5, raise vm.dirty_ratio to 60", or
// past two keys "set net.core.rmem_default, net.core.rmem_max and 4 more
// sysctls".
func sysctlChange(fx *rules.Fix) string {
	keys := slices.Sorted(maps.Keys(fx.Sysctl))
	if len(keys) > 2 {
		return fmt.Sprintf("set %s, %s and %d more sysctls", keys[0], keys[1], len(keys)-2)
	}
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		verb := "set"
		if b, ok := fx.Bounds[k]; ok && b.Field == 0 {
			switch b.Dir {
			case rules.AtLeast:
				verb = "raise"
			case rules.AtMost:
				verb = "lower"
			}
		}
		parts = append(parts, verb+" "+k+" to "+fx.Sysctl[k])
	}
	return strings.Join(parts, ", ")
}

// actions are the changes the failing findings ask for, each with the
// hosts and rules it fixes, ranked by severity weight × hosts (Rank).
func actions(r *Report, member [][]int, clusters []ClusterGroup) []Action {
	type acc struct {
		Action
		rules, clusters map[string]bool
		lastHost        int
	}
	idx := map[string]*acc{}
	var order []*acc
	for i := range r.Hosts {
		for _, f := range r.Hosts[i].Findings {
			if f.Status != rules.Fail {
				continue
			}
			for _, t := range fixTargets(f) {
				a := idx[t.key]
				if a == nil {
					a = &acc{Action: Action{Text: t.text}, rules: map[string]bool{}, clusters: map[string]bool{}, lastHost: -1}
					idx[t.key] = a
					order = append(order, a)
				}
				if f.Severity.Rank() > a.Severity.Rank() {
					a.Severity = f.Severity
				}
				a.rules[f.Rule] = true
				if a.lastHost != i {
					a.lastHost = i
					a.Hosts = append(a.Hosts, i)
					for _, c := range member[i] {
						a.clusters[clusters[c].Name] = true
					}
				}
			}
		}
	}
	out := make([]Action, 0, len(order))
	for _, a := range order {
		a.Rules, a.Clusters = slices.Sorted(maps.Keys(a.rules)), slices.Sorted(maps.Keys(a.clusters))
		out = append(out, a.Action)
	}
	slices.SortStableFunc(out, func(a, b Action) int {
		return cmp.Or(cmp.Compare(b.Rank(), a.Rank()), cmp.Compare(b.Severity.Rank(), a.Severity.Rank()))
	})
	return out
}
