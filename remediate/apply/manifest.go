package apply

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/internal/fanout"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/sysctld"
)

// ManifestScript renders a script (sh/manifest.sh) that prints a run's
// host-side manifest (RunDir/manifest, written by the apply script with
// the backups), one "line" result per line, or "manifest ok absent" when
// the host has none; then what the run's directory holds ("stored") and
// which of kaudit's own files the host has ("owned"), for the message
// when the manifest cannot be trusted.
func ManifestScript(marker, runID string) ([]byte, error) {
	if !remote.ValidMarker(marker) {
		return nil, fmt.Errorf("manifest: bad marker %q", marker)
	}
	if !remediate.ValidRunID(runID) {
		return nil, fmt.Errorf("manifest: bad run id %q", runID)
	}
	var owned records
	for _, p := range ownedFiles {
		owned.add(p)
	}
	var h header
	h.set("M", marker)
	h.set("RUN", RunDir(runID))
	h.data("OWNED", &owned)
	h.set("LINKS", strings.TrimSuffix(remediate.LinkPath(""), ".link"))
	return h.script(manifestSh)
}

// ownedFiles are the files kaudit owns whole, at fixed paths; each has a
// "# Last run: RUNID" line (and so do its .link files, LinkPath).
var ownedFiles = []string{sysctld.ManagedPath, remediate.NICPersistPath}

// UntrustedManifestError is a run's manifest on a host that is there but
// cannot be trusted: empty, truncated (no end line), of another run or
// version, or malformed — what a power cut before kaudit made it durable
// leaves. Nothing is restored from it; it says what kaudit left on the
// host, for a person to restore by hand.
type UntrustedManifestError struct {
	RunID, Path string
	Why         string   // "is empty (0 bytes)"
	Named       []string // what its complete records name: "file-0: the copy of /opt/k/server.properties"
	Stored      []string // the run's directory: "file-0 (0 bytes)"
	Left        []string // kaudit's own files on the host: "/etc/sysctl.d/99-kaudit.conf (from run X)"
}

func (e *UntrustedManifestError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s: %s %s: the run's backups cannot be trusted, nothing was restored", e.RunID, e.Path, e.Why)
	if len(e.Left) > 0 {
		fmt.Fprintf(&b, "; kaudit left %s", strings.Join(e.Left, ", "))
	} else {
		b.WriteString("; none of kaudit's own files (" + strings.Join(ownedFiles, ", ") + ") is on the host")
	}
	if len(e.Named) > 0 {
		fmt.Fprintf(&b, "; the manifest's complete records name %s", strings.Join(e.Named, ", "))
	}
	if len(e.Stored) > 0 {
		fmt.Fprintf(&b, "; %s holds %s", path.Dir(e.Path), strings.Join(e.Stored, ", "))
	}
	b.WriteString(" — restore by hand: a file kaudit created in this run can be removed (then sysctl --system or a reboot applies what is left), " +
		"anything else from your own backups or configuration management; server.properties lines kaudit added say \"added by kaudit fix, run " + e.RunID + "\"")
	return b.String()
}

// manifest is a run's manifest as the manifest script printed it.
type manifest struct {
	lines  [][]string // each line's fields
	bytes  string     // its size, as the host said
	stored []string
	owned  []string
}

func readManifest(rs remote.Results) (m manifest) {
	for _, r := range rs {
		switch {
		case !r.OK:
		case r.Step == "line":
			m.lines = append(m.lines, r.Detail)
		case r.Step == "manifest" && r.Word == wordPresent && len(r.Detail) == 1:
			m.bytes = r.Detail[0]
		case r.Step == "stored" && len(r.Detail) == 2:
			m.stored = append(m.stored, fmt.Sprintf("%s (%s bytes)", r.Detail[0], r.Detail[1]))
		case r.Step == "owned" && len(r.Detail) == 2:
			m.owned = append(m.owned, fmt.Sprintf("%s (from run %s)", r.Detail[0], r.Detail[1]))
		}
	}
	return m
}

// parseManifest turns a manifest's lines into journal records: the
// header line (kaudit-manifest VERSION RUNID), the records, the end line
// (end N). A manifest without the header is one an older kaudit wrote
// (legacy): its records are read, but its truncation cannot be told.
// Everything is validated again by RollbackScript before it reaches a
// shell.
func parseManifest(runID string, lines [][]string) (backups []remediate.Backup, runtime []remediate.RuntimeValue, legacy bool, err error) {
	if len(lines) == 0 {
		return nil, nil, false, errors.New("is empty")
	}
	recs := lines
	if h := lines[0]; h[0] == "kaudit-manifest" {
		if len(h) != 3 || h[1] != strconv.Itoa(ManifestVersion) {
			return nil, nil, false, fmt.Errorf("has version %q: this kaudit reads version %d", strings.Join(h[1:], " "), ManifestVersion)
		}
		if h[2] != runID {
			return nil, nil, false, fmt.Errorf("names run %q", h[2])
		}
		end := lines[len(lines)-1]
		if len(lines) < 2 || len(end) != 2 || end[0] != "end" {
			backups, runtime, _ = parseRecords(runID, lines[1:])
			return backups, runtime, false, fmt.Errorf("is truncated (no end line after %d records)", len(lines)-1)
		}
		if end[1] != strconv.Itoa(len(lines)-2) {
			return nil, nil, false, fmt.Errorf("is truncated (end line says %s records, %d read)", end[1], len(lines)-2)
		}
		recs = lines[1 : len(lines)-1]
	} else {
		legacy = true
	}
	backups, runtime, err = parseRecords(runID, recs)
	return backups, runtime, legacy, err
}

