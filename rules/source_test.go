package rules

import (
	"encoding/json"
	"strings"
	"testing"
)

// A saved report's finding is read back strictly: a verdict source kaudit
// does not know fails the load.
func TestSourceFromJSON(t *testing.T) {
	for _, tt := range []struct {
		json string
		want Source
		bad  string
	}{
		{`{"rule":"r","status":"pass"}`, "", ""},
		{`{"source":"changelog"}`, SourceChangelog, ""},
		{`{"source":"none"}`, SourceNone, ""},
		{`{"source":"dmesg"}`, "", `unknown verdict source "dmesg"`},
	} {
		var fd Finding
		err := json.Unmarshal([]byte(tt.json), &fd)
		switch {
		case tt.bad != "" && (err == nil || !strings.Contains(err.Error(), tt.bad)):
			t.Errorf("%s: error %v, want one saying %q", tt.json, err, tt.bad)
		case tt.bad == "" && (err != nil || fd.Source != tt.want):
			t.Errorf("%s: source %q, error %v; want %q", tt.json, fd.Source, err, tt.want)
		}
	}
}
