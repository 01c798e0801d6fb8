// Package rules turns one host's facts into findings.
//
// The rules are data: catalog.yaml holds each rule's ID, title, default
// severity, rationale (grounded in the sources its references list, with [V]/[D]/[U] marks),
// references and fix text; profile.default.yaml holds the thresholds;
// kernels.yaml says which kernels contain Linux commit 909172a ("net: Update
// window_clamp if SOCK_RCVBUF is set"); confluent.yaml maps Confluent
// Platform to Apache Kafka versions. All are embedded and loaded strictly: a
// typo in a shipped file fails the tests, not a user.
//
// A sysctl threshold rule is data alone: its catalog entry carries a
// check (Check: sysctls compared at-least, at-most, equal or one-of with a
// profile key or a literal, optionally on one field of a multi-value
// sysctl, each with its boot default), and one generic evaluator
// (evalChecks) judges every such rule. A profile key that only checks read
// is declared by the check (its default in profile.default.yaml), the
// gatherer reads every key a check names (SysctlKeys), and
// sysctl-persisted compares the boot value of each. Adding one is a block
// in catalog.yaml and a default in profile.default.yaml; LoadSet loads
// such a pair as the shipped one is loaded. The reasoning rules are Go
// evaluators, pure functions of (facts, profile); syn-backlog and
// congestion-control start from their catalog check and add reasoning.
// Severity has one home, the catalog: an evaluator departs from it only
// through the named steps raised, warning and mitigated (evaluate.go).
// A failing check's Fix carries each key's Bound (at least, at most,
// exactly; the field), so remediate merges two rules' requests by
// direction.
//
// Rules never import SSH, the inventory or the terminal, so every verdict is
// testable without a host. Evaluate returns exactly one Finding per catalog
// rule, in catalog order. Missing facts give "unknown" with the reason the
// gatherer recorded, never "pass"; rules that do not apply give "skip".
// Failing findings carry a Fix whose automatic parts (sysctl values, Kafka
// properties, NIC settings) are data for the remediate package, and whose
// manual parts (kernel or Kafka upgrades) are text with their alternatives.
//
// Most rules judge one host alone. A rule with scope fleet in the catalog
// (client-wscale-mismatch) needs every host's facts: Evaluate leaves it
// unknown, and EvaluateFleet, a pure function of the whole fleet's facts
// run once all hosts are gathered, decides it; ApplyFleet merges its
// findings. Hosts of the clients group (Facts.Role client) carry only
// kernel, sysctls and connections: every rule not marked clients in the
// catalog is skip ("client host") there.
//
// The Kafka and kernel knowledge other packages need has its one home here
// (knowledge.go): BacklogConfigurable (does a broker honour
// socket.listen.backlog.size, from confluent.yaml for Confluent Platform),
// RequestedBacklog, EffectiveBacklog (min(backlog, somaxconn)), KafkaPorts
// (the ports a broker serves clients on),
// DefaultListenBacklog, SyncookiesOffWarranted, RestartGateRules (the
// catalog's restart_gate rules), and the rule-ID and sysctl/property key
// constants. A Fix's Alternatives are typed (what they change, whether a
// planner only offers them), so remediate plans from data, never from text.
//
// The heart is kernel-synack-wscale: KernelFixStatus decides whether the
// running kernel has the fix from what the host shows (package changelog,
// Ubuntu version_signature, Debian /proc/version, Amazon Linux and upstream
// release strings), and says "unknown" for vendor kernels that cannot be
// settled (RHEL 7/8, Ubuntu bionic, Oracle UEK without its changelog).
package rules
