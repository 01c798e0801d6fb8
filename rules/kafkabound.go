package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	version "github.com/hashicorp/go-version"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kaudit/kaudit/audit/facts"
)

// RuleBrokerVersionMismatch is the cluster rule comparing the release a
// running broker speaks with the jars read on its host.
const RuleBrokerVersionMismatch = "broker-version-mismatch"

// KafkaBound is a lower bound on the Apache Kafka release a running broker
// is, read from its ApiVersions answer: it accepts API at Version, which no
// release before Release accepts (franz-go's kversion release tables).
// It never says the broker is not newer.
type KafkaBound struct {
	Release string `json:"release"` // "3.8", "0.10.2"
	API     string `json:"api"`     // "Produce"
	Version int16  `json:"version"`
}

// Evidence is why the bound holds: "Produce v11, first in 3.8".
func (b KafkaBound) Evidence() string {
	return fmt.Sprintf("%s v%d, first in %s", b.API, b.Version, b.Release)
}

// kafkaRelease is one of franz-go's release tables: the highest version of
// each request a broker of the release accepts.
type kafkaRelease struct {
	name  string
	v     *version.Version
	table *kversion.Versions
}

// kafkaReleases are the tables, oldest first. Up to 3.9 they are the
// ZooKeeper-mode broker's, from 4.0 the KRaft broker's.
var kafkaReleases = sync.OnceValue(func() []kafkaRelease {
	tables := []struct {
		name string
		fn   func() *kversion.Versions
	}{
		{"0.8.0", kversion.V0_8_0}, {"0.8.1", kversion.V0_8_1}, {"0.8.2", kversion.V0_8_2},
		{"0.9.0", kversion.V0_9_0}, {"0.10.0", kversion.V0_10_0}, {"0.10.1", kversion.V0_10_1},
		{"0.10.2", kversion.V0_10_2}, {"0.11.0", kversion.V0_11_0}, {"1.0", kversion.V1_0_0},
		{"1.1", kversion.V1_1_0}, {"2.0", kversion.V2_0_0}, {"2.1", kversion.V2_1_0},
		{"2.2", kversion.V2_2_0}, {"2.3", kversion.V2_3_0}, {"2.4", kversion.V2_4_0},
		{"2.5", kversion.V2_5_0}, {"2.6", kversion.V2_6_0}, {"2.7", kversion.V2_7_0},
		{"2.8", kversion.V2_8_0}, {"3.0", kversion.V3_0_0}, {"3.1", kversion.V3_1_0},
		{"3.2", kversion.V3_2_0}, {"3.3", kversion.V3_3_0}, {"3.4", kversion.V3_4_0},
		{"3.5", kversion.V3_5_0}, {"3.6", kversion.V3_6_0}, {"3.7", kversion.V3_7_0},
		{"3.8", kversion.V3_8_0}, {"3.9", kversion.V3_9_0}, {"4.0", kversion.V4_0_0},
		{"4.1", kversion.V4_1_0}, {"4.2", kversion.V4_2_0}, {"4.3", kversion.V4_3_0},
		{"4.4", kversion.V4_4_0},
	}
	out := make([]kafkaRelease, len(tables))
	for i, t := range tables {
		out[i] = kafkaRelease{name: t.name, v: version.Must(version.NewVersion(t.name)), table: t.fn()}
	}
	return out
})

// envelopeKey is Envelope (KIP-590): KRaft brokers of 2.8 to 3.1 list it,
// the ZooKeeper tables only from 3.4.
const envelopeKey = 58

