package rules

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func TestEvaluateShape(t *testing.T) {
	fs := Evaluate(compliantHost(), DefaultProfile())
	cat := Catalog()
	if len(fs) != len(cat) {
		t.Fatalf("%d findings, want one per catalog rule (%d)", len(fs), len(cat))
	}
	for i, fd := range fs {
		if fd.Rule != cat[i].ID {
			t.Errorf("finding %d is %s, want %s", i, fd.Rule, cat[i].ID)
		}
		r, _ := Lookup(fd.Rule)
		if fd.Title != r.Title || fd.Severity != r.Severity {
			t.Errorf("%s: title/severity not filled from the catalog: %q %s", fd.Rule, fd.Title, fd.Severity)
		}
		want := Pass
		if r.Scope == ScopeFleet {
			want = Unknown // until EvaluateFleet
		}
		if fd.Status != want {
			t.Errorf("%s on a compliant host: %s %q", fd.Rule, fd.Status, fd.Reason)
		}
	}
}

func TestEvaluateNilAndEmptyFacts(t *testing.T) {
	for _, fd := range Evaluate(nil, DefaultProfile()) {
		if fd.Status != Unknown || fd.Reason == "" {
			t.Errorf("%s with nil facts: %s %q", fd.Rule, fd.Status, fd.Reason)
		}
	}
	// Nothing gathered: nothing may pass.
	for _, fd := range Evaluate(&facts.Facts{}, DefaultProfile()) {
		if fd.Status == Pass || fd.Reason == "" {
			t.Errorf("%s with empty facts: %s %q", fd.Rule, fd.Status, fd.Reason)
		}
	}
}

func TestEvaluatePanicIsError(t *testing.T) {
	old := evaluators["syn-backlog"]
	evaluators["syn-backlog"] = func(*evalCtx) Finding { panic("boom") }
	defer func() { evaluators["syn-backlog"] = old }()
	fd := find(t, Evaluate(compliantHost(), DefaultProfile()), "syn-backlog")
	if fd.Status != Error || !strings.Contains(fd.Reason, "boom") {
		t.Fatalf("got %s %q", fd.Status, fd.Reason)
	}
}

func secs(kv ...string) map[string]facts.SectionStatus {
	m := map[string]facts.SectionStatus{}
	for i := 0; i+2 < len(kv)+1; i += 3 {
		m[kv[i]] = facts.SectionStatus{State: facts.SectionState(kv[i+1]), Message: kv[i+2]}
	}
	return m
}

func TestSyncookiesFired(t *testing.T) {
	affected := facts.Kernel{Release: "4.19.0-12-amd64", Version: debianV}
	runRuleCases(t, "syncookies-fired", []ruleCase{
		{name: "none", status: Pass, reason: "no SYN cookies sent since boot"},
		{name: "sent on fixed kernel", mutate: func(f *facts.Facts) { f.Netstat["TcpExt"]["SyncookiesSent"] = 42 }, status: Fail, reason: "cumulative since boot and per network namespace",
			check: func(t *testing.T, fd Finding) {
				if fd.Observed != "SyncookiesSent=42 TCPReqQFullDoCookies=0" {
					t.Errorf("observed %q", fd.Observed)
				}
			}},
		{name: "reqq cookies on affected kernel", mutate: func(f *facts.Facts) {
			f.Kernel = affected
			f.Netstat["TcpExt"]["TCPReqQFullDoCookies"] = 3
		}, status: Fail, sev: Critical, reason: "raised to critical: the kernel lacks commit 909172a"},
		{name: "unknown kernel not raised", mutate: func(f *facts.Facts) {
			f.Kernel = facts.Kernel{Release: "3.10.0-1160.el7.x86_64"}
			f.Netstat["TcpExt"]["SyncookiesSent"] = 1
		}, status: Fail, reason: "not raised to critical because the kernel's status is unknown"},
		{name: "log line only", mutate: func(f *facts.Facts) {
			f.Evidence.SynFlood = []string{"TCP: request_sock_TCP: Possible SYN flooding on port 9092. Sending cookies.  Check SNMP counters."}
		}, status: Fail, reason: "SYN cookies were sent",
			check: func(t *testing.T, fd Finding) {
				if len(fd.Evidence) != 1 {
					t.Errorf("evidence %v", fd.Evidence)
				}
			}},
		{name: "dropping lines are not cookies", mutate: func(f *facts.Facts) {
			f.Evidence.SynFlood = []string{"TCP: request_sock_TCP: Possible SYN flooding on port 9092. Dropping request.  Check SNMP counters."}
		}, status: Pass, reason: "no SYN cookies"},
		{name: "netstat missing", mutate: func(f *facts.Facts) {
			f.Netstat = nil
			f.Sections = secs(facts.SecNetstat, "denied", "/proc/net/netstat: permission denied")
		}, status: Unknown, reason: "TcpExt counters (/proc/net/netstat) not gathered: /proc/net/netstat: permission denied"},
		{name: "old kernel without the columns", mutate: func(f *facts.Facts) {
			f.Netstat["TcpExt"] = map[string]int64{"ListenDrops": 0}
		}, status: Unknown, reason: "neither SyncookiesSent nor TCPReqQFullDoCookies"},
		{name: "only one column present", mutate: func(f *facts.Facts) {
			f.Netstat["TcpExt"] = map[string]int64{"SyncookiesSent": 0}
		}, status: Pass, reason: "no SYN cookies"},
	})
}

