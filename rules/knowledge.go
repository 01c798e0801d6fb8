package rules

import (
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// Rule IDs other packages refer to (the catalog, catalog.yaml, is the
// list of all of them; TestCatalogEvaluators keeps both in step).
const (
	RuleKernelSynackWscale     = "kernel-synack-wscale"
	RuleSyncookiesFired        = "syncookies-fired"
	RuleListenOverflows        = "listen-overflows"
	RuleKafkaBacklogHardcoded  = "kafka-backlog-hardcoded"
	RuleKafkaBacklogConfig     = "kafka-backlog-config"
	RuleListenBacklogEffective = "listen-backlog-effective"
	RuleSysctlPersisted        = "sysctl-persisted"
	RuleReconnectStorm         = "reconnect-storm"
	RuleClientWscaleMismatch   = "client-wscale-mismatch"
	RulePeerConsistency        = "peer-consistency"
	RuleBrokerOpenFiles        = "broker-open-files"
	RuleBrokerMapCount         = "broker-map-count"
	RuleBrokerSwap             = "broker-swap"
	RuleJVMVersion             = "jvm-version"
	RuleJVMHeap                = "jvm-heap"
)

// clientHostReason is why a broker rule does not apply to a client host.
const clientHostReason = "client host: gathered with the client profile (kernel, sysctls, its connections to the brokers); broker rules do not apply"

// Sysctl keys and server.properties keys the rules and the planner share.
const (
	KeySyncookies    = "net.ipv4.tcp_syncookies"
	KeyTimestamps    = "net.ipv4.tcp_timestamps"
	KeyWindowScaling = "net.ipv4.tcp_window_scaling"
	KeySomaxconn     = "net.core.somaxconn"
	KeySynBacklog    = "net.ipv4.tcp_max_syn_backlog"
	KeyMaxMapCount   = "vm.max_map_count"

	PropRcvbuf  = "socket.receive.buffer.bytes"
	PropBacklog = "socket.listen.backlog.size"
)

// DefaultListenBacklog is the listen backlog of a Kafka broker that does
// not set socket.listen.backlog.size: the JDK's 50 before KIP-764 (Kafka
// 3.2), and the config's default from then on (KIP-764, KafkaConfig.scala).
const DefaultListenBacklog = 50

// DefaultKafkaPort is the listener port assumed when the facts name none.
const DefaultKafkaPort = 9092

// Answer is a three-valued verdict: the facts may not settle a question.
type Answer int

// Answers.
const (
	AnswerUnknown Answer = iota
	AnswerNo
	AnswerYes
)

// BacklogConfigurable says whether the broker honours
// socket.listen.backlog.size (KIP-764): Apache Kafka ≥ 3.2, Confluent
// Platform by confluent.yaml. reason says how it was decided, or why it
// cannot be. A nil broker or an unreadable version answers AnswerUnknown.
func BacklogConfigurable(k *facts.Kafka) (Answer, string) {
	if k == nil {
		return AnswerUnknown, "no Kafka broker found"
	}
	kv := kafkaVersionOf(k)
	return kv.configurable, kv.reason
}

// RequestedBacklog is the listen backlog the broker asks for in listen():
// socket.listen.backlog.size when it honours it and sets it (backlogProp),
// else DefaultListenBacklog. ok is false when that cannot be told (no
// broker, version unknown, the property is not an integer).
func RequestedBacklog(k *facts.Kafka) (n int, ok bool) {
	a, _ := BacklogConfigurable(k)
	switch a {
	case AnswerUnknown:
		return 0, false
	case AnswerNo:
		return DefaultListenBacklog, true
	}
	return backlogProp(k)
}

// backlogProp is socket.listen.backlog.size as the broker uses it: the
// running broker's value when the cluster reported it (its word wins over
// the file), else server.properties', else DefaultListenBacklog; ok is
// false when the value is not an integer.
func backlogProp(k *facts.Kafka) (int, bool) {
	v, set := k.Properties[PropBacklog]
	if r, ok := k.Running[PropBacklog]; ok {
		v, set = r.Value, true
	}
	if !set {
		return DefaultListenBacklog, true
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	return n, err == nil
}

// EffectiveBacklog is the backlog the kernel gives a listener that asked
// for requested: capped at net.core.somaxconn (listen(2): a backlog above somaxconn is silently truncated).
func EffectiveBacklog(requested, somaxconn int) int { return min(requested, somaxconn) }

// RestartGateRules are the rules that must pass (or not apply) on every
// host of a cluster for a rolling restart to be called safe (catalog
// attribute restart_gate), in catalog order. The slice is fresh.
func RestartGateRules() []string {
	var out []string
	for _, r := range catalog {
		if r.RestartGate {
			out = append(out, r.ID)
		}
	}
	return out
}

// SyncookiesOffWarranted says whether net.ipv4.tcp_syncookies=0 is worth
// its cost on a host: only while kernel-synack-wscale fails or is unknown
// (on a fixed kernel cookies are the better defence against a full SYN
// queue). status is that rule's status, "" when it is not in findings.
func SyncookiesOffWarranted(findings []Finding) (ok bool, status Status) {
	for _, f := range findings {
		if f.Rule == RuleKernelSynackWscale {
			status = f.Status
		}
	}
	return status == Fail || status == Unknown, status
}

// ReachesBrokerOnRestart reports whether a runtime change of the sysctl
// reaches a running broker only when it listens again: the listener keeps
// the min(backlog, somaxconn) it started with.
func ReachesBrokerOnRestart(key string) bool { return key == KeySomaxconn }

// HostWideOnly reports whether a sysctl belongs to the initial network
// namespace alone: inside any other (a container's) it is read-only (mode
// 0444, a write fails with EPERM), so it can only be set on the node that
// runs the container. net/core/sysctl_net_core.c registers these keys in
// net_core_table, outside the per-namespace netns_core_table; the mode and
// the EPERM are what a network namespace on this project's test machines shows.
func HostWideOnly(key string) bool {
	switch key {
	case "net.core.rmem_max", "net.core.wmem_max", "net.core.rmem_default", "net.core.wmem_default":
		return true
	}
	return false
}

// KernelWide reports whether a sysctl has one value for the whole kernel,
// in no namespace: every key outside net.* (vm.*, fs.*, kernel.*), as
// the kernel documentation's sysctl pages describe them
// (Documentation/admin-guide/sysctl/vm.rst: "the operation of the virtual
// memory (VM) subsystem"). net.* keys are per network namespace (or, the
// HostWideOnly ones, of the initial one). In a container, which shares
// the node's kernel, writing a kernel-wide key changes the node. A few
// kernel.* and fs.* keys belong to a UTS or IPC namespace instead
// (kernel.hostname, fs.mqueue.*); counting them kernel-wide only refuses
// more, and no rule asks for one.
func KernelWide(key string) bool { return !strings.HasPrefix(key, "net.") }

// javaSupport is ops.html "Java Version" of the Apache Kafka release the
// broker runs (akMinor: 307 for 3.7): which Java feature releases it
// supports and which it has deprecated for the broker.
type javaSupport struct {
	supported  []int
	deprecated []int
	doc        string // the ops.html it comes from
}

// javaSupportOf is the table, newest first.
func javaSupportOf(akMinor int) javaSupport {
	switch {
	case akMinor >= 400:
		return javaSupport{supported: []int{17, 21}, doc: "Kafka 4.0 ops.html: Java 17 and 21; Java 11 only for clients and streams, Java 8 removed"}
	case akMinor >= 309:
		return javaSupport{supported: []int{8, 11, 17, 21}, deprecated: []int{8, 11}, doc: "Kafka 3.9 ops.html: Java 8, 11, 17 and 21; 8 deprecated since 3.0, 11 for the broker since 3.7"}
	case akMinor >= 307:
		return javaSupport{supported: []int{8, 11, 17}, deprecated: []int{8, 11}, doc: "Kafka 3.7 ops.html: Java 8, 11 and 17; 8 deprecated since 3.0, 11 for the broker since 3.7"}
	case akMinor >= 300:
		return javaSupport{supported: []int{8, 11, 17}, deprecated: []int{8}, doc: "Kafka 3.x ops.html: Java 8, 11 and 17; 8 deprecated since 3.0"}
	default:
		return javaSupport{supported: []int{8, 11}, doc: "Kafka 2.x ops.html: Java 8 and 11"}
	}
}
