package pipeline

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/whatif"
)

// whatIf is the what-if of a scan: the rules evaluated on a copy of every
// host's facts as the upgrade would leave them. a (the --assume-kernel /
// --assume-kafka flags) applies to every host and wins over the upgrade
// each host of hosts plans (assume_kernel / assume_kafka in the
// inventory); hosts with neither keep their findings. Each host's
// thresholds are base with its inventory overrides. A nil result means
// nothing is assumed or planned: there is no what-if. r is left alone.
func whatIf(r *report.Report, a whatif.Assume, base rules.Profile, hosts []inventory.Host) (*whatif.Result, error) {
	overrides := map[string]map[string]any{}
	planned := map[string]whatif.Assume{}
	for _, h := range hosts {
		overrides[h.Name] = h.Profile
		if h.AssumeKernel != "" || h.AssumeKafka != "" {
			planned[h.Name] = whatif.Assume{Kernel: h.AssumeKernel, Kafka: h.AssumeKafka}
		}
	}
	if !plansUpgrade(a, hosts) {
		return nil, nil
	}
	return whatif.EvaluatePlan(r, a, func(name string) whatif.Assume { return planned[name] }, func(name string) rules.Profile {
		p, err := base.With(overrides[name])
		if err != nil {
			return base // Audit already rejected bad overrides (ProfileError)
		}
		return p
	})
}

// plansUpgrade reports whether a scan has a what-if: a assumes an
// upgrade, or a host of hosts plans one (assume_kernel / assume_kafka).
func plansUpgrade(a whatif.Assume, hosts []inventory.Host) bool {
	return a.Kernel != "" || a.Kafka != "" ||
		slices.ContainsFunc(hosts, func(h inventory.Host) bool { return h.AssumeKernel != "" || h.AssumeKafka != "" })
}

// WriteWhatIf writes the what-if of whatIf (when there is one) to w as a
// table after a blank line: the scan's hook, stdout keeping the report.
// Call it right after the scan, before waivers are applied.
func WriteWhatIf(w io.Writer, r *report.Report, a whatif.Assume, base rules.Profile, hosts []inventory.Host) error {
	res, err := whatIf(r, a, base, hosts)
	if err != nil || res == nil {
		return err
	}
	fmt.Fprintln(w)
	return whatif.Write(w, "table", res)
}

// WhatIfJob is kaudit whatif: the what-if of a saved scan.
type WhatIfJob struct {
	Scan           string
	Assume         whatif.Assume
	Profile        string // a thresholds file ("" the default profile)
	Format, Output string // a whatif.Formats name; a file instead of stdout
	FailUnsafe     bool
}

// WhatIfFile evaluates and writes j's what-if. Its verdict with
// FailUnsafe is Findings when a cluster is not safe to rolling-restart
// after the upgrade.
func WhatIfFile(c Console, j WhatIfJob) error {
	if j.Assume.Kernel == "" && j.Assume.Kafka == "" {
		return errors.New("whatif needs --assume-kernel RELEASE and/or --assume-kafka VERSION")
	}
	if err := oneOf("format", j.Format, whatif.Formats()); err != nil {
		return err
	}
	r, err := report.Load(j.Scan)
	if err != nil {
		return err
	}
	prof, err := loadProfile(j.Profile)
	if err != nil {
		return err
	}
	w, err := whatif.Evaluate(r, j.Assume, func(string) rules.Profile { return prof })
	if err != nil {
		return err
	}
	if err := writeOutput(c.Stdout, j.Output, func(out io.Writer) error { return whatif.Write(out, j.Format, w) }); err != nil {
		return err
	}
	if cluster, unsafe := w.UnsafeAfter(); j.FailUnsafe && unsafe {
		return fail(Findings, "cluster %s is not safe to rolling-restart after the upgrade", cluster)
	}
	return nil
}