func TestListenOverflows(t *testing.T) {
	runRuleCases(t, "listen-overflows", []ruleCase{
		{name: "none", status: Pass, reason: "no listen-queue overflows"},
		{name: "overflows", mutate: func(f *facts.Facts) {
			f.Netstat["TcpExt"]["ListenOverflows"] = 7
			f.Netstat["TcpExt"]["ListenDrops"] = 9
		}, status: Fail, reason: "ListenOverflows, ListenDrops > 0",
			check: func(t *testing.T, fd Finding) {
				if fd.Observed != "ListenOverflows=7 ListenDrops=9 TCPReqQFullDrop=0" {
					t.Errorf("observed %q", fd.Observed)
				}
			}},
		{name: "reqq drops with somaxconn low", mutate: func(f *facts.Facts) {
			f.Netstat["TcpExt"]["TCPReqQFullDrop"] = 1
			f.Sysctl["net.core.somaxconn"] = "128"
		}, status: Fail, reason: "TCPReqQFullDrop > 0",
			check: func(t *testing.T, fd Finding) {
				if fd.Fix.Sysctl["net.core.somaxconn"] != "4096" {
					t.Errorf("fix %+v", fd.Fix)
				}
			}},
		{name: "missing", mutate: func(f *facts.Facts) { f.Netstat = nil }, status: Unknown, reason: "not gathered"},
	})
}

func TestKafkaBacklogHardcoded(t *testing.T) {
	kafka := func(v, dist string) func(f *facts.Facts) {
		return func(f *facts.Facts) { f.Kafka.Version, f.Kafka.Distribution = v, dist }
	}
	runRuleCases(t, "kafka-backlog-hardcoded", []ruleCase{
		{name: "apache 3.6.1", status: Pass, reason: "Apache Kafka 3.6.1 ≥ 3.2"},
		{name: "apache 3.2.0", mutate: kafka("3.2.0", "apache"), status: Pass, reason: "≥ 3.2"},
		{name: "apache 2.8.1", mutate: kafka("2.8.1", "apache"), status: Fail, reason: "hard-coded to 50",
			check: func(t *testing.T, fd Finding) {
				if !strings.Contains(fd.Fix.Manual, "upgrade Kafka to ≥ 3.2") {
					t.Errorf("manual %q", fd.Fix.Manual)
				}
			}},
		{name: "apache 3.1.2", mutate: kafka("3.1.2", "apache"), status: Fail, reason: "Apache Kafka 3.1.2"},
		{name: "apache 0.10.2.1", mutate: kafka("0.10.2.1", "apache"), status: Fail, reason: "0.10.2.1"},
		{name: "confluent 7.1.0 confirmed", mutate: kafka("7.1.0", "confluent"), status: Fail, reason: "Confluent Platform 7.1.0 ships Apache Kafka 3.1 (confirmed mapping); Confluent backported socket.listen.backlog.size to this line only from CP 7.1.7",
			check: func(t *testing.T, fd Finding) {
				if !strings.Contains(fd.Fix.Manual, "upgrade Confluent Platform to 7.1.7 or a later patch of its line (socket.listen.backlog.size backported), or to ≥ 7.2") {
					t.Errorf("manual %q", fd.Fix.Manual)
				}
			}},
		{name: "confluent 6.1 unconfirmed", mutate: kafka("6.1.3", "confluent"), status: Fail, reason: "(mapping unconfirmed [U]); the verdict does not depend on it"},
		{name: "confluent 7.2.1-ccs", mutate: kafka("7.2.1-ccs", "confluent"), status: Pass, reason: "Apache Kafka 3.2 (confirmed mapping)"},
		{name: "confluent 7.5 unconfirmed", mutate: kafka("7.5.0", "confluent"), status: Pass, reason: "any CP ≥ 7.2 ships AK ≥ 3.2 [D]"},
		{name: "confluent 8.1 not in table", mutate: kafka("8.1.0", "confluent"), status: Pass, reason: "not in the CP→AK table"},
		{name: "confluent 3.3 not in table", mutate: kafka("3.3.0", "confluent"), status: Fail, reason: "any CP < 7.2 ships AK < 3.2"},
		{name: "distribution unknown, readings agree", mutate: kafka("2.8.1", ""), status: Fail, reason: "the verdict is the same"},
		{name: "distribution unknown, readings disagree", mutate: kafka("3.4.0", ""), status: Unknown, reason: "readings disagree"},
		{name: "version unknown", mutate: func(f *facts.Facts) {
			f.Kafka.Version = ""
			f.Sections = secs(facts.SecKafka, "error", "no kafka_*.jar under /opt/kafka/libs")
		}, status: Unknown, reason: "no kafka_*.jar under /opt/kafka/libs"},
		{name: "no kafka", mutate: func(f *facts.Facts) {
			f.Kafka = nil
			f.Sections = secs(facts.SecKafka, "absent", "no listener on port 9092 and no kafka.Kafka process")
		}, status: Skip, reason: "no Kafka broker found on host: no listener on port 9092"},
		{name: "kafka detection denied", mutate: func(f *facts.Facts) {
			f.Kafka = nil
			f.Sections = secs(facts.SecKafka, "denied", "/proc/1234/cmdline: permission denied")
		}, status: Unknown, reason: "Kafka broker not gathered: /proc/1234/cmdline: permission denied"},
	})
}

