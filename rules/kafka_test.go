package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// TestConfluentVersions lists every Confluent Platform version 5.0 … 7.6 with
// the Apache Kafka version it ships and kafka-backlog-hardcoded's verdict.
func TestConfluentVersions(t *testing.T) {
	cases := []struct {
		cp, ak    string
		confirmed bool
		status    Status
	}{
		{"5.0.0", "2.0", true, Fail},
		{"5.1.2", "2.1", true, Fail},
		{"5.2.1", "2.2", true, Fail},
		{"5.3.0", "2.3", true, Fail},
		{"5.4.3", "2.4", true, Fail},
		{"5.5.1", "2.5", true, Fail},
		{"6.0.0", "2.6", false, Fail},
		{"6.1.1", "2.7", false, Fail},
		{"6.2.0", "2.8", true, Fail},
		{"7.0.1", "3.0", true, Fail},
		{"7.1.0", "3.1", true, Fail},
		{"7.2.0", "3.2", true, Pass},
		{"7.2.1", "3.2", true, Pass},
		{"7.3.0", "3.3", false, Pass},
		{"7.4.0", "3.4", false, Pass},
		{"7.5.2", "3.5", false, Pass},
		{"7.6.0", "3.6", false, Pass},
	}
	for _, c := range cases {
		t.Run("CP "+c.cp, func(t *testing.T) {
			ak, confirmed, ok := ConfluentToApache(c.cp)
			if !ok || ak != c.ak || confirmed != c.confirmed {
				t.Fatalf("ConfluentToApache(%s) = %s %v %v, want %s %v", c.cp, ak, confirmed, ok, c.ak, c.confirmed)
			}
			f := compliantHost()
			f.Kafka.Version, f.Kafka.Distribution = c.cp+"-ccs", "confluent"
			fd := find(t, Evaluate(f, DefaultProfile()), "kafka-backlog-hardcoded")
			if fd.Status != c.status {
				t.Fatalf("verdict %s, want %s: %s", fd.Status, c.status, fd.Reason)
			}
			wantMark := "(confirmed mapping)"
			if !c.confirmed {
				wantMark = "mapping unconfirmed [U]"
			}
			if !strings.Contains(fd.Reason, wantMark) || !strings.Contains(fd.Reason, "Apache Kafka "+c.ak) {
				t.Fatalf("reason %q lacks %q / AK %s", fd.Reason, wantMark, c.ak)
			}
			cfg := find(t, Evaluate(f, DefaultProfile()), "kafka-backlog-config")
			if (c.status == Pass) != (cfg.Status != Skip) {
				t.Fatalf("kafka-backlog-config %s for CP %s", cfg.Status, c.cp)
			}
		})
	}
	for _, v := range []string{"4.0.0", "4.1.3"} {
		if _, confirmed, ok := ConfluentToApache(v); !ok || !confirmed {
			t.Errorf("CP %s should be a confirmed row", v)
		}
	}
	if _, _, ok := ConfluentToApache("9.9"); ok {
		t.Error("CP 9.9 should not be in the table")
	}
}

func TestApacheVersions(t *testing.T) {
	for _, c := range []struct {
		v    string
		want Status
	}{{"0.10.2.1", Fail}, {"1.1.1", Fail}, {"2.8.1", Fail}, {"3.1.2", Fail}, {"3.2.0", Pass}, {"3.2.3", Pass}, {"3.9.0", Pass}, {"4.0.0", Pass}} {
		f := compliantHost()
		f.Kafka = &facts.Kafka{Version: c.v, Distribution: "apache"}
		fd := find(t, Evaluate(f, DefaultProfile()), "kafka-backlog-hardcoded")
		if fd.Status != c.want {
			t.Errorf("Apache Kafka %s: %s, want %s (%s)", c.v, fd.Status, c.want, fd.Reason)
		}
	}
}

func ExampleKernelFixStatus() {
	st, reason := KernelFixStatus(facts.Kernel{Release: "5.4.0-58-generic", Signature: "Ubuntu 5.4.0-58.64-generic 5.4.73"})
	fmt.Println(st)
	fmt.Println(reason)
	// Output:
	// affected
	// kernel 5.4.0-58-generic is built on upstream 5.4.73 (/proc/version_signature) < 5.4.78, the first fixed release of the 5.4 series: it lacks commit 909172a
}

// TestKIP764Boundaries walks every boundary of Confluent's KIP-764
// backports (confluentinc/kafka tags v6.1.11, v6.2.10, v7.0.9, v7.1.7) and of Apache Kafka 3.2: kafka-backlog-hardcoded's
// verdict, and whether kafka-backlog-config checks the property (pass with
// 4096 set, fail with a KafkaProperties fix when it is unset) or skips.
func TestKIP764Boundaries(t *testing.T) {
	for _, c := range []struct {
		v, dist      string
		configurable bool
	}{
		{"6.1.10", "confluent", false}, {"6.1.11", "confluent", true}, {"6.1.12", "confluent", true},
		{"6.2.9", "confluent", false}, {"6.2.10", "confluent", true},
		{"7.0.8", "confluent", false}, {"7.0.9", "confluent", true},
		{"7.1.6", "confluent", false}, {"7.1.7", "confluent", true}, {"7.1.7-ccs", "confluent", true},
		{"7.2.0", "confluent", true}, {"6.0.9", "confluent", false}, {"5.5.12", "confluent", false},
		{"3.1.2", "apache", false}, {"3.2.0", "apache", true},
	} {
		t.Run(c.dist+" "+c.v, func(t *testing.T) {
			f := compliantHost()
			f.Kafka.Version, f.Kafka.Distribution = c.v, c.dist
			hard := find(t, Evaluate(f, DefaultProfile()), RuleKafkaBacklogHardcoded)
			cfg := find(t, Evaluate(f, DefaultProfile()), RuleKafkaBacklogConfig)
			delete(f.Kafka.Properties, PropBacklog)
			unset := find(t, Evaluate(f, DefaultProfile()), RuleKafkaBacklogConfig)
			if !c.configurable {
				if hard.Status != Fail || cfg.Status != Skip || unset.Status != Skip {
					t.Fatalf("hardcoded %s, config %s/%s; want fail, skip/skip (%s)", hard.Status, cfg.Status, unset.Status, hard.Reason)
				}
				return
			}
			if hard.Status != Pass || cfg.Status != Pass || unset.Status != Fail {
				t.Fatalf("hardcoded %s (%s), config %s/%s; want pass, pass/fail", hard.Status, hard.Reason, cfg.Status, unset.Status)
			}
			if unset.Fix == nil || unset.Fix.KafkaProperties[PropBacklog] != "4096" {
				t.Fatalf("config fix %+v, want socket.listen.backlog.size=4096", unset.Fix)
			}
		})
	}
}
