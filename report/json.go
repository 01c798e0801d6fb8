package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

func init() { Register("json", renderJSON) }

func renderJSON(w io.Writer, r *Report, _ Options) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
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