func TestKafkaBacklogConfig(t *testing.T) {
	runRuleCases(t, "kafka-backlog-config", []ruleCase{
		{name: "4096", status: Pass, reason: "socket.listen.backlog.size 4096 ≥ target 4096"},
		{name: "unset default 50", mutate: func(f *facts.Facts) { delete(f.Kafka.Properties, PropBacklog) }, status: Fail, reason: "50 < target 4096",
			check: func(t *testing.T, fd Finding) {
				if fd.Observed != "socket.listen.backlog.size unset (default 50)" || fd.Fix.KafkaProperties[PropBacklog] != "4096" || !fd.Fix.Restart {
					t.Errorf("observed %q fix %+v", fd.Observed, fd.Fix)
				}
			}},
		{name: "1024 with line", mutate: func(f *facts.Facts) { f.Kafka.Properties[PropBacklog] = "1024" }, status: Fail, reason: "1024 < target 4096",
			check: func(t *testing.T, fd Finding) {
				if fd.Observed != "socket.listen.backlog.size=1024 (/opt/kafka/config/server.properties:12)" {
					t.Errorf("observed %q", fd.Observed)
				}
			}},
		{name: "profile lowered", mutate: func(f *facts.Facts) { f.Kafka.Properties[PropBacklog] = "1024" }, profile: func(p *Profile) { p.ListenBacklog = 1024 }, status: Pass, reason: "≥ target 1024"},
		{name: "somaxconn caps it", mutate: func(f *facts.Facts) { f.Sysctl["net.core.somaxconn"] = "128" }, status: Pass, reason: "min(4096, 128) = 128"},
		{name: "kafka 2.8 skip", mutate: func(f *facts.Facts) { f.Kafka.Version = "2.8.1" }, status: Skip, reason: "Kafka < 3.2 ignores socket.listen.backlog.size; see kafka-backlog-hardcoded"},
		{name: "no kafka", mutate: func(f *facts.Facts) { f.Kafka = nil }, status: Skip, reason: "no Kafka broker found"},
		{name: "version unknown", mutate: func(f *facts.Facts) { f.Kafka.Version = "" }, status: Unknown, reason: "version not gathered"},
		{name: "config unread", mutate: func(f *facts.Facts) {
			f.Kafka.Properties = nil
			f.Sections = secs(facts.SecKafkaConf, "denied", "/opt/kafka/config/server.properties: permission denied")
		}, status: Unknown, reason: "server.properties not gathered: /opt/kafka/config/server.properties: permission denied"},
		{name: "not an integer", mutate: func(f *facts.Facts) { f.Kafka.Properties[PropBacklog] = "${BACKLOG}" }, status: Unknown, reason: "is not an integer"},
	})
}

