package facts_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// A saved report's facts are read back strictly: a state, mechanism or
// role kaudit does not know fails the load; the known ones re-encode as
// they were read.
func TestStatesFromJSON(t *testing.T) {
	for _, tt := range []struct {
		name string
		v    any
		json string
		bad  string // "" = loads and re-encodes identically; else a substring of the error
	}{
		{"section state", &facts.Facts{}, `{"sections":{"netstat":{"state":"denied"}}}`, ""},
		{"unknown section state", &facts.Facts{}, `{"sections":{"netstat":{"state":"ok"}}}`, `unknown section state "ok"`},
		{"role client", &facts.Facts{}, `{"role":"client"}`, ""},
		{"unknown role", &facts.Facts{}, `{"role":"broker"}`, `unknown role "broker"`},
		{"probe state", &facts.Probe{}, `{"state":"needs-root"}`, ""},
		{"unknown probe state", &facts.Probe{}, `{"state":"unshare-failed"}`, `unknown probe state "unshare-failed"`},
		{"mechanism", &facts.NICPersist{}, `{"mechanism":"systemd-link"}`, ""},
		{"unknown mechanism", &facts.NICPersist{}, `{"mechanism":"netplan"}`, `unknown NIC persistence mechanism "netplan"`},
		{"boot value mechanism", &facts.NICBootValue{}, `{"mechanism":"udev"}`, ""},
		{"unknown boot value mechanism", &facts.NICBootValue{}, `{"mechanism":""}`, `unknown NIC persistence mechanism ""`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := json.Unmarshal([]byte(tt.json), tt.v)
			if tt.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tt.bad) {
					t.Fatalf("error %v, want one saying %q", err, tt.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			var read, wrote map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tt.json), &read); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &wrote); err != nil {
				t.Fatal(err)
			}
			for k, want := range read {
				if got := strings.ReplaceAll(string(wrote[k]), `,"message":""`, ""); got != string(want) {
					t.Errorf("%s: re-encoded %s, want %s", k, got, want)
				}
			}
		})
	}
}

func TestClockMeasure(t *testing.T) {
	for _, c := range []struct {
		host, sent, recv int64
		off, bound       int64
		measured         bool
	}{
		{host: 10_400_000_000, sent: 10_000_000_000, recv: 10_200_000_000, off: 0, bound: 1, measured: true},
		{host: 13_700_000_000, sent: 10_000_000_000, recv: 10_200_000_000, off: 4, bound: 1, measured: true},
		{host: 6_000_000_000, sent: 10_000_000_000, recv: 10_200_000_000, off: -4, bound: 1, measured: true},
		{host: 10_000_000_000, sent: 10_000_000_000, recv: 15_000_000_000, off: -3, bound: 3, measured: true},
		{host: 10_000_000_000, sent: 10_000_000_000, recv: 9_000_000_000},
		{host: 0, sent: 10_000_000_000, recv: 10_100_000_000},
	} {
		ck := facts.Clock{HostUnixNano: c.host}
		ck.Measure(c.sent, c.recv)
		if ck.Measured != c.measured || ck.OffsetSeconds != c.off || ck.BoundSeconds != c.bound {
			t.Errorf("%+v: got %+v", c, ck)
		}
	}
}
