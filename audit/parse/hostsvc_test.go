package parse

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func TestTimeSync(t *testing.T) {
	for _, c := range []struct {
		file string
		want *facts.TimeSync
		why  string // part of the reason when want is nil
	}{
		{"chrony-synced-reconstructed.txt", &facts.TimeSync{State: facts.Synced, Service: "chronyd", Source: "chronyc -n tracking", Detail: "Leap status: Normal"}, ""},
		{"chrony-unsynced-public.txt", &facts.TimeSync{State: facts.Unsynced, Service: "chronyd", Source: "chronyc -n tracking", Detail: "Leap status: Not synchronised"}, ""},
		{"chronyc-no-daemon-then-timesyncd-reconstructed.txt", &facts.TimeSync{State: facts.Synced, Service: "systemd-timesyncd", Source: "/run/systemd/timesync/synchronized", Detail: "the file exists"}, ""},
		{"ntpq-unsynced-public.txt", &facts.TimeSync{State: facts.Unsynced, Service: "ntpd", Source: "ntpq -n -c rv", Detail: "leap=11, stratum=16"}, ""},
		{"ntpq-synced-reconstructed.txt", &facts.TimeSync{State: facts.Synced, Service: "ntpd", Source: "ntpq -n -c rv", Detail: "leap=00, stratum=2"}, ""},
		{"timedatectl-unsynced-reconstructed.txt", &facts.TimeSync{State: facts.Unsynced, Source: "timedatectl show", Detail: "NTP=yes NTPSynchronized=no"}, ""},
		{"timedatectl-no-service-reconstructed.txt", &facts.TimeSync{State: facts.NoService, Source: "timedatectl show", Detail: "NTP=no NTPSynchronized=no"}, ""},
		{"this-machine-timedatectl-no-systemd.txt", nil, "timedatectl (exit 1): System has not been booted with systemd"},
		{"chronyc-timeout-reconstructed.txt", nil, "chronyc did not answer within the gather's bound"},
		{"no-tools.txt", nil, "no chronyc, ntpq, timesyncd state or timedatectl"},
	} {
		got, why := TimeSync(readTestdata(t, "timesync/"+c.file))
		if !reflect.DeepEqual(got, c.want) || !strings.Contains(why, c.why) || (c.want == nil) == (why == "") {
			t.Errorf("%s: got %+v (%q), want %+v (%q)", c.file, got, why, c.want, c.why)
		}
	}
	for _, body := range []string{"@chronyc 0\nLeap status : Sideways\n", "@ntpq 0\nleap=7, stratum=2\n", "@chronyc x\n"} {
		if got, why := TimeSync(body); got != nil || why == "" {
			t.Errorf("%q read as %+v", body, got)
		}
	}
}

func TestConntrackStat(t *testing.T) {
	for _, c := range []struct {
		file string
		want *facts.ConntrackStat
		err  string
	}{
		{"this-machine-2cpu.txt", &facts.ConntrackStat{CPUs: 2}, ""},
		{"drops-older-kernel-reconstructed.txt", &facts.ConntrackStat{CPUs: 2, Drop: 0x1f + 0x10, EarlyDrop: 3, InsertFailed: 3}, ""},
		{"bad-hex-reconstructed.txt", nil, `line 2: drop "0000zz00" is not a 32-bit hex counter`},
		{"short-line-reconstructed.txt", nil, "line 2 has 4 values, the header 17"},
	} {
		got, err := ConntrackStat(readTestdata(t, "conntrack-stat/"+c.file))
		if !reflect.DeepEqual(got, c.want) || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: got %+v, %v; want %+v, %q", c.file, got, err, c.want, c.err)
		}
	}
	for _, body := range []string{"", "0000 0000\n", "entries drop early_drop\n", "entries found\n00000000 00000000\n"} {
		if got, err := ConntrackStat(body); err == nil {
			t.Errorf("%q read as %+v", body, got)
		}
	}
}

func TestReverseDNS(t *testing.T) {
	for _, c := range []struct {
		file string
		want []facts.PTRLookup
	}{
		{"this-machine-loopback.txt", []facts.PTRLookup{
			{Addr: "127.0.0.1", IP: "127.0.0.1", Name: "localhost", Stat: facts.PTRFound},
			{Addr: "localhost", IP: "127.0.0.1", Peer: true, Name: "localhost", Stat: facts.PTRFound},
		}},
		{"missing-slow-timeout-reconstructed.txt", []facts.PTRLookup{
			{Addr: "10.0.0.11", IP: "10.0.0.11", Stat: facts.PTRMissing, Millis: 10},
			{Addr: "10.0.0.12", IP: "10.0.0.12", Peer: true, Name: "broker-b.kafka.example.com", Stat: facts.PTRFound, Millis: 1510},
			{Addr: "broker-c.kafka.example.com", IP: "10.0.0.13", Peer: true, Stat: facts.PTRTimeout, Millis: 2010},
			{Addr: "broker-d.kafka.example.com", Peer: true, Stat: facts.PTRUnresolved},
			{Addr: "10.0.0.15", Peer: true, Stat: facts.PTRSkipped},
		}},
	} {
		got, err := ReverseDNS(readTestdata(t, "rdns/"+c.file))
		if err != nil || !reflect.DeepEqual(got.Lookups, c.want) {
			t.Errorf("%s: got %+v, %v\nwant %+v", c.file, got, err, c.want)
		}
	}
	for _, body := range []string{
		"ptr self 10.0.0.1 10.0.0.1 0 1.00\n",         // short
		"ptr them 10.0.0.1 10.0.0.1 0 1.00 1.01\n",    // not self or peer
		"ptr self x x 0 1.00 1.01\n",                  // not an address
		"ptr self 10.0.0.1 10.0.0.1 0 1.01 1.00\n",    // time backwards
		"ptr self 10.0.0.1 10.0.0.1 0 1.0 1.01\n",     // not centiseconds
		"ptr self 10.0.0.1 10.0.0.1 zero 1.00 1.01\n", // exit status
		"something else\n",
	} {
		if got, err := ReverseDNS(body); err == nil {
			t.Errorf("%q read as %+v", body, got)
		}
	}
	if got, err := ReverseDNS(""); err != nil || len(got.Lookups) != 0 {
		t.Errorf("no lookups: %+v, %v", got, err)
	}
}
