package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/kaudit/kaudit/internal/termsafe"
)

func init() { Register("json", renderJSON) }

// renderJSON writes the report with every value exact. encoding/json
// already writes C0 controls as \u escapes; DEL, C1 controls and bidi
// overrides it leaves raw, so they are escaped too (\u009b, \u202e): the
// value decodes to the same string, and `cat report.json` on a terminal
// shows them instead of obeying them.
func renderJSON(w io.Writer, r *Report, _ Options) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := w.Write(escapeActing(buf.Bytes()))
	return err
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
