// Package pipeline is kaudit as a library: one entry point per command,
// and the steps the commands share, in one place. It exports what the
// CLI, the benchmarks and the tests call.
//
// The steps (each prints nothing; what a caller shows is a value):
//
//	newRunner  inventory hosts → the SSH runner (ssh_config, become password, passphrases)
//	Audit      inventory hosts → gather (audit.Scan) → rules.Evaluate → fleetpass → report
//	judge      report → its verdict (pass, unaudited, findings, interrupted)
//	whatIf     report → the findings under an assumed kernel or Kafka upgrade
//	PlanFix    report → remediate.PlanHost per audited host → what apply will do / skip
//	applyPlan  fix plan → remediate/apply (canary, batches, journal, verify, restore)
//	LoadRun    a run's journal (local, or rebuilt from the hosts' manifests)
//	Restore    journal → remediate/apply.Rollback on its hosts
//
// The commands, one function each: Scan (kaudit scan and probe), Demo,
// Fix, Rollback, Trust, Serve, RerenderFile (kaudit report), Merge, Diff,
// WhatIfFile (kaudit whatif), CheckWaivers. Each file is named for what
// it holds: scan.go, fix.go, rollback.go, serve.go, ... for the
// commands; audit.go, plan.go, apply.go, restore.go, connect.go for the
// steps; spool.go for the facts spool, catalog.go for kaudit rules and
// explain, text.go for the text of plans, runs and rollbacks.
//
// The commands take the values the CLI's flags are bound to (OutputFlags,
// Config, FixJob, RollbackJob, TrustJob, DiffJob, WhatIfJob, ServeJob, a
// Fleet), check them (Check methods: errors that name the flag) and talk
// with the person through a Console: the report, plan or listing on its
// stdout, warnings, questions (internal/ui, only on a terminal) and the
// progress bar (internal/termui) on its stderr. A command that ran but
// did not end well returns a *Failure carrying its Verdict (findings,
// unaudited hosts, interrupted, not applied), which the CLI maps to an
// exit code; any other error means it could not run as asked. Ctrl-C ends
// a scan early with what was gathered; an apply or rollback then starts
// no further host. The package reads no flags and decides no exit code;
// WritePlan and WriteFixPlan render a plan as kaudit prints it.
package pipeline
