package rules

import (
	"reflect"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func TestTimeSyncRule(t *testing.T) {
	runRuleCases(t, RuleTimeSync, []ruleCase{
		{name: "chrony synchronised", status: Pass, reason: "chronyd (chronyc -n tracking) says the clock is synchronised"},
		{name: "chrony not synchronised", mutate: func(f *facts.Facts) {
			f.TimeSync.State, f.TimeSync.Detail = facts.Unsynced, "Leap status: Not synchronised"
		}, status: Fail, reason: "says the clock is not synchronised"},
		{name: "ntpd leap alarm", mutate: func(f *facts.Facts) {
			f.TimeSync = &facts.TimeSync{State: facts.Unsynced, Service: "ntpd", Source: "ntpq -n -c rv", Detail: "leap=11, stratum=16"}
		}, status: Fail, reason: "ntpd (ntpq -n -c rv) says"},
		{name: "no time service", mutate: func(f *facts.Facts) {
			f.TimeSync = &facts.TimeSync{State: facts.NoService, Source: "timedatectl show", Detail: "NTP=no NTPSynchronized=no"}
		}, status: Fail, reason: "no time service keeps this host's clock"},
		{name: "nothing answered", mutate: func(f *facts.Facts) {
			f.TimeSync = nil
			f.Sections = map[string]facts.SectionStatus{facts.SecTimeSync: {State: facts.SectionError, Message: "no chronyc, ntpq, timesyncd state or timedatectl on the host"}}
		}, status: Unknown, reason: "not gathered: no chronyc, ntpq"},
		{name: "an older script", mutate: func(f *facts.Facts) { f.TimeSync = nil }, status: Unknown, reason: "not gathered"},
	})
}

func TestConntrackDropsRule(t *testing.T) {
	runRuleCases(t, RuleConntrackDrops, []ruleCase{
		{name: "no drops", status: Pass, reason: "dropped no connection"},
		{name: "early drops", mutate: func(f *facts.Facts) { f.ConntrackStat.EarlyDrop = 3 }, status: Fail, reason: "failed to take connections",
			check: func(t *testing.T, fd Finding) {
				if fd.Observed != "drop=0, early_drop=3, insert_failed=0 (summed over 8 CPUs)" {
					t.Errorf("observed %q", fd.Observed)
				}
			}},
		{name: "insert failed", mutate: func(f *facts.Facts) { f.ConntrackStat.InsertFailed = 1 }, status: Fail, reason: "insert_failed"},
		{name: "module not loaded", mutate: func(f *facts.Facts) {
			f.ConntrackStat = nil
			f.Sections = map[string]facts.SectionStatus{facts.SecConntrack: {State: facts.SectionAbsent}}
		}, status: Skip, reason: "not loaded"},
		{name: "denied", mutate: func(f *facts.Facts) {
			f.ConntrackStat = nil
			f.Sections = map[string]facts.SectionStatus{facts.SecConntrack: {State: facts.SectionDenied}}
		}, status: Unknown, reason: "not gathered (denied)"},
		{name: "not understood", mutate: func(f *facts.Facts) {
			f.ConntrackStat = nil
			f.Sections = map[string]facts.SectionStatus{facts.SecConntrack: {State: facts.SectionError, Message: "nf_conntrack stat: no drop column in the header"}}
		}, status: Unknown, reason: "no drop column"},
	})
}

func TestReverseDNSRule(t *testing.T) {
	lookup := func(f *facts.Facts, i int, st facts.PTRState, ms int64) {
		f.ReverseDNS.Lookups[i].Stat, f.ReverseDNS.Lookups[i].Millis = st, ms
	}
	runRuleCases(t, RuleReverseDNS, []ruleCase{
		{name: "both resolve quickly", status: Pass, reason: "SASL listener: CLIENT://:9092"},
		{name: "no PTR, answered at once", mutate: func(f *facts.Facts) { lookup(f, 1, facts.PTRMissing, 0) }, status: Fail, reason: "SASL",
			check: func(t *testing.T, fd Finding) {
				if fd.Observed != "peer 10.0.0.6: no PTR record (answered in under 10ms)" {
					t.Errorf("observed %q", fd.Observed)
				}
			}},
		{name: "own address has no PTR", mutate: func(f *facts.Facts) { lookup(f, 0, facts.PTRMissing, 10) }, status: Fail, reason: "KAFKA-8562",
			check: func(t *testing.T, fd Finding) {
				if fd.Observed != "10.0.0.5: no PTR record (answered in 10ms)" {
					t.Errorf("observed %q", fd.Observed)
				}
			}},
		{name: "peer slow", mutate: func(f *facts.Facts) { lookup(f, 1, facts.PTRFound, 1510) }, status: Fail, reason: "stalls each new connection",
			check: func(t *testing.T, fd Finding) {
				if fd.Observed != "peer 10.0.0.6 → broker-b.example.com took 1.51s" {
					t.Errorf("observed %q", fd.Observed)
				}
			}},
		{name: "exactly one second", mutate: func(f *facts.Facts) { lookup(f, 1, facts.PTRFound, 1000) }, status: Pass, reason: "answer quickly"},
		{name: "peer timed out", mutate: func(f *facts.Facts) { lookup(f, 1, facts.PTRTimeout, 2010) }, status: Fail, reason: "SASL"},
		{name: "peer name unresolved", mutate: func(f *facts.Facts) {
			f.ReverseDNS.Lookups[1] = facts.PTRLookup{Addr: "broker-b.example.com", Peer: true, Stat: facts.PTRUnresolved}
		}, status: Fail, reason: "SASL"},
		{name: "one skipped, the rest fine", mutate: func(f *facts.Facts) { lookup(f, 1, facts.PTRSkipped, 0) }, status: Unknown, reason: "1 of 2 addresses not looked up"},
		{name: "lower-case protocol in the map", mutate: func(f *facts.Facts) {
			f.Kafka.Properties[PropProtocolMap] = "client:sasl_plaintext"
			lookup(f, 0, facts.PTRMissing, 0)
		}, status: Fail, reason: "SASL listener (CLIENT://:9092)"},
		{name: "no SASL listener", mutate: func(f *facts.Facts) {
			f.Kafka.Properties[PropProtocolMap] = "CLIENT:SSL"
			f.ReverseDNS = nil
		}, status: Skip, reason: "no SASL listener"},
		{name: "listeners unset: PLAINTEXT", mutate: func(f *facts.Facts) {
			delete(f.Kafka.Properties, "listeners")
			delete(f.Kafka.Properties, PropProtocolMap)
		}, status: Skip, reason: "no SASL listener"},
		{name: "server.properties unread", mutate: func(f *facts.Facts) {
			f.Kafka.PropertyLines = nil
			f.Sections = map[string]facts.SectionStatus{facts.SecKafkaConf: {State: facts.SectionDenied}}
		}, status: Unknown, reason: "listeners (server.properties) not gathered (denied)"},
		{name: "SASL, section absent", mutate: func(f *facts.Facts) {
			f.ReverseDNS = nil
			f.Sections = map[string]facts.SectionStatus{facts.SecRDNS: {State: facts.SectionMissing, Message: "getent or timeout not found in PATH"}}
		}, status: Unknown, reason: "getent or timeout not found"},
		{name: "no address given", mutate: func(f *facts.Facts) { f.ReverseDNS.Lookups = nil }, status: Unknown, reason: "no address to resolve back"},
	})
}

func TestSASLListeners(t *testing.T) {
	for _, c := range []struct {
		props map[string]string
		want  []string
	}{
		{map[string]string{"listeners": "SASL_SSL://:9093, PLAINTEXT://:9092"}, []string{"SASL_SSL://:9093"}},
		{map[string]string{"listeners": "sasl_plaintext://h:9093"}, []string{"sasl_plaintext://h:9093"}},
		{map[string]string{"listeners": "A://:1,B://:2,C://:3", PropProtocolMap: "A:SSL, B:SASL_SSL,C:PLAINTEXT"}, []string{"B://:2"}},
		// With a map, a listener named for a protocol takes the map's.
		{map[string]string{"listeners": "SASL_SSL://:1", PropProtocolMap: "SASL_SSL:SSL"}, nil},
		{map[string]string{}, nil},
		{map[string]string{"listeners": "garbage"}, nil},
	} {
		if got := SASLListeners(c.props); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v: %q, want %q", c.props, got, c.want)
		}
	}
}
