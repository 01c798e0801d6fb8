// Package pipeline is kaudit as a library: the steps every front end
// (the CLI, the demo, tests, benchmarks) runs, in one place.
//
//	Connect   inventory hosts → the SSH runner (ssh_config, become password, passphrases)
//	Scan      inventory hosts → gather (audit.Scan) → rules.Evaluate → report
//	Judge     report → its verdict (pass, unaudited, findings, interrupted)
//	PlanFix   report → remediate.PlanHost per audited host → what apply will do / skip
//	Apply     fix plan → remediate/apply (canary, batches, journal, verify, restore)
//	Rollback  journal (local, or rebuilt from the hosts) → remediate/apply.Rollback
//
// The package reads no flags and writes only to the writers it is given:
// progress and log lines go to callbacks in the configs, every decision
// the caller shows a user (unaudited hosts, skipped changes, failed hosts)
// is returned as a value, and WritePlan, WriteFixPlan, WriteRun and
// WriteRollback render those values as kaudit prints them.
// Cancellation is the caller's context: a Scan whose context ends early
// returns what was gathered, marked interrupted.
package pipeline