func TestListenBacklogEffective(t *testing.T) {
	runRuleCases(t, "listen-backlog-effective", []ruleCase{
		{name: "4096", status: Pass, reason: "effective backlog of 4096"},
		{name: "kafka 2.8 send-q 50", mutate: func(f *facts.Facts) {
			f.Kafka.Version = "2.8.1"
			f.Listeners[1] = facts.Listener{Addr: "0.0.0.0", Port: 9092, Backlog: 50}
		}, status: Fail, reason: "min(Kafka's hard-coded backlog 50 (before 3.2), net.core.somaxconn 4096)",
			check: func(t *testing.T, fd Finding) {
				if fd.Observed != "Send-Q 50 on 0.0.0.0:9092" || !strings.Contains(fd.Fix.Manual, "upgrade Kafka") || fd.Fix.Sysctl != nil {
					t.Errorf("observed %q fix %+v", fd.Observed, fd.Fix)
				}
			}},
		{name: "somaxconn 128 limits", mutate: func(f *facts.Facts) {
			f.Sysctl["net.core.somaxconn"] = "128"
			f.Listeners[1].Backlog = 128
		}, status: Fail, reason: "limited by net.core.somaxconn=128",
			check: func(t *testing.T, fd Finding) {
				if fd.Fix.Sysctl["net.core.somaxconn"] != "4096" || fd.Fix.KafkaProperties != nil || !fd.Fix.Restart {
					t.Errorf("fix %+v", fd.Fix)
				}
			}},
		{name: "both limit", mutate: func(f *facts.Facts) {
			f.Sysctl["net.core.somaxconn"] = "128"
			delete(f.Kafka.Properties, PropBacklog)
			f.Listeners[1].Backlog = 50
		}, status: Fail, reason: "limited by net.core.somaxconn=128 and socket.listen.backlog.size 50",
			check: func(t *testing.T, fd Finding) {
				if fd.Fix.Sysctl == nil || fd.Fix.KafkaProperties[PropBacklog] != "4096" {
					t.Errorf("fix %+v", fd.Fix)
				}
			}},
		{name: "not restarted", mutate: func(f *facts.Facts) { f.Listeners[1].Backlog = 128 }, status: Fail, reason: "not been restarted",
			check: func(t *testing.T, fd Finding) {
				if !fd.Fix.Restart || !strings.Contains(fd.Fix.Manual, "restart the broker") {
					t.Errorf("fix %+v", fd.Fix)
				}
			}},
		{name: "v4 and v6, lowest counts", mutate: func(f *facts.Facts) {
			f.Listeners = append(f.Listeners, facts.Listener{Addr: "[::]", Port: 9092, Backlog: 50})
		}, status: Fail, reason: "Send-Q 4096 on *:9092, Send-Q 50 on [::]:9092"},
		{name: "custom port", mutate: func(f *facts.Facts) {
			f.KafkaPort = 9093
			f.Listeners[1].Port = 9093
		}, status: Pass, reason: "4096"},
		{name: "no listener on port", mutate: func(f *facts.Facts) { f.Listeners = f.Listeners[:1] }, status: Unknown, reason: "no listener on port 9092: broker down?"},
		{name: "ss missing", mutate: func(f *facts.Facts) {
			f.Listeners = nil
			f.Sections = secs(facts.SecListeners, "missing", "ss not installed on host")
		}, status: Unknown, reason: "listeners not gathered: ss not installed on host"},
	})
}

func TestSomaxconn(t *testing.T) {
	runRuleCases(t, "somaxconn", []ruleCase{
		{name: "4096", status: Pass, reason: "≥ 4096"},
		{name: "65535", mutate: func(f *facts.Facts) { f.Sysctl["net.core.somaxconn"] = "65535" }, status: Pass, reason: "≥ 4096"},
		{name: "128", mutate: func(f *facts.Facts) { f.Sysctl["net.core.somaxconn"] = "128" }, status: Fail, reason: "net.core.somaxconn=128 (want >= 4096)",
			check: func(t *testing.T, fd Finding) {
				if !reflect.DeepEqual(fd.Fix.Sysctl, map[string]string{"net.core.somaxconn": "4096"}) || !fd.Fix.Restart {
					t.Errorf("fix %+v", fd.Fix)
				}
			}},
		{name: "profile override", profile: func(p *Profile) { p.Somaxconn = 8192 }, status: Fail, reason: "want >= 8192"},
		{name: "missing key", mutate: func(f *facts.Facts) { delete(f.Sysctl, "net.core.somaxconn") }, status: Unknown, reason: "net.core.somaxconn not readable"},
		{name: "sysctl section failed", mutate: func(f *facts.Facts) {
			f.Sysctl = nil
			f.Sections = secs(facts.SecSysctl, "error", "/proc/sys not mounted")
		}, status: Unknown, reason: "sysctl values not gathered: /proc/sys not mounted"},
		{name: "garbage", mutate: func(f *facts.Facts) { f.Sysctl["net.core.somaxconn"] = "lots" }, status: Unknown, reason: "not an integer"},
	})
}

