package remediate

import (
	"encoding/json"
	"testing"
)

// A NetworkManager connection is one typed value: Change.NM, whose
// settings' running-value keys are "nm:<UUID> <setting>" (Key), read back
// by NMConnectionOf; an interface name or a malformed UUID names none.
func TestNMConnection(t *testing.T) {
	const uuid = "16b7676e-40b8-3b51-b414-7d7c32c7969a"
	key := NMConnection(uuid).Key("rx")
	if key != "nm:"+uuid+" rx" {
		t.Errorf("Key %q", key)
	}
	for _, tt := range []struct {
		iface string
		want  NMConnection
		ok    bool
	}{
		{"nm:" + uuid, uuid, true},
		{"nm:" + uuid + ";reboot", "", false},
		{"eth0", "", false},
		{"", "", false},
	} {
		if got, ok := NMConnectionOf(tt.iface); got != tt.want || ok != tt.ok {
			t.Errorf("NMConnectionOf(%q) = %q %v, want %q %v", tt.iface, got, ok, tt.want, tt.ok)
		}
	}
}

// A journal written before Change.NM names the connection in
// persist_match as "nm-uuid=<UUID>": it loads as Change.NM; a .link match
// stays a match.
func TestChangeLoadsTheOldNMMatch(t *testing.T) {
	for _, tt := range []struct {
		in    string
		nm    NMConnection
		match PersistMatch
	}{
		{`{"kind": "nic-ring", "target": "eth0 rx", "persist_match": "nm-uuid=16b7676e-40b8-3b51-b414-7d7c32c7969a"}`, "16b7676e-40b8-3b51-b414-7d7c32c7969a", ""},
		{`{"kind": "nic-ring", "target": "eth0 rx", "nm_connection": "16b7676e-40b8-3b51-b414-7d7c32c7969a"}`, "16b7676e-40b8-3b51-b414-7d7c32c7969a", ""},
		{`{"kind": "nic-ring", "target": "eth0 rx", "persist_match": "MACAddress=52:54:00:aa:bb:cc Driver=ixgbe"}`, "", "MACAddress=52:54:00:aa:bb:cc Driver=ixgbe"},
	} {
		var c Change
		if err := json.Unmarshal([]byte(tt.in), &c); err != nil {
			t.Fatal(err)
		}
		if c.NM != tt.nm || c.PersistMatch != tt.match {
			t.Errorf("%s: NM %q match %q, want %q %q", tt.in, c.NM, c.PersistMatch, tt.nm, tt.match)
		}
	}
}
