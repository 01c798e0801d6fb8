package pipeline

import (
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// FixPlan is the remediation of one scan: the plan of every audited host,
// the hosts that have none, and what Apply will carry out or skip.
type FixPlan struct {
	Plans     []remediate.HostPlan // one per audited host kaudit may change, in report order
	Unaudited []report.Host        // hosts of the report with an Error: no plan
	Refused   []Refused            // audited hosts kaudit may not change (Refusals): no plan
	Hosts     []apply.Host         // what Apply is given, one per plan
	Skipped   []Skip               // changes of the plans that Apply will not make
	Changes   int                  // changes Apply will make
	Changing  int                  // hosts with at least one such change

	clusters map[string][]string // each host's clusters, for the changes by group
	// changing are those hosts in report order; restart those whose
	// changes need a broker restart to be in force.
	changing []string
	restart  map[string]bool
}

// Skip is one planned change Apply will not make, and why.
type Skip struct {
	Host string
	apply.Skipped
}

// Refused is an audited host kaudit does not act on, and why
// (discover.Standing.Refusal: "not proven a broker of cluster X (why)").
type Refused struct{ Host, Why string }

// Refusals are the audited hosts kaudit may not act on, by host name,
// each with why (a discover.Standing's Refusal); nil: every host.
type Refusals map[string]string

// UnknownRuleError is a rule ID the catalog does not have.
type UnknownRuleError struct{ ID string }

func (e *UnknownRuleError) Error() string { return fmt.Sprintf("no rule %q", e.ID) }

// ParseSelector selects the fixes of the rules in a comma-separated list of
// rule IDs (blanks around an ID ignored); an empty list selects every fix.
func ParseSelector(list string) (remediate.Selector, error) {
	var sel remediate.Selector
	for _, id := range strings.Split(list, ",") {
		id = strings.TrimSpace(id)
		if id == "" {
			continue
		}
		if _, ok := rules.Lookup(id); !ok {
			return sel, &UnknownRuleError{ID: id}
		}
		sel.Rules = append(sel.Rules, id)
	}
	return sel, nil
}

// plans returns the fix plan of every audited host of r that no refused
// holds (in report order), the hosts that were not audited, and the
// audited hosts refused.
func plans(r *report.Report, sel remediate.Selector, refused Refusals) (plans []remediate.HostPlan, unaudited []report.Host, not []Refused) {
	for _, h := range r.Hosts {
		if h.Error != nil {
			unaudited = append(unaudited, h)
			continue
		}
		if why, ok := refused[h.Name]; ok {
			not = append(not, Refused{Host: h.Name, Why: why})
			continue
		}
		plans = append(plans, remediate.PlanHost(h.Name, h.Facts, h.Findings, sel))
	}
	return plans, unaudited, not
}

// PlanFix plans the fixes of r's audited hosts for Apply; inv supplies each
// host's connection settings. A host in refused gets no plan: it is
// listed in FixPlan.Refused, and nothing Apply is given changes it.
func PlanFix(r *report.Report, inv []inventory.Host, sel remediate.Selector, refused Refusals) *FixPlan {
	fp := &FixPlan{clusters: report.ClustersByHost(r), restart: map[string]bool{}}
	fp.Plans, fp.Unaudited, fp.Refused = plans(r, sel, refused)
	byName := map[string]inventory.Host{}
	for _, h := range inv {
		byName[h.Name] = h
	}
	byReport := map[string]*report.Host{}
	for i := range r.Hosts {
		byReport[r.Hosts[i].Name] = &r.Hosts[i]
	}
	for _, p := range fp.Plans {
		rh := byReport[p.Host]
		todo, skipped := apply.Split(p, rh.Findings)
		for _, s := range skipped {
			fp.Skipped = append(fp.Skipped, Skip{Host: p.Host, Skipped: s})
		}
		if len(todo) > 0 {
			fp.Changes += len(todo)
			fp.Changing++
			fp.changing = append(fp.changing, p.Host)
		}
		if remediate.NeedsRestart(todo) {
			fp.restart[p.Host] = true
		}
		fp.Hosts = append(fp.Hosts, apply.Host{Inv: byName[p.Host], Facts: rh.Facts, Findings: rh.Findings, Plan: p})
	}
	return fp
}