func TestSynBacklog(t *testing.T) {
	runRuleCases(t, "syn-backlog", []ruleCase{
		{name: "8192", status: Pass, reason: "only matters when tcp_syncookies=0"},
		{name: "1024 cookies on", mutate: func(f *facts.Facts) { f.Sysctl["net.ipv4.tcp_max_syn_backlog"] = "1024" }, status: Fail, reason: "raising it alone changes nothing"},
		{name: "1024 cookies off", mutate: func(f *facts.Facts) {
			f.Sysctl["net.ipv4.tcp_max_syn_backlog"] = "1024"
			f.Sysctl[KeySyncookies] = "0"
		}, status: Fail, reason: "tcp_syncookies=0 here, so it matters"},
		{name: "3.10 formula", mutate: func(f *facts.Facts) {
			f.Kernel = facts.Kernel{Release: "3.10.0-1160.el7.x86_64"}
			f.Sysctl["net.ipv4.tcp_max_syn_backlog"] = "512"
			f.Listeners[1].Backlog = 50
		}, status: Fail, reason: "roundup_pow_of_two(max(min(backlog, tcp_max_syn_backlog), 8) + 1) = 64 for a backlog of 50"},
		{name: "missing", mutate: func(f *facts.Facts) { delete(f.Sysctl, "net.ipv4.tcp_max_syn_backlog") }, status: Unknown, reason: "not readable"},
	})
}

func TestSynQueue34(t *testing.T) {
	for _, c := range []struct{ backlog, tmsb, want int }{{50, 512, 64}, {50, 8192, 64}, {128, 8192, 256}, {1, 8192, 16}, {4096, 1024, 2048}, {63, 8192, 64}} {
		if got := synQueue34(c.backlog, c.tmsb); got != c.want {
			t.Errorf("synQueue34(%d, %d) = %d, want %d", c.backlog, c.tmsb, got, c.want)
		}
	}
}

func TestTCPTimestamps(t *testing.T) {
	runRuleCases(t, "tcp-timestamps", []ruleCase{
		{name: "1", status: Pass, reason: "enabled"},
		{name: "2", mutate: func(f *facts.Facts) { f.Sysctl[KeyTimestamps] = "2" }, status: Pass, reason: "without per-connection random offsets"},
		{name: "0", mutate: func(f *facts.Facts) { f.Sysctl[KeyTimestamps] = "0" }, status: Fail, reason: "cookie connection loses its window scale",
			check: func(t *testing.T, fd Finding) {
				if fd.Fix.Sysctl[KeyTimestamps] != "1" {
					t.Errorf("fix %+v", fd.Fix)
				}
			}},
		{name: "missing", mutate: func(f *facts.Facts) { delete(f.Sysctl, KeyTimestamps) }, status: Unknown, reason: "not readable"},
	})
}

func TestWindowScaling(t *testing.T) {
	runRuleCases(t, "window-scaling", []ruleCase{
		{name: "1", status: Pass, reason: "enabled"},
		{name: "0", mutate: func(f *facts.Facts) { f.Sysctl[KeyWindowScaling] = "0" }, status: Fail, reason: "64 KiB"},
		{name: "missing", mutate: func(f *facts.Facts) { f.Sysctl = nil }, status: Unknown, reason: "not gathered"},
	})
}

func TestSocketBuffers(t *testing.T) {
	runRuleCases(t, "socket-buffers", []ruleCase{
		{name: "guide values", status: Pass, reason: "meet"},
		{name: "kernel defaults", mutate: func(f *facts.Facts) {
			f.Sysctl["net.core.rmem_max"] = "212992"
			f.Sysctl["net.ipv4.tcp_rmem"] = "4096\t131072\t6291456"
		}, status: Fail, reason: "net.core.rmem_max=212992 (want >= 134217728); net.ipv4.tcp_rmem=4096 131072 6291456 (want max field >= 134217728)",
			check: func(t *testing.T, fd Finding) {
				want := map[string]string{"net.core.rmem_max": "134217728", "net.ipv4.tcp_rmem": "4096 131072 134217728"}
				if !reflect.DeepEqual(fd.Fix.Sysctl, want) {
					t.Errorf("fix %v, want %v", fd.Fix.Sysctl, want)
				}
			}},
		{name: "default too small", mutate: func(f *facts.Facts) { f.Sysctl["net.core.wmem_default"] = "212992" }, status: Fail, reason: "net.core.wmem_default=212992"},
		{name: "one missing, rest fine", mutate: func(f *facts.Facts) { delete(f.Sysctl, "net.ipv4.tcp_wmem") }, status: Unknown, reason: "net.ipv4.tcp_wmem not readable"},
		{name: "malformed", mutate: func(f *facts.Facts) { f.Sysctl["net.ipv4.tcp_wmem"] = "4096 87380" }, status: Unknown, reason: "does not have 3 fields"},
		{name: "lower profile", mutate: func(f *facts.Facts) { f.Sysctl["net.ipv4.tcp_rmem"] = "4096 131072 6291456" }, profile: func(p *Profile) { *p, _ = p.With(map[string]any{"tcp_rmem_max": 6291456}) }, status: Pass, reason: "meet"},
	})
}

