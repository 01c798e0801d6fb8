package report

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/shard"
)

// Source is one report to merge and where it came from (for errors).
type Source struct {
	Path   string
	Report *Report
}

// MergeFiles loads the JSON reports at paths (kaudit scan --shard K/N
// -f json, one per K) and merges them (Merge). The first file that cannot
// be loaded is the error.
func MergeFiles(paths []string) (*Report, error) {
	srcs := make([]Source, 0, len(paths))
	for _, p := range paths {
		r, err := Load(p)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, Source{Path: p, Report: r})
	}
	return Merge(srcs)
}

// Merge joins the reports of the shards of one scan (kaudit scan --shard
// K/N, one run per K) into the fleet's report: the hosts of all shards
// ordered by name, the summary and scores recomputed, the earliest start
// and the longest shard's duration. It equals the unsharded scan's report
// but for timings (and host order, when the inventory is not in name
// order). Every problem is reported at once: reports from different kaudit
// versions, inventories or --fail-on thresholds, a shard missing or given
// twice, a host in two reports.
func Merge(srcs []Source) (*Report, error) {
	if len(srcs) == 0 {
		return nil, located.Hint(errors.New("nothing to merge"), "kaudit merge shard-0.json shard-1.json … -o fleet.json")
	}
	first := srcs[0].Report
	out := &Report{SchemaVersion: first.SchemaVersion, ToolVersion: first.ToolVersion, StartedAt: first.StartedAt,
		Inventory: first.Inventory, FailOn: first.FailOn}
	var errs []error
	owner := map[string]string{}
	for _, s := range srcs {
		r := s.Report
		errs = append(errs, sameScan(s.Path, r, first, srcs[0].Path)...)
		if r.StartedAt.Before(out.StartedAt) {
			out.StartedAt = r.StartedAt
		}
		out.DurationMS = max(out.DurationMS, r.DurationMS)
		out.Interrupted = out.Interrupted || r.Interrupted
		if r.Cluster != nil {
			errs = append(errs, located.Hint(fmt.Errorf("%s: has a cluster section (scan --bootstrap), which a merge would drop", s.Path), "merge the shards of one scan without --bootstrap"))
		}
		for _, h := range r.Hosts {
			if p, dup := owner[h.Name]; dup {
				errs = append(errs, located.Hint(fmt.Errorf("%s: host %s is also in %s", s.Path, h.Name, p), "merge the shards of one scan, each once"))
				continue
			}
			owner[h.Name] = s.Path
			out.Hosts = append(out.Hosts, h)
		}
	}
	errs = append(errs, checkShards(srcs)...)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sort.SliceStable(out.Hosts, func(i, j int) bool { return out.Hosts[i].Name < out.Hosts[j].Name })
	Summarize(out)
	return out, nil
}

// sameScan reports how r differs from the first report in what must agree.
func sameScan(path string, r, first *Report, firstPath string) []error {
	var errs []error
	diff := func(what, a, b string) {
		if a != b {
			errs = append(errs, located.Hint(fmt.Errorf("%s: %s %q, but %s has %q", path, what, a, firstPath, b), "merge only the shards of one scan"))
		}
	}
	diff("schema_version", fmt.Sprint(r.SchemaVersion), fmt.Sprint(first.SchemaVersion))
	diff("tool_version", r.ToolVersion, first.ToolVersion)
	diff("inventory", r.Inventory, first.Inventory)
	diff("fail_on", r.FailOn, first.FailOn)
	return errs
}

// checkShards wants either no shard at all (plain reports of disjoint
// fleets) or every K of one N exactly once.
func checkShards(srcs []Source) []error {
	sharded := 0
	for _, s := range srcs {
		if s.Report.Shard != "" {
			sharded++
		}
	}
	if sharded == 0 {
		return nil
	}
	var errs []error
	n := 0
	seen := map[int]string{}
	for _, s := range srcs {
		if s.Report.Shard == "" {
			errs = append(errs, located.Hint(fmt.Errorf("%s: not a shard, but the other reports are", s.Path), "merge the shards of one scan"))
			continue
		}
		sh, err := shard.Parse(s.Report.Shard)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.Path, err))
			continue
		}
		switch {
		case n != 0 && sh.N != n:
			errs = append(errs, fmt.Errorf("%s: shard %s, but the others are split %d ways", s.Path, sh, n))
		case seen[sh.K] != "":
			errs = append(errs, fmt.Errorf("%s: shard %s again (already in %s)", s.Path, sh, seen[sh.K]))
		}
		n = max(n, sh.N)
		seen[sh.K] = s.Path
	}
	var missing []string
	for k := 0; k < n; k++ {
		if seen[k] == "" {
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 {
		errs = append(errs, located.Hint(fmt.Errorf("shard %s missing: the merged report would silently skip its hosts", strings.Join(missing, ", ")), "rerun it, then merge every shard"))
	}
	return errs
}
