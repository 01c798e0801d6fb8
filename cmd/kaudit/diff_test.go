package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kaudit/kaudit/report/diff"
)

func TestDiffJSONToFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "d.json")
	code, stdout, stderr := runCLI(t, "diff", "--format", "json", "-o", out, diffOld, diffNew)
	if code != ExitOK || stdout != "" {
		t.Fatalf("exit %d stdout %q stderr %s", code, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d diff.Diff
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.NewlyFailing) != 2 || len(d.HostsAdded) != 1 || len(d.Facts) != 4 {
		t.Errorf("%+v", d)
	}
}
