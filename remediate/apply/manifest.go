package apply

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
)

// ManifestScript renders a script that prints a run's host-side manifest
// (RunDir/manifest, written by the apply script with the backups), one
// "line" result per line, or "manifest ok absent" when the host has none.
func ManifestScript(marker, runID string) ([]byte, error) {
	if !remote.ValidMarker(marker) {
		return nil, fmt.Errorf("manifest: bad marker %q", marker)
	}
	if !remediate.ValidRunID(runID) {
		return nil, fmt.Errorf("manifest: bad run id %q", runID)
	}
	var b strings.Builder
	b.WriteString("M=" + q(marker) + "\n")
	b.WriteString("RUN=" + q(RunDir(runID)) + "\n")
	b.WriteString(prelude)
	b.WriteString(`if [ ! -f "$RUN/manifest" ]; then say manifest ok absent
else
  while IFS= read -r l; do printf '%s\tline\tok\t%s\n' "$M" "$l"; done < "$RUN/manifest" || fail manifest "cannot read $RUN/manifest"
  say manifest ok present
fi
say done ok -
`)
	return []byte(b.String()), nil
}

// parseManifest turns manifest lines into journal records. Everything is
// validated again by RollbackScript before it reaches a shell.
func parseManifest(runID string, rs remote.Results) (backups []remediate.Backup, runtime []remediate.RuntimeValue, err error) {
	for _, r := range rs {
		if r.Step != "line" {
			continue
		}
		f := r.Detail
		if len(f) != 5 {
			return nil, nil, fmt.Errorf("manifest: malformed line (%d fields)", len(f))
		}
		switch f[0] {
		case "file":
			b := remediate.Backup{Path: f[4], Existed: f[2] == "present"}
			if b.Existed {
				b.SHA256 = f[3]
				b.Stored = RunDir(runID) + "/" + f[1]
			}
			backups = append(backups, b)
		case remediate.KindSysctl, remediate.KindNICRing, remediate.KindNICOffload:
			runtime = append(runtime, remediate.RuntimeValue{Kind: f[0], Key: f[2], Before: f[3], After: f[4]})
		default:
			return nil, nil, fmt.Errorf("manifest: unknown record %q", f[0])
		}
	}
	return backups, runtime, nil
}

// JournalFromHosts rebuilds a run's journal from the manifests the apply
// script left on the hosts (RunDir/manifest), for a rollback when the
// local journal is lost. Hosts without the run are left out; hosts that
// cannot be read are returned as errors (and left out).
func JournalFromHosts(ctx context.Context, hosts []inventory.Host, runID string, opt Options) (*remediate.Journal, []RollbackResult, error) {
	opt.defaults()
	if !remediate.ValidRunID(runID) {
		return nil, nil, fmt.Errorf("invalid run id %q", runID)
	}
	j := &remediate.Journal{Version: remediate.JournalVersion, RunID: runID}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []RollbackResult
	sem := make(chan struct{}, max(opt.Batch, 1))
	found := map[string]remediate.HostJournal{}
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			hj, err := hostManifest(ctx, h, runID, opt)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, RollbackResult{Host: h.Name, Err: err})
			case hj != nil:
				found[h.Name] = *hj
			}
		}()
	}
	wg.Wait()
	for _, h := range hosts { // inventory order
		if hj, ok := found[h.Name]; ok {
			j.Hosts = append(j.Hosts, hj)
		}
	}
	return j, errs, nil
}

func hostManifest(ctx context.Context, h inventory.Host, runID string, opt Options) (*remediate.HostJournal, error) {
	marker := NewMarker()
	script, err := ManifestScript(marker, runID)
	if err != nil {
		return nil, err
	}
	out, err := runScript(ctx, opt, h, script, "the manifest script")
	if err != nil {
		return nil, err
	}
	rs := remote.ParseResults(out.Stdout, marker)
	if f := rs.FirstFailure(); f != nil {
		return nil, fmt.Errorf("%s%s", f.Text(), stderrTail(out))
	}
	m := rs.Find("manifest")
	if m == nil || rs.Find("done") == nil {
		return nil, fmt.Errorf("reading the manifest did not finish%s", stderrTail(out))
	}
	if m.Text() == "absent" {
		return nil, nil
	}
	backups, runtime, err := parseManifest(runID, rs)
	if err != nil {
		return nil, err
	}
	// Validate now, so that a bad manifest fails here, not halfway.
	if _, err := RollbackScript(RollbackParams{Marker: marker, RunID: runID, Backups: backups, Runtime: runtime}); err != nil {
		return nil, fmt.Errorf("manifest: %v", err)
	}
	return &remediate.HostJournal{Host: h.Name, Status: remediate.StatusApplied, Backups: backups, Runtime: runtime, Changes: []remediate.Change{},
		Error: "journal rebuilt from the host's manifest"}, nil
}