// boundKey says whether a key may raise the bound. The tables up to 3.9
// are the ZooKeeper broker's, and a KRaft broker of 3.x also lists APIs
// those tables lack (DescribeQuorum, UnregisterBroker, the telemetry
// APIs, ListConfigResources, DescribeTopicPartitions, Add/RemoveRaftVoter)
// that the 4.0 table has: read from the tables they would say 4.0 of a
// 3.3 broker. Only keys of the 3.9 ZooKeeper table count, less Envelope;
// for every other key franz-go's KRaft broker tables of 2.8 to 3.9 list no
// version before the release the exported tables first list it in.
func boundKey(key int16) bool {
	if key == envelopeKey {
		return false
	}
	for _, r := range kafkaReleases() {
		if r.name == lastZooKeeperRelease {
			return r.table.HasKey(key)
		}
	}
	return false
}

// lastZooKeeperRelease is the last release of ZooKeeper-mode brokers.
const lastZooKeeperRelease = "3.9"

// KafkaLowerBound is the bound a broker's ApiVersions answer (api key →
// the highest version it accepts) proves: per key, the first release whose
// table accepts that version; the highest of them. A key the broker does
// not list, or lists at a lower version, says nothing (listeners filter
// APIs, fakes implement subsets): nothing here is an upper bound. ok is
// false when no key gives one.
func KafkaLowerBound(apis map[int16]int16) (KafkaBound, bool) {
	rs := kafkaReleases()
	best := -1
	var b KafkaBound
	for _, k := range slices.Sorted(maps.Keys(apis)) {
		if !boundKey(k) {
			continue
		}
		i := firstRelease(rs, k, apis[k])
		if i > best {
			best = i
			b = KafkaBound{Release: rs[i].name, API: apiName(k), Version: apis[k]}
		}
	}
	return b, best >= 0
}

// firstRelease is the index of the first release accepting key at v, or
// -1 when none does (a version newer than every table: no claim).
func firstRelease(rs []kafkaRelease, key, v int16) int {
	return slices.IndexFunc(rs, func(r kafkaRelease) bool {
		m, ok := r.table.LookupMaxKeyVersion(key)
		return ok && m >= v
	})
}

func apiName(k int16) string {
	if n := kmsg.NameForKey(k); n != "" {
		return n
	}
	return fmt.Sprintf("API key %d", k)
}

// JarsOlder says whether the jars a broker's host was read from (k) are an
// older Apache Kafka release than bound: the running broker then is
// another installation than the one kaudit read. jars describes them
// ("Apache Kafka 3.6.1"); known is false when their Apache Kafka version
// cannot be told (no version, the distribution not recorded, a Confluent
// line not in confluent.yaml): then nothing is claimed.
func JarsOlder(bound KafkaBound, k *facts.Kafka) (jars string, older, known bool) {
	if k == nil {
		return "", false, false
	}
	kv := kafkaVersionOf(k)
	jar, ok := kafkaNumber(kv.ak)
	floor, good := kafkaNumber(bound.Release)
	if !ok || !good {
		return kv.desc, false, false
	}
	return kv.desc, truncated(jar, len(floor.Segments())).LessThan(floor), true
}

// truncated is v with only its first n segments ("3.6.1", 2 → 3.6).
func truncated(v *version.Version, n int) *version.Version {
	seg := v.Segments()
	if len(seg) > n {
		seg = seg[:n]
	}
	parts := make([]string, len(seg))
	for i, s := range seg {
		parts[i] = fmt.Sprint(s)
	}
	return version.Must(version.NewVersion(strings.Join(parts, ".")))
}

// BrokerVersionMismatch is the broker-version-mismatch finding's message
// when the jars on host (proven to be broker node) are older than the
// release the running broker speaks; ok is false when they are not, or
// cannot be told.
func BrokerVersionMismatch(node int32, host string, bound KafkaBound, k *facts.Kafka) (msg string, ok bool) {
	jars, older, known := JarsOlder(bound, k)
	if !known || !older {
		return "", false
	}
	where := ""
	if k.Jar != "" {
		where = " (" + k.Jar + ")"
	}
	return fmt.Sprintf("broker %d speaks %s v%d (Kafka ≥ %s) but the jars on %s say %s%s: kaudit judged another installation than the running one",
		node, bound.API, bound.Version, bound.Release, host, jars, where), true
}
