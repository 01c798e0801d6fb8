// Package whatif models an upgrade before it happens: it rewrites a copy
// of each audited host's facts as a kernel and/or Kafka upgrade would
// (a reboot takes the persisted sysctls, a broker restart re-creates the
// listener with rules.RequestedBacklog capped by rules.EffectiveBacklog),
// re-evaluates the rules on them, and says per cluster whether a rolling
// restart is safe (the catalog's restart_gate rules, rules.RestartGateRules).
//
// The comparison of the findings before and after, and its tables, are
// report/diff's (diff.Upgrade); this package owns the model.
package whatif
