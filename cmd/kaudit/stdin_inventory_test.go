package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/test/simhost"
)

// `ansible-inventory --list | kaudit scan -`: the JSON on stdin is the
// inventory; its hostvars carry the connection settings.
func TestScanInventoryFromStdin(t *testing.T) {
	h := simhost.DemoFleet()[0]
	h.Name = "b1"
	dir := t.TempDir()
	f, err := simhost.Start(dir, []*simhost.Host{h})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	js := fmt.Sprintf(`{"_meta": {"hostvars": {"b1": {"ansible_host": "127.0.0.1", "ansible_port": %d, "ansible_user": "kafka",
  "ansible_ssh_private_key_file": %q, "kaudit_known_hosts": [%q], "kaudit_use_agent": false}}},
 "all": {"children": ["ungrouped", "kafka"]}, "kafka": {"hosts": ["b1"]}}`, f.Hosts[0].Port, f.KeyFile, f.KnownHosts)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.WriteString(js); w.Close() }()
	old := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = old }()
	code, out, errOut := runCLI(t, "scan", "-", "--format", "json")
	rep := decode(t, out)
	if rep.Summary.Hosts != 1 || rep.Summary.Audited != 1 || rep.Inventory != "-" {
		t.Fatalf("exit %d, summary %+v, inventory %q\n%s", code, rep.Summary, rep.Inventory, errOut)
	}
	if g := strings.Join(rep.Hosts[0].Groups, ","); g != "all,kafka" {
		t.Errorf("groups %s", g)
	}
}