func TestCongestionControl(t *testing.T) {
	runRuleCases(t, "congestion-control", []ruleCase{
		{name: "bbr fq", status: Pass, reason: "bbr with qdisc fq"},
		{name: "cubic fq_codel", mutate: func(f *facts.Facts) {
			f.Sysctl["net.ipv4.tcp_congestion_control"] = "cubic"
			f.Sysctl["net.core.default_qdisc"] = "fq_codel"
		}, status: Fail, reason: "cubic (want bbr)",
			check: func(t *testing.T, fd Finding) {
				if fd.Fix.Sysctl["net.ipv4.tcp_congestion_control"] != "bbr" || fd.Fix.Sysctl["net.core.default_qdisc"] != "fq" {
					t.Errorf("fix %+v", fd.Fix)
				}
			}},
		{name: "bbr without fq", mutate: func(f *facts.Facts) { f.Sysctl["net.core.default_qdisc"] = "pfifo_fast" }, status: Fail, reason: "pfifo_fast (want fq)"},
		{name: "3.10 has no bbr", mutate: func(f *facts.Facts) {
			f.Kernel = facts.Kernel{Release: "3.10.0-1160.el7.x86_64"}
			f.Sysctl["net.ipv4.tcp_congestion_control"] = "cubic"
		}, status: Fail, reason: "BBR is not available before Linux 4.9",
			check: func(t *testing.T, fd Finding) {
				if fd.Fix.Sysctl != nil || !strings.Contains(fd.Fix.Manual, "4.9") {
					t.Errorf("fix %+v", fd.Fix)
				}
			}},
		{name: "profile cubic", mutate: func(f *facts.Facts) { f.Sysctl["net.ipv4.tcp_congestion_control"] = "cubic" }, profile: func(p *Profile) { p.CongestionControl = "cubic" }, status: Pass, reason: "cubic"},
		{name: "missing", mutate: func(f *facts.Facts) { delete(f.Sysctl, "net.core.default_qdisc") }, status: Unknown, reason: "net.core.default_qdisc not readable"},
	})
}

func TestSysctlPersisted(t *testing.T) {
	runRuleCases(t, "sysctl-persisted", []ruleCase{
		{name: "all persisted", status: Pass, reason: "survive a reboot"},
		{name: "somaxconn overridden at boot", mutate: func(f *facts.Facts) {
			f.Persisted["net.core.somaxconn"] = facts.PersistedSysctl{Value: "128", File: "/etc/sysctl.d/99-old.conf", Line: 4}
		}, status: Fail, reason: "net.core.somaxconn: runtime 4096, but /etc/sysctl.d/99-old.conf:4 sets 128 at boot",
			check: func(t *testing.T, fd Finding) {
				if !reflect.DeepEqual(fd.Fix.Sysctl, map[string]string{"net.core.somaxconn": "4096"}) {
					t.Errorf("fix %+v", fd.Fix)
				}
			}},
		{name: "somaxconn not persisted on 4.19", mutate: func(f *facts.Facts) {
			f.Kernel = facts.Kernel{Release: "4.19.0-13-amd64", Version: "#1 SMP Debian 4.19.160-2 (2020-11-28)"}
			delete(f.Persisted, "net.core.somaxconn")
		}, status: Fail, reason: "not persisted: reverts to 128 at boot (kernel default before 5.4)"},
		{name: "somaxconn not persisted on 6.1 is fine", mutate: func(f *facts.Facts) { delete(f.Persisted, "net.core.somaxconn") }, status: Pass, reason: "survive"},
		{name: "runtime above target persisted as-is", mutate: func(f *facts.Facts) {
			f.Sysctl["net.core.rmem_max"] = "268435456"
			delete(f.Persisted, "net.core.rmem_max")
		}, status: Fail, reason: "reverts to 212992",
			check: func(t *testing.T, fd Finding) {
				if fd.Fix.Sysctl["net.core.rmem_max"] != "268435456" {
					t.Errorf("fix must persist the runtime value: %+v", fd.Fix)
				}
			}},
		{name: "cubic default", mutate: func(f *facts.Facts) { delete(f.Persisted, "net.ipv4.tcp_congestion_control") }, status: Fail, reason: "reverts to cubic"},
		{name: "qdisc default unknown", mutate: func(f *facts.Facts) { delete(f.Persisted, "net.core.default_qdisc") }, status: Warn, reason: "boot value is not known"},
		{name: "syn backlog default unknown", mutate: func(f *facts.Facts) { delete(f.Persisted, "net.ipv4.tcp_max_syn_backlog") }, status: Warn, reason: "scales with memory"},
		{name: "syncookies mitigation not persisted", mutate: func(f *facts.Facts) {
			f.Kernel = facts.Kernel{Release: "3.10.0-1160.el7.x86_64"}
			f.Sysctl[KeySyncookies] = "0"
		}, status: Fail, reason: "net.ipv4.tcp_syncookies: runtime 0 not persisted: reverts to 1 at boot"},
		{name: "syncookies 0 on fixed kernel is not checked", mutate: func(f *facts.Facts) { f.Sysctl[KeySyncookies] = "0" }, status: Pass, reason: "survive"},
		{name: "non-compliant runtime is left to its rule", mutate: func(f *facts.Facts) {
			f.Sysctl["net.core.somaxconn"] = "128"
			delete(f.Persisted, "net.core.somaxconn")
		}, status: Pass, reason: "survive"},
		{name: "nothing persisted section absent", mutate: func(f *facts.Facts) {
			f.Persisted = nil
			f.Sections = secs(facts.SecPersisted, "absent", "no sysctl files")
		}, status: Fail, reason: "not persisted"},
		{name: "section denied", mutate: func(f *facts.Facts) {
			f.Persisted = nil
			f.Sections = secs(facts.SecPersisted, "denied", "/etc/sysctl.d: permission denied")
		}, status: Unknown, reason: "persisted sysctl values (sysctl.conf, sysctl.d) not gathered: /etc/sysctl.d: permission denied"},
		{name: "not gathered", mutate: func(f *facts.Facts) { f.Persisted = nil }, status: Unknown, reason: "not gathered"},
		{name: "nothing compliant", mutate: func(f *facts.Facts) {
			f.Sysctl = map[string]string{"net.core.somaxconn": "128"}
		}, status: Skip, reason: "no runtime sysctl value meets its target"},
	})
}

