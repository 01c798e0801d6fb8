package whatif

import (
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/internal/assume"
	"github.com/kaudit/kaudit/rules"
)

// Assume is a hypothetical upgrade of every audited host.
type Assume struct {
	// Kernel is the kernel release after the upgrade ("" = unchanged). A
	// kernel upgrade means a reboot: runtime sysctls take their persisted
	// (boot-time) values and the Kafka listener is re-created.
	Kernel string `json:"kernel,omitempty"`
	// Kafka is the Kafka version after the upgrade ("" = unchanged):
	// "3.6.1" upgrades Apache Kafka brokers, "confluent:7.6.0" Confluent
	// Platform ones, "3.6.1,confluent:7.6.0" both; brokers of a
	// distribution without a version keep theirs. An upgrade means a
	// broker restart.
	Kafka string `json:"kafka,omitempty"`
}

// HostPlan is the upgrade assumed for one host.
type HostPlan struct {
	Host       string `json:"host"`
	Kernel     string `json:"kernel,omitempty"`
	Kafka      string `json:"kafka,omitempty"`
	KernelFrom string `json:"kernel_from,omitempty"` // "--assume-kernel" or "inventory"
	KafkaFrom  string `json:"kafka_from,omitempty"`  // "--assume-kafka" or "inventory"
}

func (p HostPlan) assume() Assume { return Assume{Kernel: p.Kernel, Kafka: p.Kafka} }

// planned reports whether the host has an upgrade planned at all.
func (p HostPlan) planned() bool { return p.Kernel != "" || p.Kafka != "" }

// ParseAssumeKafka reads --assume-kafka: comma-separated versions, each
// optionally prefixed with its distribution ("3.6.1", "apache:3.6.1",
// "confluent:7.6.0"); an unprefixed version is Apache Kafka. It returns
// distribution → version.
//
// The inventory settings assume_kafka / kaudit_assume_kafka take the same
// syntax: both parse it with internal/assume.
func ParseAssumeKafka(s string) (map[string]string, error) { return parseKafka(s, "--assume-kafka") }

func parseKafka(s, what string) (map[string]string, error) {
	out, perr := assume.Kafka(s)
	switch {
	case perr == nil:
		return out, nil
	case perr.Kind == assume.BadDistribution:
		return nil, fmt.Errorf("%s %q: distribution must be apache or confluent", what, perr.Item)
	case perr.Kind == assume.Duplicate:
		return nil, fmt.Errorf("%s %q: two versions for %s", what, s, perr.Dist)
	default:
		return nil, fmt.Errorf("%s %q: expected a version such as 3.6.1 or confluent:7.6.0", what, perr.Item)
	}
}

// maxKernelRelease bounds an assumed kernel release; the inventory's
// assume_kernel has the same bound.
const maxKernelRelease = 128

// ValidateKernelRelease accepts a kernel release as uname -r prints it.
func ValidateKernelRelease(s string) error { return validateKernel(s, "--assume-kernel") }

func validateKernel(s, what string) error {
	if s == "" || len(s) > maxKernelRelease || !(s[0] >= '0' && s[0] <= '9') || strings.ContainsAny(s, " \t\n/") {
		return fmt.Errorf("%s %q: expected a kernel release such as 5.15.0-91-generic or 6.1.0", what, s)
	}
	return nil
}

// assumptions describes how the upgrade is modelled: as before for one
// fleet-wide upgrade, with the plan of each set of hosts otherwise.
func assumptions(w *Result, kvers map[string]map[string]string) []string {
	var out []string
	if !w.PerHost {
		out = fleetAssumptions(w.Assume, kvers)
	} else {
		out = perHostAssumptions(w)
	}
	if len(w.Plans) > 0 {
		restarted := "the broker is restarted"
		if w.PerHost {
			restarted = "the broker of an upgraded host is restarted"
		}
		out = append(out,
			restarted+fmt.Sprintf(": its listener backlog becomes min(%s if Kafka ≥ 3.2 else %d, %s)", rules.PropBacklog, rules.DefaultListenBacklog, rules.KeySomaxconn),
			"TcpExt counters and kernel-log evidence are kept: they record what already happened under this load")
	}
	return out
}

func fleetAssumptions(a Assume, kvers map[string]map[string]string) []string {
	var out []string
	if a.Kernel != "" {
		out = append(out,
			"kernel "+a.Kernel+" on every audited host: /proc/version, version_signature and the package changelog of the old kernel are dropped",
			"the kernel upgrade reboots the host: runtime sysctls take their persisted boot-time values where a file sets them (others keep their current value)")
	}
	if a.Kafka == "" {
		return out
	}
	for _, d := range []string{"apache", "confluent"} {
		v, ok := kvers[a.Kafka][d]
		switch {
		case !ok:
			out = append(out, d+" brokers keep their Kafka version")
		case d == "confluent":
			out = append(out, "Confluent Platform "+v+" on every Confluent broker")
		default:
			out = append(out, "Apache Kafka "+v+" on every Apache Kafka broker (and brokers of unrecorded distribution)")
		}
	}
	return out
}

// perHostAssumptions is one line per distinct plan, in report order of
// its first host.
func perHostAssumptions(w *Result) []string {
	var out, order []string
	hosts := map[string][]string{}
	for _, p := range w.Plans {
		k := planLabel(p)
		if _, seen := hosts[k]; !seen {
			order = append(order, k)
		}
		hosts[k] = append(hosts[k], p.Host)
	}
	for _, k := range order {
		out = append(out, k+" on "+hostList(hosts[k]))
	}
	if len(w.NoUpgrade) > 0 {
		out = append(out, "no upgrade planned on "+hostList(w.NoUpgrade)+": their findings are kept as they are and count in their cluster's rolling-restart verdict")
	}
	kernel, kafka := false, false
	for _, p := range w.Plans {
		kernel, kafka = kernel || p.Kernel != "", kafka || p.Kafka != ""
	}
	if kernel {
		out = append(out, "a kernel upgrade reboots the host: the old kernel's /proc/version, version_signature and package changelog are dropped; runtime sysctls take their persisted boot-time values where a file sets them")
	}
	if kafka {
		out = append(out, "a Kafka version applies to the brokers of its distribution (unprefixed: Apache Kafka, and brokers of unrecorded distribution); brokers of another distribution keep theirs")
	}
	return out
}

// planLabel is "kernel K (inventory), Kafka V (--assume-kafka)".
func planLabel(p HostPlan) string {
	var parts []string
	if p.Kernel != "" {
		parts = append(parts, "kernel "+p.Kernel+" ("+p.KernelFrom+")")
	}
	if p.Kafka != "" {
		parts = append(parts, "Kafka "+p.Kafka+" ("+p.KafkaFrom+")")
	}
	return strings.Join(parts, ", ")
}

// hostList names up to 8 hosts.
func hostList(hosts []string) string {
	const most = 8
	if len(hosts) <= most {
		return strings.Join(hosts, ", ")
	}
	return strings.Join(hosts[:most], ", ") + fmt.Sprintf(" and %d more", len(hosts)-most)
}
