package assume

import (
	"reflect"
	"testing"
)

func TestKafka(t *testing.T) {
	good := map[string]map[string]string{
		"3.6.1":                  {"apache": "3.6.1"},
		"apache:3.2":             {"apache": "3.2"},
		"Confluent:7.6.0":        {"confluent": "7.6.0"},
		"3.6.1, confluent:7.6.0": {"apache": "3.6.1", "confluent": "7.6.0"},
		"2.8.1.1":                {"apache": "2.8.1.1"},
	}
	for in, want := range good {
		got, err := Kafka(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Kafka(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"cloudera:3.6.1": BadDistribution, "3": BadVersion, "3.-6.1": BadVersion, "+3.6": BadVersion,
		"3.6.1,3.7.0": Duplicate, "": BadVersion, "3.6.1;reboot": BadVersion, "1.2.3.4.5": BadVersion,
	}
	for in, kind := range bad {
		if _, err := Kafka(in); err == nil || err.Kind != kind {
			t.Errorf("Kafka(%q) error %v, want %s", in, err, kind)
		}
	}
}
