package rules

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kaudit/kaudit/audit/facts"
)

// apisOf is a release table as a broker's ApiVersions answer would list it.
func apisOf(vs *kversion.Versions) map[int16]int16 {
	m := map[int16]int16{}
	vs.EachMaxKeyVersion(func(k, v int16) { m[k] = v })
	return m
}

// Each of franz-go's release tables, as a broker would answer, proves its
// own release and no later one; the evidence names the key that did.
func TestKafkaLowerBoundOfEachRelease(t *testing.T) {
	for _, tt := range []struct {
		table *kversion.Versions
		want  string
		why   string
	}{
		{kversion.V0_8_0(), "0.8.0", "Produce v0, first in 0.8.0"},
		{kversion.V0_10_2(), "0.10.2", "UpdateMetadata v3, first in 0.10.2"},
		{kversion.V2_8_0(), "2.8", "Produce v9, first in 2.8"},
		{kversion.V3_2_0(), "3.2", "LeaderAndISR v6, first in 3.2"},
		{kversion.V3_5_0(), "3.5", "Fetch v15, first in 3.5"},
		{kversion.V3_6_0(), "3.6", "AddPartitionsToTxn v4, first in 3.6"},
		{kversion.V3_7_0(), "3.7", "Produce v10, first in 3.7"},
		{kversion.V3_8_0(), "3.8", "Produce v11, first in 3.8"},
		{kversion.V3_9_0(), "3.9", "Fetch v17, first in 3.9"},
		{kversion.V4_0_0(), "4.0", "Produce v12, first in 4.0"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			b, ok := KafkaLowerBound(apisOf(tt.table))
			if !ok || b.Release != tt.want || b.Evidence() != tt.why {
				t.Errorf("bound %+v (%v): %q, want %s: %q", b, ok, b.Evidence(), tt.want, tt.why)
			}
		})
	}
}

// No release table proves a later release than its own, and every release
// from 2.8 on is told apart from the one before.
func TestKafkaLowerBoundNeverAbove(t *testing.T) {
	rs := kafkaReleases()
	for i, r := range rs {
		b, ok := KafkaLowerBound(apisOf(r.table))
		if !ok {
			t.Errorf("%s: no bound", r.name)
			continue
		}
		got := firstIndex(t, b.Release)
		if got > i {
			t.Errorf("%s's table proves %s (%s): above the release", r.name, b.Release, b.Evidence())
		}
		if r.v.GreaterThanOrEqual(rs[firstIndex(t, "2.8")].v) && got != i {
			t.Errorf("%s's table proves only %s", r.name, b.Release)
		}
	}
}

func firstIndex(t *testing.T, name string) int {
	t.Helper()
	for i, r := range kafkaReleases() {
		if r.name == name {
			return i
		}
	}
	t.Fatalf("no release %s", name)
	return -1
}

// What a broker does not list, or lists lower, never raises the bound; a
// KRaft broker's own APIs (absent from the ZooKeeper tables) and versions
// newer than every table claim nothing.
func TestKafkaLowerBoundClaimsNoMore(t *testing.T) {
	v37 := apisOf(kversion.V3_7_0())
	noProduce := apisOf(kversion.V3_7_0())
	delete(noProduce, 0)
	lowered := apisOf(kversion.V3_7_0())
	lowered[0], lowered[1], lowered[8], lowered[9], lowered[60], lowered[68] = 9, 15, 8, 8, 0, -1
	delete(lowered, 68)
	kraft33 := apisOf(kversion.V3_3_0())
	kraft33[55], kraft33[64], kraft33[71], kraft33[72], kraft33[75] = 1, 0, 0, 0, 0 // DescribeQuorum, UnregisterBroker, telemetry, DescribeTopicPartitions
	kraft31 := apisOf(kversion.V3_1_0())
	kraft31[58] = 0 // Envelope
	future := map[int16]int16{0: 99, 3: 1}
	for _, tt := range []struct {
		name string
		apis map[int16]int16
		want string
		ok   bool
	}{
		{"3.7 without Produce: Fetch v16 still proves 3.7", noProduce, "3.7", true},
		{"3.7 with its new versions lowered: 3.6", lowered, "3.6", true},
		{"a KRaft 3.3 broker's quorum APIs: 3.3, not 4.0", kraft33, "3.3", true},
		{"a KRaft 3.1 broker's Envelope: 3.1, not 3.4", kraft31, "3.1", true},
		{"Produce v99 claims nothing; Metadata v1 proves 0.10.0", future, "0.10.0", true},
		{"nothing listed", map[int16]int16{}, "", false},
		{"only unknown keys", map[int16]int16{1000: 3}, "", false},
		{"full 3.7", v37, "3.7", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := KafkaLowerBound(tt.apis)
			if ok != tt.ok || b.Release != tt.want {
				t.Errorf("bound %+v (%v), want %q (%v)", b, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestBrokerVersionMismatch(t *testing.T) {
	b37 := KafkaBound{Release: "3.7", API: "Produce", Version: 10}
	b0102 := KafkaBound{Release: "0.10.2", API: "OffsetFetch", Version: 2}
	apache := func(v string) *facts.Kafka {
		return &facts.Kafka{Version: v, Distribution: "apache", Jar: "/opt/kafka_2.13-" + v + "/libs/kafka_2.13-" + v + ".jar"}
	}
	for _, tt := range []struct {
		name  string
		bound KafkaBound
		k     *facts.Kafka
		msg   string
	}{
		{"jars 3.6.1, the broker speaks 3.7", b37, apache("3.6.1"),
			"broker 1 speaks Produce v10 (Kafka ≥ 3.7) but the jars on kd1 say Apache Kafka 3.6.1 (/opt/kafka_2.13-3.6.1/libs/kafka_2.13-3.6.1.jar): kaudit judged another installation than the running one"},
		{"jars 3.7.0: equal", b37, apache("3.7.0"), ""},
		{"jars 3.9.1: newer", b37, apache("3.9.1"), ""},
		{"Confluent 7.6 ships 3.6", b37, &facts.Kafka{Version: "7.6.0", Distribution: "confluent"},
			"broker 1 speaks Produce v10 (Kafka ≥ 3.7) but the jars on kd1 say Confluent Platform 7.6.0 (Apache Kafka 3.6, unconfirmed mapping): kaudit judged another installation than the running one"},
		{"Confluent 7.7 ships 3.7", b37, &facts.Kafka{Version: "7.7.1", Distribution: "confluent"}, ""},
		{"distribution unknown: nothing claimed", b37, &facts.Kafka{Version: "3.6.1"}, ""},
		{"no version: nothing claimed", b37, &facts.Kafka{PID: 7}, ""},
		{"no broker: nothing claimed", b37, nil, ""},
		{"0.10.1.1 below 0.10.2", b0102, apache("0.10.1.1"),
			"broker 1 speaks OffsetFetch v2 (Kafka ≥ 0.10.2) but the jars on kd1 say Apache Kafka 0.10.1.1 (/opt/kafka_2.13-0.10.1.1/libs/kafka_2.13-0.10.1.1.jar): kaudit judged another installation than the running one"},
		{"0.10.2.2 is 0.10.2", b0102, apache("0.10.2.2"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg, ok := BrokerVersionMismatch(1, "kd1", tt.bound, tt.k)
			if msg != tt.msg || ok != (tt.msg != "") {
				t.Errorf("got %q (%v)\nwant %q", msg, ok, tt.msg)
			}
		})
	}
}
