package remediate

import "testing"

// The NetworkManager connection a change is persisted in is read back
// from Change.PersistMatch by NMConnection only; a .link match names none.
func TestPersistMatchNMConnection(t *testing.T) {
	for _, tt := range []struct {
		m    PersistMatch
		uuid string
		nm   bool
	}{
		{NMMatch("16b7676e-40b8-3b51-b414-7d7c32c7969a"), "16b7676e-40b8-3b51-b414-7d7c32c7969a", true},
		{"nm-uuid=16b7676e-40b8-3b51-b414-7d7c32c7969a", "16b7676e-40b8-3b51-b414-7d7c32c7969a", true},
		{"MACAddress=52:54:00:aa:bb:cc Driver=ixgbe", "", false},
		{"", "", false},
	} {
		uuid, ok := tt.m.NMConnection()
		if uuid != tt.uuid || ok != tt.nm || tt.m.IsNM() != tt.nm {
			t.Errorf("%q: NMConnection %q %v, IsNM %v; want %q %v", tt.m, uuid, ok, tt.m.IsNM(), tt.uuid, tt.nm)
		}
	}
}
