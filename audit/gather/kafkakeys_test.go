package gather

import (
	"regexp"
	"strings"
	"testing"
)

// TestKafkaKeysMatch: the script's KKEYS names exactly KafkaKeys.
func TestKafkaKeysMatch(t *testing.T) {
	m := regexp.MustCompile(`(?m)^KKEYS='([^']*)'$`).FindStringSubmatch(scriptBody)
	if m == nil {
		t.Fatal("gather.sh has no KKEYS='…' line")
	}
	got := strings.Split(strings.ReplaceAll(m[1], "[.]", "."), "|")
	if strings.Join(got, " ") != strings.Join(KafkaKeys, " ") {
		t.Errorf("KKEYS = %v, KafkaKeys = %v: keep them equal and in order", got, KafkaKeys)
	}
}
