package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/test/simhost"
)

// TestConcurrencyFitsOpenFileLimit: kaudit scan -c 120 under ulimit -n
// 100 (a container's or an old systemd unit's nofile) lowers the fan-out
// to what fits, says so on stderr, and audits every host; without the
// bound some hosts failed with "socket: too many open files".
func TestConcurrencyFitsOpenFileLimit(t *testing.T) {
	var hosts []*simhost.Host
	for range 120 {
		hosts = append(hosts, compliant())
	}
	for i, h := range hosts {
		h.Name = "h" + string(rune('a'+i/26)) + string(rune('a'+i%26))
	}
	inv := writeInventory(t, hosts)
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command("/bin/sh", "-c", `ulimit -n 100 && exec "$0" "$@"`, os.Args[0], "-test.run=^TestKauditMain$")
	cmd.Env = append(os.Environ(), "KAUDIT_MAIN_ARGS=scan "+inv+" -c 120 -f json -o "+out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); procExit(err) != ExitOK {
		t.Fatalf("exit %v, want %d\n%s", err, ExitOK, stderr.String())
	}
	want := "kaudit: warning: concurrency 120 lowered to 18: the open-file limit is 100"
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q\nwant %q…", stderr.String(), want)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Hosts []struct {
			Name  string
			Error *struct{ Message string }
		}
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Hosts) != 120 {
		t.Fatalf("%d hosts in the report, want 120", len(r.Hosts))
	}
	for _, h := range r.Hosts {
		if h.Error != nil {
			t.Errorf("%s: %s", h.Name, h.Error.Message)
		}
	}
}
