package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/kaudit/kaudit/internal/located"
)

func init() { Register("json", renderJSON) }

// renderJSON writes the report as json.Encoder with a two-space indent
// would, byte for byte, but one host at a time: the document is never
// built (and indented in a second copy) in memory whole, which for 10,000
// hosts is ≈ 200 MB twice. Each host is encoded compactly into a buffer
// reused for the next and indented by appendIndented, which also escapes
// what the encoder leaves raw: DEL, C1 controls and bidi overrides
// (encoding/json writes C0 controls as \u escapes already), so `cat
// report.json` on a terminal shows them instead of obeying them.
func renderJSON(w io.Writer, r *Report, _ Options) error {
	head := *r
	head.Hosts = nil
	b, err := json.Marshal(&head)
	if err != nil {
		return err
	}
	b = appendIndented(nil, b, "", "  ")
	if r.Hosts == nil {
		_, err := fmt.Fprintf(w, "%s\n", b)
		return err
	}
	tail := []byte("\"hosts\": null\n}")
	if !bytes.HasSuffix(b, tail) {
		return fmt.Errorf("report: unexpected JSON layout (hosts is not the last field)")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(b[:len(b)-len(tail)])
	if len(r.Hosts) == 0 {
		bw.WriteString("\"hosts\": []\n}\n")
		return bw.Flush()
	}
	bw.WriteString("\"hosts\": [\n")
	var he hostEncoder
	var out []byte
	for i := range r.Hosts {
		host, err := he.encode(&r.Hosts[i])
		if err != nil {
			return err
		}
		out = appendIndented(append(out[:0], "    "...), host, "    ", "  ")
		if i < len(r.Hosts)-1 {
			out = append(out, ',')
		}
		bw.Write(append(out, '\n'))
	}
	bw.WriteString("  ]\n}\n")
	return bw.Flush()
}

// hostEncoder encodes one host compactly, as json.Marshal would, into
// buffers reused from host to host.
type hostEncoder struct {
	compact bytes.Buffer
	enc     *json.Encoder // as json.Marshal: HTML-safe, one value and a newline
	spliced []byte
}

// findingsKey starts the field after facts. Nothing a Host encodes before
// it can hold these bytes: strings escape their quotes, and the error and
// deductions objects have no such key.
var findingsKey = []byte(`,"findings":`)

// encode is h's compact JSON. A spooled host (Host.Spooled) is encoded
// without facts and its spooled facts are put back where the encoder
// would have written them: right before "findings".
func (e *hostEncoder) encode(h *Host) ([]byte, error) {
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.compact)
	}
	e.compact.Reset()
	if err := e.enc.Encode(h); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(e.compact.Bytes(), []byte("\n"))
	if h.Spooled == nil {
		return b, nil
	}
	at := bytes.Index(b, findingsKey)
	if at < 0 || h.Facts != nil {
		return nil, fmt.Errorf("report: host %s: unexpected JSON layout (no findings after facts)", h.Name)
	}
	out := append(append(e.spliced[:0], b[:at]...), `,"facts":`...)
	out, err := h.Spooled.appendJSON(out)
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", h.Name, err)
	}
	out = append(out, b[at:]...)
	e.spliced = out
	return out, nil
}

// loadHint says which file Load reads.
const loadHint = "give a JSON report written by kaudit scan -f json -o FILE"

// Load reads a JSON report written by `kaudit scan --format json`.
func Load(path string) (*Report, error) { return LoadLimited(path, 0) }

// LoadLimited is Load of a file of at most max bytes (0: any size): a
// larger one is refused before it is read. What is read must be a
// report: a JSON object of this schema version with its scan's start.
func LoadLimited(path string, max int64) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, located.Hint(fmt.Errorf("%s: cannot read the report: %w", path, located.PathCause(err)), loadHint)
	}
	defer f.Close()
	var in io.Reader = f
	if max > 0 {
		if fi, err := f.Stat(); err == nil && fi.Size() > max {
			return nil, located.Hint(fmt.Errorf("%s: %d bytes, more than the %d a report may have here: not read", path, fi.Size(), max), loadHint)
		}
		in = io.LimitReader(f, max) // a file that grows while read ends in a JSON error
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return nil, located.Hint(fmt.Errorf("%s: cannot read the report: %w", path, located.PathCause(err)), loadHint)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, located.Hint(fmt.Errorf("%s: not a kaudit JSON report: %w", path, err), loadHint)
	}
	if r.SchemaVersion != SchemaVersion {
		return nil, located.Hint(fmt.Errorf("%s: report schema_version %d, this kaudit reads %d", path, r.SchemaVersion, SchemaVersion), "re-run the scan with this kaudit, or read the report with the kaudit that wrote it")
	}
	if r.StartedAt.IsZero() { // every report has it ("hosts" is null in a report of no hosts)
		return nil, located.Hint(fmt.Errorf("%s: not a kaudit JSON report: no started_at", path), loadHint)
	}
	return &r, nil
}
