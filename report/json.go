package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/kaudit/kaudit/internal/termsafe"
)

func init() { Register("json", renderJSON) }

// renderJSON writes the report as json.Encoder with a two-space indent
// would, byte for byte, but one host at a time: the document is never
// built (and indented in a second copy) in memory whole, which for 10,000
// hosts is ≈ 200 MB twice. Every value is exact: encoding/json writes C0
// controls as \u escapes, and DEL, C1 controls and bidi overrides, which
// it leaves raw, are escaped too (escapeActing), so `cat report.json` on
// a terminal shows them instead of obeying them.
func renderJSON(w io.Writer, r *Report, _ Options) error {
	head := *r
	head.Hosts = nil
	b, err := json.MarshalIndent(&head, "", "  ")
	if err != nil {
		return err
	}
	if r.Hosts == nil {
		_, err := fmt.Fprintf(w, "%s\n", escapeActing(b))
		return err
	}
	tail := []byte("\"hosts\": null\n}")
	if !bytes.HasSuffix(b, tail) {
		return fmt.Errorf("report: unexpected JSON layout (hosts is not the last field)")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(escapeActing(b[:len(b)-len(tail)]))
	if len(r.Hosts) == 0 {
		bw.WriteString("\"hosts\": []\n}\n")
		return bw.Flush()
	}
	bw.WriteString("\"hosts\": [\n")
	for i := range r.Hosts {
		hb, err := json.MarshalIndent(&r.Hosts[i], "    ", "  ")
		if err != nil {
			return err
		}
		bw.WriteString("    ")
		bw.Write(escapeActing(hb))
		if i < len(r.Hosts)-1 {
			bw.WriteString(",")
		}
		bw.WriteString("\n")
	}
	bw.WriteString("  ]\n}\n")
	return bw.Flush()
}

// escapeActing \u-escapes the characters termsafe.Acts names that the
// encoder left raw. Outside strings JSON is printable ASCII, so every such
// rune is inside a string, where \uXXXX means the same rune.
func escapeActing(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r >= 0x7f && termsafe.Acts(r) {
			if out == nil {
				out = append(make([]byte, 0, len(b)+16), b[:i]...)
			}
			out = fmt.Appendf(out, `\u%04x`, r)
		} else if out != nil {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	if out == nil {
		return b
	}
	return out
}

// Load reads a JSON report written by `kaudit scan --format json`.
func Load(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: not a kaudit JSON report: %w", path, err)
	}
	if r.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s: report schema_version %d, this kaudit reads %d", path, r.SchemaVersion, SchemaVersion)
	}
	return &r, nil
}
