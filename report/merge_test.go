package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/rules"
)

func shardReport(shard string, start time.Time, ms int64, hosts ...string) *Report {
	r := &Report{SchemaVersion: SchemaVersion, ToolVersion: "1.0", StartedAt: start, DurationMS: ms, Inventory: "inv.yaml", FailOn: "high", Shard: shard}
	for _, n := range hosts {
		r.Hosts = append(r.Hosts, Host{Name: n, Findings: []rules.Finding{{Rule: "R1", Severity: rules.High, Status: rules.Fail}}})
	}
	return r
}

func TestMerge(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	got, err := Merge([]Source{
		{"b.json", shardReport("1/2", t0.Add(time.Second), 900, "c", "a")},
		{"a.json", shardReport("0/2", t0, 400, "b")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range got.Hosts {
		names = append(names, h.Name)
	}
	if strings.Join(names, ",") != "a,b,c" {
		t.Errorf("hosts %v, want a,b,c (by name)", names)
	}
	if got.Shard != "" || !got.StartedAt.Equal(t0) || got.DurationMS != 900 || got.FailOn != "high" || got.Inventory != "inv.yaml" {
		t.Errorf("merged header %+v: want no shard, the earliest start, the longest shard", got)
	}
	if got.Summary.Hosts != 3 || got.Summary.FailBySeverity["high"] != 3 || got.Hosts[0].Score != 80 {
		t.Errorf("summary not recomputed: %+v, score %d", got.Summary, got.Hosts[0].Score)
	}
}

func TestMergeRefuses(t *testing.T) {
	t0 := time.Now()
	other := shardReport("1/2", t0, 1, "b")
	other.ToolVersion, other.FailOn = "2.0", "low"
	withCluster := shardReport("", t0, 1, "k")
	withCluster.Cluster = clusterFixture()
	for _, tc := range []struct {
		name string
		srcs []Source
		want []string
	}{
		{"none", nil, []string{"nothing to merge"}},
		// The cluster section judges the brokers against this report's
		// hosts alone; merged, it would be dropped (and its findings with
		// it: a wrong pass).
		{"a cluster section", []Source{{"a", shardReport("", t0, 1, "a")}, {"k", withCluster}}, []string{"k: has a cluster section (scan --bootstrap), which a merge would drop (hint: merge the shards of one scan without --bootstrap)"}},
		{"missing shard", []Source{{"a", shardReport("0/3", t0, 1, "a")}, {"c", shardReport("2/3", t0, 1, "c")}}, []string{"shard 1/3 missing"}},
		{"shard twice", []Source{{"a", shardReport("0/2", t0, 1, "a")}, {"a2", shardReport("0/2", t0, 1, "b")}}, []string{"a2: shard 0/2 again (already in a)", "shard 1/2 missing"}},
		{"mixed N", []Source{{"a", shardReport("0/2", t0, 1, "a")}, {"b", shardReport("1/3", t0, 1, "b")}}, []string{"b: shard 1/3, but the others are split 2 ways"}},
		{"host twice", []Source{{"a", shardReport("0/2", t0, 1, "a")}, {"b", shardReport("1/2", t0, 1, "a")}}, []string{"b: host a is also in a"}},
		{"other scan", []Source{{"a", shardReport("0/2", t0, 1, "a")}, {"b", other}}, []string{`b: tool_version "2.0", but a has "1.0"`, `b: fail_on "low"`}},
		{"shard and not", []Source{{"a", shardReport("", t0, 1, "a")}, {"b", shardReport("0/1", t0, 1, "b")}}, []string{"a: not a shard"}},
		{"bad shard", []Source{{"a", shardReport("x", t0, 1, "a")}}, []string{`a: shard "x" is not K/N`}},
	} {
		_, err := Merge(tc.srcs)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want it to contain %q", tc.name, err, w)
			}
		}
	}
}

// Unsharded reports of disjoint fleets merge as well.
func TestMergeUnsharded(t *testing.T) {
	got, err := Merge([]Source{{"a", shardReport("", time.Now(), 1, "x")}, {"b", shardReport("", time.Now(), 1, "y")}})
	if err != nil || len(got.Hosts) != 2 {
		t.Fatalf("Merge = %v, %v", got, err)
	}
}

// MergeFiles merges what it loads, and names the file it cannot load.
func TestMergeFiles(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, r := range []*Report{shardReport("1/2", time.Now(), 1, "y"), shardReport("0/2", time.Now(), 1, "x")} {
		p := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		var b bytes.Buffer
		if err := Render(&b, "json", r, Options{}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	got, err := MergeFiles(paths)
	if err != nil || len(got.Hosts) != 2 || got.Hosts[0].Name != "x" || got.Shard != "" {
		t.Fatalf("MergeFiles = %+v, %v", got, err)
	}
	if _, err := MergeFiles(append(paths, filepath.Join(dir, "missing.json"))); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := MergeFiles(paths[:1]); err == nil || !strings.Contains(err.Error(), "shard 0/2 missing") {
		t.Errorf("one shard of two: %v", err)
	}
}
