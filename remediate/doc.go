// Package remediate turns findings into a plan of changes per host, renders
// the plan for a human, and defines the run journal the applier fills.
//
// It owns the pure half of "kaudit fix": everything here is a function of
// facts and findings, with no SSH and no clock (apart from NewRunID and the
// journal's file I/O). The transport-side half (backup, runtime write,
// persist, re-gather, verify, roll back) uses the same transport as audit
// and fills a Journal as it goes.
//
// What a plan may contain:
//
//   - sysctl: the running value (through /proc/sys) and the managed file
//     /etc/sysctl.d/99-kaudit.conf (sub-package sysctld renders it and says
//     which other files would override it at boot; the plan warns about
//     those, kaudit edits no file it does not own);
//   - kafka-property: an in-place edit of server.properties (sub-package
//     props), always flagged "restart required": kaudit restarts a broker
//     only with --restart, one of a cluster at a time (restart.go);
//   - nic-ring / nic-offload: ethtool -G / -K, never above the NIC's
//     pre-set maximum, never for a feature the driver marks [fixed],
//     persisted through the NIC's own manager when detected
//     (facts.NIC.Persist, nicpersist.PlanFor: NetworkManager, ifupdown,
//     systemd .link), else in NICPersistPath (a udev rule);
//   - manual actions: kernel and Kafka upgrades, a missing
//     server.properties, and alternatives kaudit does not apply by default.
//
// Only what the host allows is planned (feasible.go, from
// facts.Feasibility): a /proc/sys entry without its write bit (net.core
// buffer limits in a container's network namespace, rules.HostWideOnly),
// a persistence directory that is missing, not writable or on a read-only
// mount; a congestion control or default qdisc the running kernel neither
// has nor can load (facts.Feasibility.Kernel: tcp_available_congestion_control,
// modules.dep, modules.builtin, the kernel config; fq is not planned when
// nothing can tell); an offload the driver fixes, the kernel refuses
// ([requested on]) or drops without scatter-gather or a transmit checksum
// that is off (netdev_fix_features), a ring without settings or maximum.
// Such a change is listed in HostPlan.Infeasible with the reason
// and what to do instead; with Selector.RuntimeOnlyOK a change that can
// be set but not persisted is planned runtime only, its note saying so.
//
// The kernel bug (Linux commit 909172a, rule kernel-synack-wscale) shapes the plan: net.ipv4.tcp_syncookies=0
// is planned only while kernel-synack-wscale fails or is unknown, always
// with its trade-off in the change's note (SYNs are dropped instead of
// answered with cookies while the queue is full; clients retry after
// ~1 s) and together with the backlog fixes the other findings ask for,
// or a warning that the backlog cannot grow (Kafka < 3.2 / Confluent
// < 7.2 fixes it at 50, KIP-764). socket.receive.buffer.bytes=-1, which
// removes the SO_RCVBUF precondition, is derived rather than from the
// talk, so it is only offered as a manual alternative.
//
// Raising net.core.somaxconn is flagged "restart required" when a broker
// runs on the host: the kernel caps the backlog when a socket starts
// listening (min(backlog, somaxconn) in listen(2)), so the running broker
// keeps its old effective backlog until it restarts. A verifier must not
// expect the listener's Send-Q to change before that.
package remediate