func TestNICRing(t *testing.T) {
	runRuleCases(t, "nic-ring", []ruleCase{
		{name: "4096", status: Pass, reason: "meet"},
		{name: "512 of 4096", mutate: func(f *facts.Facts) { f.NICs[0].Ring = &facts.Ring{RXMax: 4096, TXMax: 4096, RX: 512, TX: 4096} }, status: Fail, reason: "eth0 rx ring 512 < 4096",
			check: func(t *testing.T, fd Finding) {
				if !reflect.DeepEqual(fd.Fix.NIC, map[string]map[string]string{"eth0": {"rx": "4096"}}) {
					t.Errorf("fix %+v", fd.Fix.NIC)
				}
			}},
		{name: "at a lower maximum", mutate: func(f *facts.Facts) { f.NICs[0].Ring = &facts.Ring{RXMax: 1024, TXMax: 1024, RX: 1024, TX: 1024} }, status: Pass, reason: "meet"},
		{name: "below a lower maximum", mutate: func(f *facts.Facts) { f.NICs[0].Ring = &facts.Ring{RXMax: 1024, TXMax: 1024, RX: 256, TX: 1024} }, status: Fail, reason: "rx ring 256 < 1024",
			check: func(t *testing.T, fd Finding) {
				if fd.Fix.NIC["eth0"]["rx"] != "1024" {
					t.Errorf("fix %+v", fd.Fix.NIC)
				}
			}},
		{name: "tx n/a", mutate: func(f *facts.Facts) { f.NICs[0].Ring = &facts.Ring{RXMax: 4096, TXMax: -1, RX: 4096, TX: -1} }, status: Pass, reason: "meet"},
		{name: "veth skipped, eth0 checked", mutate: func(f *facts.Facts) {
			f.NICs = append(f.NICs, facts.NIC{Name: "veth0", RingErr: "Operation not supported"})
		}, status: Pass, reason: "skipped veth0: Operation not supported"},
		{name: "all unsupported", mutate: func(f *facts.Facts) {
			f.NICs = []facts.NIC{{Name: "veth0", RingErr: "Operation not supported"}}
		}, status: Skip, reason: "no NIC supports ring settings (veth0: Operation not supported)"},
		{name: "no NICs", mutate: func(f *facts.Facts) {
			f.NICs = nil
			f.Sections = secs(facts.SecNICs, "missing", "ethtool not installed on host")
		}, status: Unknown, reason: "not gathered: ethtool not installed on host"},
		{name: "interfaces listed but ethtool missing", mutate: func(f *facts.Facts) {
			f.NICs = []facts.NIC{{Name: "eth0", RingErr: "ethtool not installed", FeatErr: "ethtool not installed"}}
		}, status: Unknown, reason: "ring settings could not be read (eth0: ethtool not installed)"},
		{name: "netlink-era unsupported", mutate: func(f *facts.Facts) {
			f.NICs = []facts.NIC{{Name: "eth0", RingErr: "netlink error: Operation not supported"}}
		}, status: Skip, reason: "no NIC supports ring settings"},
	})
}

