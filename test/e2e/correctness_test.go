//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

// base are sysctls every correctness host starts from, so that the
// verdicts do not depend on what this machine's root namespace passes on
// to new namespaces (tcp_congestion_control is inherited from it; only the allowed algorithms, reno and bbr here, can be set inside a namespace).
func base(kv ...string) map[string]string {
	m := map[string]string{
		"net.ipv4.tcp_max_syn_backlog":    "1024",
		"net.ipv4.tcp_congestion_control": "reno",
		"net.ipv4.tcp_timestamps":         "1",
		"net.ipv4.tcp_window_scaling":     "1",
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// correctnessFleet is six hosts that differ in everything kaudit checks.
func correctnessFleet() []testfleet.HostSpec {
	return []testfleet.HostSpec{
		{ // Kafka 2.8.1: the backlog property is ignored (50); cookies off; accept queue overflowed.
			Name:    "ak281",
			Sysctls: base("net.ipv4.tcp_syncookies", "0", "net.core.somaxconn", "128"),
			Kafka:   &testfleet.BrokerSpec{Version: "2.8.1", Properties: map[string]string{"socket.listen.backlog.size": "2048"}},
		},
		{ // Kafka 3.6.1 with backlog 2048; somaxconn 8192 persisted in /etc/sysctl.d.
			Name:        "ak361",
			Sysctls:     base("net.ipv4.tcp_syncookies", "1", "net.core.somaxconn", "8192"),
			Kafka:       &testfleet.BrokerSpec{Version: "3.6.1", Properties: map[string]string{"socket.listen.backlog.size": "2048"}},
			SysctlFiles: map[string]string{"60-kafka.conf": "# tuned for kafka\nnet.core.somaxconn = 8192\n"},
		},
		{ // Kafka 3.6.1 without the property (50); cookies for every SYN, and sent; timestamps off.
			Name:    "ak361d",
			Sysctls: base("net.ipv4.tcp_syncookies", "2", "net.core.somaxconn", "4096", "net.ipv4.tcp_timestamps", "0"),
			Kafka:   &testfleet.BrokerSpec{Version: "3.6.1"},
		},
		{ // Confluent Platform 7.1.0 (Apache Kafka 3.1): backlog 50; window scaling off.
			Name:    "cp710",
			Sysctls: base("net.ipv4.tcp_syncookies", "1", "net.core.somaxconn", "1024", "net.ipv4.tcp_window_scaling", "0"),
			Kafka:   &testfleet.BrokerSpec{Version: "7.1.0", Confluent: true},
		},
		{ // Kafka 3.6.1 with backlog 8192 capped to 4096 by somaxconn; SO_RCVBUF not set.
			Name:    "rcvbuf",
			Sysctls: base("net.ipv4.tcp_syncookies", "1", "net.core.somaxconn", "4096"),
			Kafka: &testfleet.BrokerSpec{Version: "3.6.1", Properties: map[string]string{
				"socket.listen.backlog.size": "8192", "socket.receive.buffer.bytes": "-1"}},
		},
		{ // No broker; somaxconn 8192 at runtime but /etc/sysctl.conf sets 128 at boot.
			Name:        "nobroker",
			Sysctls:     base("net.ipv4.tcp_syncookies", "1", "net.core.somaxconn", "8192"),
			SysctlFiles: map[string]string{"/etc/sysctl.conf": "net.core.somaxconn = 128\n"},
		},
	}
}

// expected verdicts: host -> rule -> status. nic-ring and nic-offload are
// computed from ethtool inside the host (see nicExpect).
var expectedVerdicts = map[string]map[string]rules.Status{
	"ak281": {
		"kernel-synack-wscale": rules.Pass, "syncookies-fired": rules.Pass, "listen-overflows": rules.Fail,
		"kafka-backlog-hardcoded": rules.Fail, "kafka-backlog-config": rules.Skip, "listen-backlog-effective": rules.Fail,
		"somaxconn": rules.Fail, "syn-backlog": rules.Fail, "tcp-timestamps": rules.Pass, "window-scaling": rules.Pass,
		"socket-buffers": rules.Fail, "congestion-control": rules.Fail, "sysctl-persisted": rules.Pass,
	},
	"ak361": {
		"kernel-synack-wscale": rules.Pass, "syncookies-fired": rules.Pass, "listen-overflows": rules.Pass,
		"kafka-backlog-hardcoded": rules.Pass, "kafka-backlog-config": rules.Fail, "listen-backlog-effective": rules.Fail,
		"somaxconn": rules.Pass, "syn-backlog": rules.Fail, "tcp-timestamps": rules.Pass, "window-scaling": rules.Pass,
		"socket-buffers": rules.Fail, "congestion-control": rules.Fail, "sysctl-persisted": rules.Pass,
	},
	"ak361d": {
		"kernel-synack-wscale": rules.Pass, "syncookies-fired": rules.Fail, "listen-overflows": rules.Pass,
		"kafka-backlog-hardcoded": rules.Pass, "kafka-backlog-config": rules.Fail, "listen-backlog-effective": rules.Fail,
		"somaxconn": rules.Pass, "syn-backlog": rules.Fail, "tcp-timestamps": rules.Fail, "window-scaling": rules.Pass,
		"socket-buffers": rules.Fail, "congestion-control": rules.Fail, "sysctl-persisted": rules.Pass,
	},
	"cp710": {
		"kernel-synack-wscale": rules.Pass, "syncookies-fired": rules.Pass, "listen-overflows": rules.Pass,
		"kafka-backlog-hardcoded": rules.Fail, "kafka-backlog-config": rules.Skip, "listen-backlog-effective": rules.Fail,
		"somaxconn": rules.Fail, "syn-backlog": rules.Fail, "tcp-timestamps": rules.Pass, "window-scaling": rules.Fail,
		"socket-buffers": rules.Fail, "congestion-control": rules.Fail, "sysctl-persisted": rules.Pass,
	},
	"rcvbuf": {
		"kernel-synack-wscale": rules.Pass, "syncookies-fired": rules.Pass, "listen-overflows": rules.Pass,
		"kafka-backlog-hardcoded": rules.Pass, "kafka-backlog-config": rules.Pass, "listen-backlog-effective": rules.Pass,
		"somaxconn": rules.Pass, "syn-backlog": rules.Fail, "tcp-timestamps": rules.Pass, "window-scaling": rules.Pass,
		"socket-buffers": rules.Fail, "congestion-control": rules.Fail, "sysctl-persisted": rules.Pass,
	},
	"nobroker": {
		"kernel-synack-wscale": rules.Pass, "syncookies-fired": rules.Pass, "listen-overflows": rules.Pass,
		"kafka-backlog-hardcoded": rules.Skip, "kafka-backlog-config": rules.Skip, "listen-backlog-effective": rules.Unknown,
		"somaxconn": rules.Pass, "syn-backlog": rules.Fail, "tcp-timestamps": rules.Pass, "window-scaling": rules.Pass,
		"socket-buffers": rules.Fail, "congestion-control": rules.Fail, "sysctl-persisted": rules.Fail,
	},
}

// expected Kafka facts per host (nil: no broker).
type kafkaWant struct {
	version, dist, config string
	props                 map[string]string // every key kaudit keeps; absent key = must be absent
	backlog               int               // ss Send-Q of :9092
}

var expectedKafka = map[string]*kafkaWant{
	"ak281": {"2.8.1", "apache", "/opt/kafka_2.13-2.8.1/config/server.properties",
		map[string]string{"socket.listen.backlog.size": "2048", "socket.receive.buffer.bytes": "102400", "listeners": "PLAINTEXT://:9092", "log.dirs": "/tmp/kafka-logs", "num.network.threads": "3", "num.io.threads": "8", "socket.send.buffer.bytes": "102400"}, 50},
	"ak361": {"3.6.1", "apache", "/opt/kafka_2.13-3.6.1/config/server.properties",
		map[string]string{"socket.listen.backlog.size": "2048", "socket.receive.buffer.bytes": "102400", "listeners": "PLAINTEXT://:9092", "log.dirs": "/tmp/kafka-logs", "num.network.threads": "3", "num.io.threads": "8", "socket.send.buffer.bytes": "102400"}, 2048},
	"ak361d": {"3.6.1", "apache", "/opt/kafka_2.13-3.6.1/config/server.properties",
		map[string]string{"socket.receive.buffer.bytes": "102400", "listeners": "PLAINTEXT://:9092", "log.dirs": "/tmp/kafka-logs", "num.network.threads": "3", "num.io.threads": "8", "socket.send.buffer.bytes": "102400"}, 50},
	"cp710": {"7.1.0", "confluent", "/etc/kafka/server.properties",
		map[string]string{"socket.receive.buffer.bytes": "102400", "listeners": "PLAINTEXT://:9092", "log.dirs": "/var/lib/kafka", "num.network.threads": "3", "num.io.threads": "8", "socket.send.buffer.bytes": "102400"}, 50},
	"rcvbuf": {"3.6.1", "apache", "/opt/kafka_2.13-3.6.1/config/server.properties",
		map[string]string{"socket.listen.backlog.size": "8192", "socket.receive.buffer.bytes": "-1", "listeners": "PLAINTEXT://:9092", "log.dirs": "/tmp/kafka-logs", "num.network.threads": "3", "num.io.threads": "8", "socket.send.buffer.bytes": "102400"}, 4096},
	"nobroker": nil,
}

func TestCorrectness(t *testing.T) {
	requireEnv(t)
	kauditBin(t)
	f := testfleet.Start(t, correctnessFleet())

	// Evidence the counters must show.
	f.Host("ak281").OverflowAcceptQueue(t)
	f.Host("ak361d").SendCookies(t)

	var hosts []invHost
	for _, h := range f.Hosts {
		if h.Spec.Name == "nobroker" {
			hosts = append(hosts, entry(h, "interfaces: auto")) // no default route in a test host
		} else {
			hosts = append(hosts, entry(h))
		}
	}
	inv := writeInventory(t, f, hosts...)
	r := scan(t, runOpts{}, inv, "--concurrency", "3", "--timeout", "30s", "--connect-timeout", "5s")
	if os.Getenv("KAUDIT_E2E_DUMP") != "" {
		t.Logf("report:\n%s", r.JSON)
	}

	if r.Dur > 15*time.Second {
		t.Errorf("scan of %d hosts took %v", len(f.Hosts), r.Dur)
	}
	// Findings at high fail on several hosts: exit 1.
	if r.Code != 1 {
		t.Errorf("exit %d, want 1 (high findings); stderr:\n%s", r.Code, r.Stderr)
	}
	if r.Report.Summary.Hosts != len(f.Hosts) || r.Report.Summary.Audited != len(f.Hosts) {
		t.Errorf("summary %+v, want %d hosts all audited", r.Report.Summary, len(f.Hosts))
	}
	if r.Report.SchemaVersion != report.SchemaVersion {
		t.Errorf("schema_version %d", r.Report.SchemaVersion)
	}

	machineRelease := strings.TrimSpace(readFile(t, "/proc/sys/kernel/osrelease"))
	for _, h := range f.Hosts {
		t.Run(h.Spec.Name, func(t *testing.T) {
			rh := r.host(t, h.Spec.Name)
			assertComplete(t, rh)
			if rh.Facts == nil {
				t.FailNow()
			}
			fx := rh.Facts
			if rh.Address != h.Addr {
				t.Errorf("address %q, want %q", rh.Address, h.Addr)
			}
			checkKernel(t, h, fx, machineRelease)
			checkSysctls(t, h, fx)
			checkPersisted(t, h, fx)
			checkCounters(t, h, fx)
			checkListeners(t, h, fx)
			checkKafka(t, h, fx, expectedKafka[h.Spec.Name])
			checkNICs(t, h, fx, h.Spec.Name != "nobroker")
			checkVerdicts(t, h, rh)
		})
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fold(s string) string { return strings.Join(strings.Fields(s), " ") }

func checkKernel(t *testing.T, h *testfleet.Host, fx *facts.Facts, machineRelease string) {
	t.Helper()
	// Every test host runs the machine's kernel.
	if got, want := fx.Kernel.Release, strings.TrimSpace(h.Exec(t, "uname", "-r")); got != want || got != machineRelease {
		t.Errorf("kernel.release %q, want %q (uname -r in host; machine %q)", got, want, machineRelease)
	}
	if got, want := fold(fx.Kernel.Version), fold(h.Exec(t, "cat", "/proc/version")); got != want {
		t.Errorf("kernel.version %q, want %q", got, want)
	}
	if got, want := fx.Kernel.Arch, strings.TrimSpace(h.Exec(t, "uname", "-m")); got != want {
		t.Errorf("kernel.arch %q, want %q", got, want)
	}
	osr := h.Exec(t, "sh", "-c", ". /etc/os-release && echo \"$ID\" && echo \"$VERSION_ID\"")
	lines := strings.Split(strings.TrimSpace(osr), "\n")
	if fx.Kernel.Distro != lines[0] {
		t.Errorf("kernel.distro %q, want %q", fx.Kernel.Distro, lines[0])
	}
	if len(lines) > 1 && fx.Kernel.DistroVer != lines[1] {
		t.Errorf("kernel.distro_version %q, want %q", fx.Kernel.DistroVer, lines[1])
	}
}

// checkSysctls compares every gathered sysctl with `sysctl -n` in the host,
// and checks that every key the rules need was gathered (or is absent there too).
func checkSysctls(t *testing.T, h *testfleet.Host, fx *facts.Facts) {
	t.Helper()
	for _, k := range rules.SysctlKeys() {
		want, err := h.ExecErr("sysctl", "-n", k)
		got, ok := fx.Sysctl[k]
		switch {
		case err != nil && ok:
			t.Errorf("sysctl %s: kaudit has %q, but `sysctl -n` fails in the host: %v", k, got, err)
		case err != nil:
			// absent in a network namespace (e.g. net.core.default_qdisc): fine
		case !ok:
			t.Errorf("sysctl %s: not gathered, host has %q", k, fold(want))
		case fold(got) != fold(want):
			t.Errorf("sysctl %s: kaudit %q, host %q", k, got, fold(want))
		}
	}
	for k, v := range h.Spec.Sysctls {
		if fold(fx.Sysctl[k]) != v {
			t.Errorf("sysctl %s: kaudit %q, set up as %q", k, fx.Sysctl[k], v)
		}
	}
}

func checkPersisted(t *testing.T, h *testfleet.Host, fx *facts.Facts) {
	t.Helper()
	ps, ok := fx.Persisted["net.core.somaxconn"]
	switch h.Spec.Name {
	case "ak361":
		if !ok || ps.Value != "8192" || ps.File != "/etc/sysctl.d/60-kafka.conf" || ps.Line != 2 {
			t.Errorf("persisted somaxconn = %+v (present %v), want 8192 from /etc/sysctl.d/60-kafka.conf:2", ps, ok)
		}
	case "nobroker":
		if !ok || ps.Value != "128" || ps.File != "/etc/sysctl.conf" || ps.Line != 1 {
			t.Errorf("persisted somaxconn = %+v (present %v), want 128 from /etc/sysctl.conf:1", ps, ok)
		}
	default:
		if len(fx.Persisted) != 0 {
			t.Errorf("persisted = %+v, want none (empty sysctl.d and sysctl.conf)", fx.Persisted)
		}
	}
}

// nstatAll reads every counter with nstat -az inside the host.
func nstatAll(t *testing.T, h *testfleet.Host) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	for _, line := range strings.Split(h.Exec(t, "nstat", "-az"), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				m[f[0]] = n
			}
		}
	}
	if len(m) == 0 {
		t.Fatalf("nstat -az printed nothing")
	}
	return m
}

func checkCounters(t *testing.T, h *testfleet.Host, fx *facts.Facts) {
	t.Helper()
	after := nstatAll(t, h) // read after the scan: counters only grow
	tcpExt := fx.Netstat["TcpExt"]
	if len(tcpExt) < 20 {
		t.Fatalf("TcpExt has %d counters", len(tcpExt))
	}
	for name, v := range tcpExt {
		n, ok := after["TcpExt"+name]
		if !ok {
			t.Errorf("TcpExt %s=%d: nstat has no TcpExt%s", name, v, name)
			continue
		}
		if v > n || v < 0 {
			t.Errorf("TcpExt %s: kaudit %d > nstat after %d", name, v, n)
		}
	}
	for _, name := range []string{"SyncookiesSent", "ListenOverflows", "ListenDrops", "TCPReqQFullDoCookies", "TCPReqQFullDrop", "SyncookiesRecv"} {
		if _, ok := tcpExt[name]; !ok {
			t.Errorf("TcpExt %s not gathered", name)
		}
	}
	evidence := map[string][]string{
		"ak281":  {"ListenOverflows", "ListenDrops"},
		"ak361d": {"SyncookiesSent"},
	}
	for _, name := range evidence[h.Spec.Name] {
		if tcpExt[name] <= 0 {
			t.Errorf("TcpExt %s = %d, want > 0 (the harness produced it)", name, tcpExt[name])
		}
	}
	if _, ok := evidence[h.Spec.Name]; !ok {
		for _, name := range []string{"SyncookiesSent", "ListenOverflows", "ListenDrops", "TCPReqQFullDoCookies", "TCPReqQFullDrop"} {
			if tcpExt[name] != 0 {
				t.Errorf("TcpExt %s = %d on a host without evidence", name, tcpExt[name])
			}
		}
	}
	if h.Spec.Name != "ak361d" && tcpExt["SyncookiesSent"] != 0 {
		t.Errorf("SyncookiesSent %d, want 0", tcpExt["SyncookiesSent"])
	}
}

var ssLine = regexp.MustCompile(`^LISTEN\s+(\d+)\s+(\d+)\s+(\S+):(\d+)\s`)

// checkListeners compares kaudit's listeners with `ss -ltn` in the host:
// the same set of (addr, port), Send-Q equal, Recv-Q small.
func checkListeners(t *testing.T, h *testfleet.Host, fx *facts.Facts) {
	t.Helper()
	type key struct {
		addr string
		port int
	}
	want := map[key]int{}
	for _, line := range strings.Split(h.Exec(t, "ss", "-ltn"), "\n") {
		m := ssLine.FindStringSubmatch(line + " ")
		if m == nil {
			continue
		}
		sendQ, _ := strconv.Atoi(m[2])
		port, _ := strconv.Atoi(m[4])
		want[key{m[3], port}] = sendQ
	}
	got := map[key]int{}
	for _, l := range fx.Listeners {
		got[key{l.Addr, l.Port}] = l.Backlog
		if l.Queue < 0 || l.Queue > 5 {
			t.Errorf("listener %s:%d Recv-Q %d", l.Addr, l.Port, l.Queue)
		}
	}
	if fmt.Sprint(sortedKeys(want)) != fmt.Sprint(sortedKeys(got)) {
		t.Errorf("listeners: kaudit %v, ss -ltn %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("listener %s:%d: kaudit Send-Q %d, ss %d", k.addr, k.port, got[k], v)
		}
	}
	if got[key{h.Addr, 22}] == 0 {
		t.Errorf("sshd listener %s:22 missing: %v", h.Addr, got)
	}
	if kw := expectedKafka[h.Spec.Name]; kw != nil {
		if b := got[key{"*", 9092}]; b != kw.backlog {
			t.Errorf("broker listener *:9092 Send-Q %d, want %d", b, kw.backlog)
		}
	}
}

// sortedKeys lists m's keys, printed, in order (keys may be structs).
func sortedKeys[K comparable, V any](m map[K]V) []string {
	var out []string
	for k := range m {
		out = append(out, fmt.Sprint(k))
	}
	return slices.Sorted(slices.Values(out))
}

func checkKafka(t *testing.T, h *testfleet.Host, fx *facts.Facts, want *kafkaWant) {
	t.Helper()
	if want == nil {
		if fx.Kafka != nil {
			t.Errorf("kafka %+v on a host without broker", fx.Kafka)
		}
		return
	}
	k := fx.Kafka
	if k == nil {
		t.Fatalf("kafka not found (sections %+v)", fx.Sections)
	}
	if k.Version != want.version || k.Distribution != want.dist || k.Config != want.config {
		t.Errorf("kafka version/distribution/config = %q/%q/%q, want %q/%q/%q", k.Version, k.Distribution, k.Config, want.version, want.dist, want.config)
	}
	if h.KafkaConfig != want.config {
		t.Errorf("harness config %q != expected %q", h.KafkaConfig, want.config)
	}
	if fmt.Sprint(k.Properties) != fmt.Sprint(want.props) {
		t.Errorf("kafka properties %v, want %v", k.Properties, want.props)
	}
	// Line numbers point at the key in the file as the harness wrote it.
	lines := strings.Split(h.Exec(t, "cat", h.KafkaConfig), "\n")
	for key, line := range k.PropertyLines {
		if line < 1 || line > len(lines) || !strings.HasPrefix(lines[line-1], key+"=") {
			t.Errorf("property %s at line %d, file has %q", key, line, lines[min(max(line-1, 0), len(lines)-1)])
		}
	}
	// The pid is the broker's pid inside the host's PID namespace.
	pgrep := strings.Fields(h.Exec(t, "pgrep", "-f", "kafka\\.Kafka"))
	if len(pgrep) != 1 || strconv.Itoa(k.PID) != pgrep[0] {
		t.Errorf("kafka pid %d, pgrep in host %v", k.PID, pgrep)
	}
	wantJar := h.KafkaJarDir + "/kafka_2.13-" + want.version
	if want.dist == "confluent" {
		wantJar += "-ccs"
	}
	if !strings.HasSuffix(strings.ReplaceAll(k.Jar, "/bin/../", "/"), strings.TrimPrefix(wantJar, "/")+".jar") {
		t.Errorf("kafka jar %q, want %s.jar", k.Jar, wantJar)
	}
}

// nicExpect derives nic-ring / nic-offload verdicts from ethtool in the host.
func nicExpect(t *testing.T, h *testfleet.Host) (ring, offload []rules.Status, feats map[string]bool) {
	t.Helper()
	if _, err := h.ExecErr("ethtool", "-g", "eth0"); err != nil {
		ring = []rules.Status{rules.Skip, rules.Unknown} // veth: "Operation not supported"
	} else {
		t.Logf("ethtool -g works on this veth")
		ring = []rules.Status{rules.Pass, rules.Fail}
	}
	feats = map[string]bool{}
	offload = []rules.Status{rules.Pass}
	for _, line := range strings.Split(h.Exec(t, "ethtool", "-k", "eth0"), "\n") {
		for long, short := range map[string]string{"tcp-segmentation-offload": "tso", "generic-segmentation-offload": "gso", "generic-receive-offload": "gro"} {
			if strings.HasPrefix(line, long+": ") {
				on := strings.HasPrefix(strings.TrimPrefix(line, long+": "), "on")
				feats[short] = on
				if !on && !strings.Contains(line, "[fixed]") {
					offload = []rules.Status{rules.Fail}
				}
			}
		}
	}
	return ring, offload, feats
}

func checkNICs(t *testing.T, h *testfleet.Host, fx *facts.Facts, eth0 bool) {
	t.Helper()
	if !eth0 {
		// interfaces: auto and a host without default route: no NIC to check.
		if len(fx.NICs) != 0 {
			t.Errorf("nics %+v, want none (auto, no default route)", fx.NICs)
		}
		return
	}
	if len(fx.NICs) != 1 || fx.NICs[0].Name != "eth0" {
		t.Fatalf("nics %+v, want eth0", fx.NICs)
	}
	n := fx.NICs[0]
	_, _, feats := nicExpect(t, h)
	if _, err := h.ExecErr("ethtool", "-g", "eth0"); err != nil && (n.Ring != nil || n.RingErr == "") {
		t.Errorf("eth0 ring %+v err %q; ethtool -g fails in the host (%v)", n.Ring, n.RingErr, err)
	}
	for short, on := range feats {
		if f, ok := n.Features[short]; !ok || f.On != on {
			t.Errorf("eth0 feature %s = %+v (present %v), ethtool says on=%v", short, f, ok, on)
		}
	}
}

func checkVerdicts(t *testing.T, h *testfleet.Host, rh *report.Host) {
	t.Helper()
	want := expectedVerdicts[h.Spec.Name]
	for rule, st := range want {
		f := finding(rh, rule)
		if f == nil {
			continue // assertComplete reported it
		}
		if f.Status != st {
			t.Errorf("rule %s: %s, want %s (observed %q; reason %q)", rule, f.Status, st, f.Observed, f.Reason)
		}
	}
	// NIC rules: veth has no rings (ethtool -g unsupported) and may have GRO off.
	ring, offload, _ := nicExpect(t, h)
	check := func(rule string, ok []rules.Status) {
		f := finding(rh, rule)
		if f == nil {
			return
		}
		if h.Spec.Name == "nobroker" {
			ok = []rules.Status{rules.Skip, rules.Unknown}
		}
		for _, s := range ok {
			if f.Status == s {
				return
			}
		}
		t.Errorf("rule %s: %s, want one of %v (observed %q; reason %q)", rule, f.Status, ok, f.Observed, f.Reason)
	}
	check("nic-ring", ring)
	check("nic-offload", offload)
	// On this fixed kernel no severity is raised: a failure carries the
	// catalog's severity.
	for _, f := range rh.Findings {
		if f.Status != rules.Fail {
			continue
		}
		if cat, ok := rules.Lookup(f.Rule); !ok || f.Severity != cat.Severity {
			t.Errorf("rule %s fails with severity %q, catalog says %q", f.Rule, f.Severity, cat.Severity)
		}
	}
	// Every rule not in the table is reported.
	for _, id := range ruleIDs() {
		if _, ok := want[id]; !ok && id != "nic-ring" && id != "nic-offload" {
			if f := finding(rh, id); f != nil {
				t.Logf("rule %s (not asserted): %s — %s", id, f.Status, f.Reason)
			}
		}
	}
}
