package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/internal/shard"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/simhost"
)

// clientsFleet is the talk's broker and its producer host, the producer
// in the group the inventory's clients_group: names.
func clientsFleet(t *testing.T) string {
	t.Helper()
	demo := simhost.DemoFleet()
	broker, prod := demo[0], demo[len(demo)-1]
	prod.Groups = nil
	// Names that --shard 0/2 and 1/2 put apart.
	half, err := shard.Parse("0/2")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; half.Owns(broker.Name) == half.Owns(prod.Name); i++ {
		prod.Name = fmt.Sprintf("producer-%d", i)
	}
	dir := t.TempDir()
	f, err := simhost.Start(dir, []*simhost.Host{broker, prod})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	var b strings.Builder
	fmt.Fprintf(&b, "clients_group: producers\ndefaults:\n  user: kafka\n  use_agent: false\n  identity_files: [%s]\n  known_hosts: [%s]\n  connect_timeout: 2s\n", f.KeyFile, f.KnownHosts)
	fmt.Fprintf(&b, "hosts:\n  %s: {address: %s, port: %d}\ngroups:\n  producers:\n    hosts:\n      %s: {address: %s, port: %d}\n",
		f.Hosts[0].Name, f.Hosts[0].Address, f.Hosts[0].Port, f.Hosts[1].Name, f.Hosts[1].Address, f.Hosts[1].Port)
	p := filepath.Join(dir, "inventory.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The inventory's clients_group: selects the producer hosts; a sharded
// scan merged runs the fleet pass over every shard's hosts, so the
// broker's client-wscale-mismatch is the unsharded one.
func TestClientsGroupAndShardMerge(t *testing.T) {
	inv := clientsFleet(t)
	dir := t.TempDir()
	want := scanUnsharded(t, inv, dir)
	r := decode(t, mustRead(t, filepath.Join(dir, "full.json")))
	if f := finding(t, r, "kafka-centos7-01", rules.RuleClientWscaleMismatch); f.Status != rules.Fail {
		t.Fatalf("unsharded: client-wscale-mismatch %s %q", f.Status, f.Reason)
	}
	var shards []string
	for k := 0; k < 2; k++ {
		out := filepath.Join(dir, fmt.Sprintf("s%d.json", k))
		if code, _, errOut := runCLI(t, "scan", inv, "--shard", fmt.Sprintf("%d/2", k), "-f", "json", "-o", out); code == ExitUsage {
			t.Fatalf("shard %d/2: %s", k, errOut)
		}
		if n := len(timelessReport(t, out)["hosts"].([]any)); n != 1 {
			t.Fatalf("shard %d/2 has %d hosts: the test needs the broker and the producer apart", k, n)
		}
		shards = append(shards, out)
	}
	merged := filepath.Join(dir, "fleet.json")
	if code, _, errOut := runCLI(t, append(append([]string{"merge"}, shards...), "-o", merged)...); code != ExitFindings {
		t.Fatalf("merge: exit %d\n%s", code, errOut)
	}
	if got := timeless(t, merged); !reflect.DeepEqual(got, want) {
		t.Errorf("merged report differs from the unsharded one:\n%s", firstDiff(got, want))
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