func TestNICOffload(t *testing.T) {
	runRuleCases(t, "nic-offload", []ruleCase{
		{name: "on", status: Pass, reason: "on where the NIC allows"},
		{name: "gro off", mutate: func(f *facts.Facts) { f.NICs[0].Features["gro"] = facts.Feature{On: false} }, status: Fail, reason: "eth0 gro off and not [fixed]",
			check: func(t *testing.T, fd Finding) {
				if !reflect.DeepEqual(fd.Fix.NIC, map[string]map[string]string{"eth0": {"gro": "on"}}) {
					t.Errorf("fix %+v", fd.Fix.NIC)
				}
			}},
		{name: "tso off fixed", mutate: func(f *facts.Facts) { f.NICs[0].Features["tso"] = facts.Feature{On: false, Fixed: true} }, status: Pass, reason: "eth0 tso off but [fixed]: the NIC cannot enable it, not a failure"},
		{name: "features unread", mutate: func(f *facts.Facts) {
			f.NICs[0].Features = nil
			f.NICs[0].FeatErr = "Operation not permitted"
		}, status: Unknown, reason: "eth0: Operation not permitted"},
		{name: "no NICs", mutate: func(f *facts.Facts) { f.NICs = nil }, status: Unknown, reason: "not gathered"},
		{name: "profile lro", mutate: func(f *facts.Facts) {
			f.NICs[0].Features["lro"] = facts.Feature{On: false}
		}, profile: func(p *Profile) { p.Offloads = []string{"lro"} }, status: Fail, reason: "eth0 lro off"},
		// What the plan lists as "cannot apply" (OffloadBlocked) is a
		// warning naming the chain, not a failure no fix can clear.
		{name: "tso blocked by fixed dependencies", mutate: func(f *facts.Facts) {
			f.NICs[0].Driver = "virtio_net"
			f.NICs[0].Features["tso"] = facts.Feature{On: false}
			f.NICs[0].Features["scatter-gather"] = facts.Feature{On: false, Fixed: true}
			f.NICs[0].Features["tx-checksumming"] = facts.Feature{On: false, Fixed: true}
		}, status: Warn, sev: Low,
			reason: "the NIC cannot: eth0 tso cannot be turned on: it needs scatter-gather and tx-checksumming, which are off [fixed] by the virtio_net driver (nothing to change on this host: the virtio_net driver does not offer it (a virtual NIC: give it checksum offload on the hypervisor's side, e.g. the virtio-net device's csum feature, then rerun kaudit); waive the finding here)",
			check: func(t *testing.T, fd Finding) {
				if fd.Fix == nil || !fd.Fix.WhenWarn || !reflect.DeepEqual(fd.Fix.NIC, map[string]map[string]string{"eth0": {"tso": "on"}}) || !strings.Contains(fd.Observed, "tso off (cannot be turned on)") {
					t.Errorf("fix %+v observed %q", fd.Fix, fd.Observed)
				}
			}},
		{name: "gro requested on", mutate: func(f *facts.Facts) {
			f.NICs[0].Features["gro"] = facts.Feature{On: false, Requested: "on"}
		}, status: Warn, sev: Low, reason: "the NIC cannot: eth0 gro cannot be turned on: the kernel keeps it off although on was requested (gro: off [requested on])"},
		{name: "one blocked, one fixable: fail for the fixable one only", mutate: func(f *facts.Facts) {
			f.NICs[0].Features["gro"] = facts.Feature{On: false}
			f.NICs[0].Features["gso"] = facts.Feature{On: false}
			f.NICs[0].Features["scatter-gather"] = facts.Feature{On: false, Fixed: true}
		}, status: Fail, reason: "eth0 gro off and not [fixed]",
			check: func(t *testing.T, fd Finding) {
				if !reflect.DeepEqual(fd.Fix.NIC, map[string]map[string]string{"eth0": {"gro": "on", "gso": "on"}}) || !strings.Contains(fd.Reason, "(the NIC cannot: eth0 gso cannot be turned on: it needs scatter-gather, which is off [fixed] by the mlx5_core driver") {
					t.Errorf("fix %+v reason %q", fd.Fix.NIC, fd.Reason)
				}
			}},
	})
}

func TestKernelRuleUnknownReasonUsesSection(t *testing.T) {
	f := compliantHost()
	f.Kernel = facts.Kernel{}
	f.Sections = secs(facts.SecKernel, "error", "cannot read /proc/sys/kernel/osrelease")
	fd := find(t, Evaluate(f, DefaultProfile()), "kernel-synack-wscale")
	if fd.Status != Unknown || !strings.Contains(fd.Reason, "cannot read /proc/sys/kernel/osrelease") {
		t.Fatalf("got %s %q", fd.Status, fd.Reason)
	}
}
