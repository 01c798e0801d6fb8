package gather

import (
	"regexp"
	"strings"
	"testing"
)

// TestKafkaKeysPattern: the script's KKEYS names exactly KafkaKeys, then
// the catalog's extra keys (once each); a key that is not a property name
// never reaches the shell.
func TestKafkaKeysPattern(t *testing.T) {
	for _, tt := range []struct {
		extra []string
		want  []string
		err   string
	}{
		{nil, KafkaKeys, ""},
		{[]string{"num.replica.fetchers", "num.io.threads"}, append(append([]string(nil), KafkaKeys...), "num.replica.fetchers"), ""},
		{[]string{"a.b'; rm -rf /"}, nil, "bad server.properties key"},
		{[]string{"log.dirs|.*"}, nil, "bad server.properties key"},
	} {
		s, err := Script(Params{KafkaPort: 9092, PropertyKeys: tt.extra, Marker: NewMarker()})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.extra, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^KKEYS='([^']*)'$`).FindStringSubmatch(string(s))
		if m == nil {
			t.Fatal("the script has no KKEYS='…' line")
		}
		got := strings.Split(strings.ReplaceAll(m[1], "[.]", "."), "|")
		if strings.Join(got, " ") != strings.Join(tt.want, " ") || strings.Contains(m[1], `\`) {
			t.Errorf("%q: KKEYS = %v, want %v", tt.extra, got, tt.want)
		}
	}
}
