package parse

import (
	"reflect"
	"testing"
)

func TestProperties(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      map[string]string
		wantLines map[string]int
	}{
		{
			name: "server.properties sample",
			in:   readTestdata(t, "properties/server.properties"),
			want: map[string]string{
				"broker.id":                   "0",
				"listeners":                   "PLAINTEXT://:9092",
				"socket.send.buffer.bytes":    "102400",
				"socket.receive.buffer.bytes": "102400",
				"socket.request.max.bytes":    "104857600",
				"log.dirs":                    "/tmp/kafka-logs,/data/kafka-logs",
				"socket.listen.backlog.size":  "2048",
				"empty.value":                 "",
				"only.key":                    "",
				"trailing.backslash.even":     `path\`,
				"next.line":                   "kept",
				"key with spaces":             "v",
			},
			wantLines: map[string]int{
				"broker.id": 3, "listeners": 5, "socket.send.buffer.bytes": 6, "socket.receive.buffer.bytes": 7,
				"socket.request.max.bytes": 8, "log.dirs": 9, "socket.listen.backlog.size": 16, "empty.value": 12,
				"only.key": 13, "trailing.backslash.even": 14, "next.line": 15, "key with spaces": 17,
			},
		},
		{
			name: "CRLF with a continuation",
			in:   readTestdata(t, "properties/crlf-windows-edited.properties"),
			want: map[string]string{
				"broker.id":                   "1",
				"socket.receive.buffer.bytes": "-1",
				"listeners":                   "PLAINTEXT://0.0.0.0:9092,SSL://0.0.0.0:9093",
			},
			wantLines: map[string]int{"broker.id": 1, "socket.receive.buffer.bytes": 2, "listeners": 3},
		},
		{
			name:      "escapes",
			in:        "a\\=b=c\\td\nu=\\u0041\\u00e9\nx:\\\ny\n",
			want:      map[string]string{"a=b": "c\td", "u": "Aé", "x": "y"},
			wantLines: map[string]int{"a=b": 1, "u": 2, "x": 3},
		},
		{
			name:      "comment ending in backslash does not continue",
			in:        "# comment \\\nk=v\n",
			want:      map[string]string{"k": "v"},
			wantLines: map[string]int{"k": 2},
		},
		{
			name:      "continuation line starting with # is data",
			in:        "k=a,\\\n  #b\n",
			want:      map[string]string{"k": "a,#b"},
			wantLines: map[string]int{"k": 1},
		},
		{
			name:      "continuation at end of file",
			in:        "k=v\\",
			want:      map[string]string{"k": "v"},
			wantLines: map[string]int{"k": 1},
		},
		{"empty", "", map[string]string{}, map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, lines := Properties(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("values\n got %q\nwant %q", got, tt.want)
			}
			if !reflect.DeepEqual(lines, tt.wantLines) {
				t.Errorf("lines\n got %v\nwant %v", lines, tt.wantLines)
			}
		})
	}
}
