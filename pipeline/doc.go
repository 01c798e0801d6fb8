// Package pipeline is kaudit as a library: the steps every front end
// (the CLI, the demo, tests, benchmarks) runs, and each command's flow
// built from them, in one place.
//
//	Connect   inventory hosts → the SSH runner (ssh_config, become password, passphrases)
//	Audit     inventory hosts → gather (audit.Scan) → rules.Evaluate → report
//	Judge     report → its verdict (pass, unaudited, findings, interrupted)
//	PlanFix   report → remediate.PlanHost per audited host → what apply will do / skip
//	Apply     fix plan → remediate/apply (canary, batches, journal, verify, restore)
//	Rollback  journal (local, or rebuilt from the hosts) → remediate/apply.Rollback
//
// The command flows (Scan and scanReport, Demo, Fix and Fix,
// RollbackFleet and RollbackRun, Trust, Rerender, Merge, Diff,
// WhatIfFile, CheckWaivers) take the values the CLI's flags are bound to
// (OutputFlags, Config, FixJob, RollbackJob, TrustJob, DiffJob,
// WhatIfJob, a Fleet), check them (Check methods: errors that name the
// flag) and talk with the person through a Console: the report, plan or
// listing on its stdout, warnings, questions (internal/ui, only on a
// terminal) and the progress bar (internal/termui) on its stderr. A flow
// that ran but did not end well returns a *Failure carrying its Verdict
// (findings, unaudited hosts, interrupted, not applied), which the CLI
// maps to an exit code; any other error means it could not run as asked.
// Ctrl-C ends a scan early with what was gathered (Interruptible); an
// apply or rollback then starts no further host. The package reads no
// flags and decides no exit code; the steps print nothing, and every
// decision a caller shows (unaudited hosts, skipped changes, failed
// hosts) is a value that WritePlan, WriteFixPlan, WriteRun and
// WriteRollback render as kaudit prints it.
package pipeline
