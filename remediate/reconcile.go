package remediate

import (
	"cmp"
	"fmt"
)

// Reconcile is the part of h (a local journal's entry for one host)
// that m, the run's own manifest on that host, holds: a rollback
// restores these items and nothing else, with the manifest's values (the
// host's word on what was there before the run, and where its copy is).
// Each item h owns (Owned) that m does not hold, or holds with another
// before value, is refused and named: a journal edited, or of another
// run, never restores it.
func (h HostJournal) Reconcile(m HostJournal) (agreed HostJournal, refused []string) {
	agreed = HostJournal{Host: h.Host, Status: h.Status, Changes: h.Changes, Error: h.Error, NoOp: h.NoOp}
	backups, _, runtime, _ := h.Owned()
	for _, b := range backups {
		mb, why := manifestFile(m, b)
		if why != "" {
			refused = append(refused, why)
			continue
		}
		mb.Changed, mb.Mode, mb.Owner = b.Changed, b.Mode, b.Owner
		mb.Written = cmp.Or(mb.Written, b.Written) // a later edit is kept: never restores more
		agreed.Backups = append(agreed.Backups, mb)
	}
	for _, r := range runtime {
		mr, why := manifestValue(m, r)
		if why != "" {
			refused = append(refused, why)
			continue
		}
		mr.Changed = r.Changed
		agreed.Runtime = append(agreed.Runtime, mr)
	}
	return agreed, refused
}

// manifestFile is m's record of b's file, or why there is none that agrees.
func manifestFile(m HostJournal, b Backup) (Backup, string) {
	for _, mb := range m.Backups {
		if mb.Path != b.Path {
			continue
		}
		if mb.Existed != b.Existed || mb.SHA256 != b.SHA256 {
			return Backup{}, fmt.Sprintf("file %s: the journal says it was %s before the run, the host's manifest says %s: not restored", b.Path, beforeFile(b), beforeFile(mb))
		}
		return mb, ""
	}
	return Backup{}, fmt.Sprintf("file %s: the run's manifest on the host does not hold it (the run never backed it up): not restored", b.Path)
}

func beforeFile(b Backup) string {
	if !b.Existed {
		return "absent"
	}
	return "sha256 " + b.SHA256
}

// manifestValue is m's record of r's running value, or why there is none
// that agrees.
func manifestValue(m HostJournal, r RuntimeValue) (RuntimeValue, string) {
	what := fmt.Sprintf("%s %s", r.Kind.OrSysctl(), r.Key)
	for _, mr := range m.Runtime {
		if mr.Kind.OrSysctl() != r.Kind.OrSysctl() || mr.Key != r.Key {
			continue
		}
		if mr.Before != r.Before {
			return RuntimeValue{}, fmt.Sprintf("%s: the journal says %q before the run, the host's manifest says %q: not restored", what, r.Before, mr.Before)
		}
		return mr, ""
	}
	return RuntimeValue{}, fmt.Sprintf("%s: the run's manifest on the host does not hold it (the run never set it): not restored", what)
}

// OrSysctl is k, KindSysctl for the "" of old journals.
func (k ChangeKind) OrSysctl() ChangeKind { return cmp.Or(k, KindSysctl) }
