package rules

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// compliantHost is a host on which every rule passes with the default profile.
func compliantHost() *facts.Facts {
	sys := map[string]string{
		"net.core.somaxconn":              "4096",
		"net.ipv4.tcp_max_syn_backlog":    "8192",
		"net.ipv4.tcp_syncookies":         "1",
		"net.ipv4.tcp_timestamps":         "1",
		"net.ipv4.tcp_window_scaling":     "1",
		"net.core.rmem_default":           "262144",
		"net.core.wmem_default":           "262144",
		"net.core.rmem_max":               "134217728",
		"net.core.wmem_max":               "134217728",
		"net.ipv4.tcp_rmem":               "4096 87380 134217728",
		"net.ipv4.tcp_wmem":               "4096 87380 134217728",
		"net.ipv4.tcp_congestion_control": "bbr",
		"net.core.default_qdisc":          "fq",
		"net.ipv4.tcp_tw_reuse":           "1",
		"net.ipv4.tcp_fin_timeout":        "30",
	}
	pers := map[string]facts.PersistedSysctl{}
	line := 1
	for _, k := range sortedKeys(sys) {
		if k == "net.ipv4.tcp_syncookies" || k == "net.ipv4.tcp_timestamps" || k == "net.ipv4.tcp_window_scaling" {
			continue // kernel defaults
		}
		pers[k] = facts.PersistedSysctl{Value: sys[k], File: "/etc/sysctl.d/60-kafka.conf", Line: line}
		line++
	}
	return &facts.Facts{
		KafkaPort: 9092,
		Kernel: facts.Kernel{Release: "6.1.0-13-amd64", Version: "Linux version 6.1.0-13-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1 (2023-09-29)",
			Distro: "debian", DistroVer: "12"},
		Sysctl:    sys,
		Persisted: pers,
		Netstat: map[string]map[string]int64{"TcpExt": {
			"SyncookiesSent": 0, "SyncookiesRecv": 0, "SyncookiesFailed": 0, "ListenOverflows": 0,
			"ListenDrops": 0, "TCPReqQFullDoCookies": 0, "TCPReqQFullDrop": 0,
		}},
		Listeners: []facts.Listener{
			{Addr: "0.0.0.0", Port: 22, Backlog: 128},
			{Addr: "*", Port: 9092, Backlog: 4096},
		},
		Established: []facts.LocalConns{{Addr: "10.0.0.5", Port: 9092, Count: 1200}, {Addr: "10.0.0.5", Port: 22, Count: 2}},
		Conns:       []facts.Conn{},
		Kafka: &facts.Kafka{PID: 1234, FoundBy: "listener", Version: "3.6.1", Distribution: "apache",
			Jar: "/opt/kafka/libs/kafka_2.13-3.6.1.jar", Config: "/opt/kafka/config/server.properties",
			Properties:    map[string]string{"socket.listen.backlog.size": "4096", "socket.receive.buffer.bytes": "102400", "listeners": "PLAINTEXT://:9092"},
			PropertyLines: map[string]int{"socket.listen.backlog.size": 12, "socket.receive.buffer.bytes": 13, "listeners": 3},
		},
		NICs: []facts.NIC{{Name: "eth0", Driver: "mlx5_core",
			Ring:     &facts.Ring{RXMax: 8192, TXMax: 8192, RX: 4096, TX: 4096},
			Features: map[string]facts.Feature{"tso": {On: true}, "gso": {On: true}, "gro": {On: true}, "lro": {On: false, Fixed: true}},
			Boot:     compliantBoot(),
		}},
	}
}

func find(t *testing.T, fs []Finding, id string) Finding {
	t.Helper()
	for _, f := range fs {
		if f.Rule == id {
			return f
		}
	}
	t.Fatalf("no finding for %s", id)
	return Finding{}
}

type ruleCase struct {
	name    string
	mutate  func(f *facts.Facts)
	profile func(p *Profile)
	status  Status
	sev     Severity // "" = do not check
	reason  string   // substring
	check   func(t *testing.T, fd Finding)
}

func runRuleCases(t *testing.T, id string, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := compliantHost()
			if c.mutate != nil {
				c.mutate(f)
			}
			p := DefaultProfile()
			if c.profile != nil {
				c.profile(&p)
			}
			fd := find(t, Evaluate(f, p), id)
			if fd.Status != c.status || (c.sev != "" && fd.Severity != c.sev) || !strings.Contains(fd.Reason, c.reason) {
				t.Fatalf("%s: got %s/%s reason %q\nwant %s/%s with %q", id, fd.Status, fd.Severity, fd.Reason, c.status, c.sev, c.reason)
			}
			if fd.Reason == "" {
				t.Fatal("empty reason")
			}
			if fd.Status == Fail && fd.Fix == nil {
				t.Fatal("failing finding without a fix")
			}
			if c.check != nil {
				c.check(t, fd)
			}
		})
	}
}

// compliantBoot is what a compliant host's kaudit .link sets at boot.
func compliantBoot() *facts.NICBoot {
	const l = "/etc/systemd/network/10-kaudit-eth0.link"
	return &facts.NICBoot{Settings: map[string]facts.NICBootValue{
		"rx": {Value: "4096", Mechanism: facts.PersistSystemdLink, Source: l + ":15"}, "tx": {Value: "4096", Mechanism: facts.PersistSystemdLink, Source: l + ":16"},
		"tso": {Value: "on", Mechanism: facts.PersistSystemdLink, Source: l + ":17"}, "gso": {Value: "on", Mechanism: facts.PersistSystemdLink, Source: l + ":18"},
		"gro": {Value: "on", Mechanism: facts.PersistSystemdLink, Source: l + ":14"},
	}}
}