// parseRecords reads manifest records; on an error, the records before it.
func parseRecords(runID string, lines [][]string) (backups []remediate.Backup, runtime []remediate.RuntimeValue, err error) {
	for _, f := range lines {
		if len(f) != 5 {
			return backups, runtime, fmt.Errorf("has a malformed line (%d fields)", len(f))
		}
		switch f[0] {
		case "file":
			b := remediate.Backup{Path: f[4], Existed: remote.Word(f[2]) == wordPresent}
			if !b.Existed && remote.Word(f[2]) != wordAbsent {
				return backups, runtime, fmt.Errorf("has a file record neither present nor absent (%q)", f[2])
			}
			if b.Existed {
				b.SHA256 = f[3]
				b.Stored = RunDir(runID) + "/" + f[1]
			}
			backups = append(backups, b)
		case "written":
			i, err := strconv.Atoi(f[1])
			if err != nil || i < 0 || i >= len(backups) || !reSHA.MatchString(f[2]) {
				return backups, runtime, fmt.Errorf("has a malformed written record %q", strings.Join(f, " "))
			}
			backups[i].Written = f[2]
		case string(remediate.KindSysctl), string(remediate.KindNICRing), string(remediate.KindNICOffload):
			runtime = append(runtime, remediate.RuntimeValue{Kind: remediate.ChangeKind(f[0]), Key: f[2], Before: f[3], After: f[4]})
		default:
			return backups, runtime, fmt.Errorf("has an unknown record %q", f[0])
		}
	}
	return backups, runtime, nil
}

// untrusted is the error for a manifest that cannot be trusted.
func untrusted(runID string, m manifest, why error, named []remediate.Backup) *UntrustedManifestError {
	e := &UntrustedManifestError{RunID: runID, Path: RunDir(runID) + "/manifest", Why: why.Error(), Stored: m.stored, Left: m.owned}
	if m.bytes != "" && len(m.lines) == 0 {
		e.Why = fmt.Sprintf("is empty (%s bytes)", m.bytes)
	}
	for _, b := range named {
		if b.Existed {
			e.Named = append(e.Named, fmt.Sprintf("%s: the copy of %s", path.Base(b.Stored), b.Path))
		} else {
			e.Named = append(e.Named, b.Path+" (created by the run)")
		}
	}
	return e
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
	var errs []RollbackResult
	found := map[string]remediate.HostJournal{}
	done := fanout.Run(ctx, len(hosts), fanout.Options{Limit: max(opt.Batch, 1)}, func(i int) bool {
		hj, err := hostManifest(ctx, hosts[i], runID, opt)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			errs = append(errs, RollbackResult{Host: hosts[i].Name, Err: err})
		case hj != nil:
			found[hosts[i].Name] = *hj
		}
		return err == nil
	})
	errs = append(errs, notRead(ctx, hosts, done.NotStarted)...)
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
	rs, err := remote.ParseSteps(out.Stdout, marker, h.Name, manifestWords)
	if err != nil {
		return nil, err
	}
	mr := rs.Find("manifest")
	if mr == nil || rs.Find("done") == nil {
		if f := rs.FirstFailure(); f != nil {
			return nil, fmt.Errorf("%s: %s%s", f.Step, f.Text(), stderrTail(out))
		}
		return nil, fmt.Errorf("reading the manifest did not finish%s", stderrTail(out))
	}
	m := readManifest(rs)
	if !mr.OK {
		return nil, untrusted(runID, m, fmt.Errorf("cannot be read (%s)%s", mr.Text(), stderrTail(out)), nil)
	}
	if mr.Word == wordAbsent {
		return nil, nil
	}
	backups, runtime, legacy, err := parseManifest(runID, m.lines)
	if err != nil {
		return nil, untrusted(runID, m, err, backups)
	}
	note := "journal rebuilt from the host's manifest"
	if legacy {
		note += " (written by an older kaudit, without an end line: a truncated one cannot be told)"
	}
	// Validate now, so that a bad manifest fails here, not halfway.
	if _, err := RollbackScript(RollbackParams{Marker: marker, RunID: runID, Backups: backups, Runtime: runtime}); err != nil {
		return nil, untrusted(runID, m, fmt.Errorf("has a record kaudit refuses (%v)", err), nil)
	}
	return &remediate.HostJournal{Host: h.Name, Status: remediate.StatusApplied, Backups: backups, Runtime: runtime, Changes: []remediate.Change{},
		Error: note}, nil
}
