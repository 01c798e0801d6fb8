package report

import (
	"bytes"
	"encoding/json"
	"testing"
)

// encoderJSON is what renderJSON must reproduce byte for byte: the whole
// report through json.Encoder with a two-space indent.
func encoderJSON(t *testing.T, r *Report) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRenderJSONStreamsTheSameBytes(t *testing.T) {
	full := loadFixture(t)
	one := *full
	one.Hosts = full.Hosts[:1]
	empty := *full
	empty.Hosts = []Host{}
	none := *full
	none.Hosts = nil
	sharded := *full
	sharded.Shard = "1/3"
	for name, r := range map[string]*Report{"fixture": full, "one host": &one, "empty": &empty, "nil hosts": &none, "shard": &sharded} {
		var got bytes.Buffer
		if err := renderJSON(&got, r, Options{}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := encoderJSON(t, r); !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: streamed JSON differs from json.Encoder's:\n%s\nwant:\n%s", name, got.Bytes(), want)
		}
	}
}
