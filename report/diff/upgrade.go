package diff

import (
	"cmp"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// Upgrade sorts the status changes between a host's findings now and the
// same host's findings after a modelled change (package whatif).
type Upgrade struct {
	Fixes        []Change `json:"fixes"`         // fail, unknown or error now; pass, warn or skip after
	Introduces   []Change `json:"introduces"`    // not fail now, fail after
	StillFailing []Change `json:"still_failing"` // fail now and after
	Other        []Change `json:"other_changes"` // any other status change (e.g. pass → unknown)
}

// NewUpgrade returns an Upgrade with empty (not nil) lists.
func NewUpgrade() Upgrade {
	return Upgrade{Fixes: []Change{}, Introduces: []Change{}, StillFailing: []Change{}, Other: []Change{}}
}

// AddHost compares the findings of now and after (the same host), rule by
// rule in after's order.
func (u *Upgrade) AddHost(now, after *report.Host) {
	olds := map[string]rules.Finding{}
	for _, f := range now.Findings {
		olds[f.Rule] = f
	}
	for _, nf := range after.Findings {
		of := olds[nf.Rule]
		c := Change{Host: after.Name, Rule: nf.Rule, Severity: nf.Severity, OldStatus: of.Status, NewStatus: nf.Status, OldObserved: of.Observed, NewObserved: nf.Observed, Reason: nf.Reason}
		switch {
		case of.Status == rules.Fail && nf.Status == rules.Fail:
			u.StillFailing = append(u.StillFailing, c)
		case nf.Status == rules.Fail:
			u.Introduces = append(u.Introduces, c)
		case (of.Status == rules.Fail || of.Status == rules.Unknown || of.Status == rules.Error) && passing(nf.Status):
			u.Fixes = append(u.Fixes, c)
		case of.Status != nf.Status:
			u.Other = append(u.Other, c)
		}
	}
}

// Sort orders every list by severity, rule, host.
func (u *Upgrade) Sort() {
	for _, cs := range [][]Change{u.Fixes, u.Introduces, u.StillFailing, u.Other} {
		sortChanges(cs)
	}
}

// FactChanges lists the facts (audit state, kernel, distribution, Kafka
// version, sysctls) that differ between two reports of the same host.
func FactChanges(old, new *report.Host) []FactChange { return factChanges(old, new) }

// WriteUpgrade renders u as four titled tables (the upgrade would fix,
// introduce, leave failing, and other changes), then facts when any.
func WriteUpgrade(out io.Writer, u Upgrade, facts []FactChange) error {
	ew := &errWriter{w: out}
	hdr := "  HOST\tRULE\tSEVERITY\tNOW → AFTER\tOBSERVED AFTER\n"
	for _, s := range []struct {
		title string
		cs    []Change
	}{{"The upgrade would fix", u.Fixes}, {"The upgrade would introduce", u.Introduces}, {"Still failing after the upgrade", u.StillFailing}, {"Other changes", u.Other}} {
		fmt.Fprintf(ew, "\n%s (%d)\n", s.title, len(s.cs))
		if len(s.cs) == 0 {
			continue
		}
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, hdr)
		for _, c := range s.cs {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s → %s\t%s\n", c.Host, c.Rule, c.Severity, status(c.OldStatus), status(c.NewStatus), oneLine(c.NewObserved, 60))
		}
		tw.Flush()
	}
	if len(facts) > 0 {
		fmt.Fprintf(ew, "\nModelled fact changes (%d)\n", len(facts))
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "  HOST\tFACT\tNOW\tAFTER\n")
		for _, f := range facts {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", f.Host, f.Fact, cmp.Or(f.Old, "—"), cmp.Or(f.New, "—"))
		}
		tw.Flush()
	}
	return ew.err
}
