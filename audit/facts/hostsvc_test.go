package facts

import (
	"encoding/json"
	"testing"
)

// TestHostSvcStatesStrict: a saved report's time sync or reverse lookup
// state this kaudit does not know is an error, never taken at face value.
func TestHostSvcStatesStrict(t *testing.T) {
	var f Facts
	if err := json.Unmarshal([]byte(`{"time_sync":{"state":"synchronised"},"reverse_dns":{"lookups":[{"addr":"10.0.0.1","state":"missing","millis":10}]}}`), &f); err != nil ||
		f.TimeSync.State != Synced || f.ReverseDNS.Lookups[0].Stat != PTRMissing {
		t.Fatalf("known states: %v %+v", err, f)
	}
	for _, bad := range []string{`{"time_sync":{"state":"fine"}}`, `{"reverse_dns":{"lookups":[{"addr":"a","state":"ok"}]}}`} {
		if err := json.Unmarshal([]byte(bad), &f); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
