package apply

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
)

// fakeSync logs each call on stdout, in order with the result lines:
// "SYNC" and its arguments, tab-separated. NOARGS set: it refuses
// arguments, as some busybox builds do.
const fakeSync = `#!/bin/sh
if [ -n "${NOARGS:-}" ] && [ $# -gt 0 ]; then echo "sync: unknown option" >&2; exit 1; fi
printf 'SYNC'
for a in "$@"; do printf '\t%s' "$a"; done
printf '\n'
`

// step is one result line and the sync calls since the one before.
type step struct {
	remote.Result
	synced []string // paths, each call's arguments after "--"
	plain  int      // calls without arguments (sync everything)
}

// steps reads a script's stdout with fakeSync on the PATH. Result lines
// with no sync between them (a phase's ok lines, printed together once
// its files are synced) share the syncs before the first of them.
func steps(t *testing.T, out []byte, marker string) []step {
	t.Helper()
	var got []step
	var cur step
	fresh := false // a sync since the last result line
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\t")
		switch {
		case f[0] == "SYNC" && len(f) == 1:
			if !fresh {
				cur, fresh = step{}, true
			}
			cur.plain++
		case f[0] == "SYNC":
			if f[1] != "--" {
				t.Fatalf("sync called without --: %q", line)
			}
			if !fresh {
				cur, fresh = step{}, true
			}
			cur.synced = append(cur.synced, f[2:]...)
		default:
			if rs := remote.ParseResults([]byte(line), marker); len(rs) == 1 {
				cur.Result = rs[0]
				got = append(got, cur)
				fresh = false
			}
		}
	}
	return got
}

func withFakeSync(t *testing.T, s *sandbox, host string) {
	t.Helper()
	s.write(t, host, "/bin/sync", fakeSync)
	if err := os.Chmod(s.path(host, "/bin/sync"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// applyDirect runs the read and the apply script of sbPlan on host, the
// way applyHost does, and returns the params and the apply's stdout.
func applyDirect(t *testing.T, s *sandbox, host, runID string) (*prepared, []byte) {
	t.Helper()
	h := sbHosts(host)[0]
	changes, _ := Split(h.Plan, h.Findings)
	files, keys, nics := filesOf(changes)
	st, err := read(context.Background(), Options{Runner: s, Timeout: 10e9}, h.Inv, files, keys, nics, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := prepare(runID, changes, st)
	if err != nil {
		t.Fatal(err)
	}
	grantLease(t, s, host, runID)
	p.params.Marker = tMarker
	script, err := ApplyScript(p.params)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(context.Background(), transport.Target{Name: host}, script)
	if err != nil {
		t.Fatal(err)
	}
	return p, out.Stdout
}

// Every file the apply script writes (backups, the manifest, the
// replaced files and their temporary files) is fsynced, and so is its
// directory, before the step's ok line; the run directory and
// /var/lib/kaudit/runs after they are made. Then the same for the rollback: each restored
// file, its temporary file and directory, the directory of each removed
// file.
func TestApplyRollbackDurable(t *testing.T) {
	s := newSandbox(t, "h1")
	withFakeSync(t, s, "h1")
	const run = "20260101T000000Z-000000d1"
	p, out := applyDirect(t, s, "h1", run)
	at := func(p string) string { return s.path("h1", p) }
	rd := RunDir(run)
	want := map[string][]string{
		"rundir":          {at(rd), at(remediate.HostRunsDir), at(path.Dir(remediate.HostRunsDir))},
		"backup-manifest": {at(rd + "/manifest"), at(rd)},
		"done":            {at(rd)},
	}
	for i, f := range p.params.Files {
		dir, base := path.Split(f.Path)
		if f.Existed {
			want["backup-file-"+itoa(i)] = []string{at(rd + "/" + BackupName(i)), at(rd)}
		}
		want["file-"+itoa(i)] = []string{at(dir + "." + base + ".kaudit-" + run), at(f.Path), at(path.Dir(f.Path)), at(rd + "/manifest"), at(rd)}
	}
	for i, r := range p.params.Runtime {
		want["backup-"+runtimeStep(r.Kind, i)] = []string{at(rd + "/" + runtimeStep(r.Kind, i)), at(rd)}
	}
	got := steps(t, out, tMarker)
	checkSynced(t, "apply", got, want)
	if len(p.params.Files) != 3 || p.params.Files[1].Existed || len(want) != 3+1+3+4 {
		t.Fatalf("the plan writes %d files, %d steps checked: the test does not test what it says", len(p.params.Files), len(want))
	}

	// The rollback, from the journal the apply would have written.
	backups := slices.Clone(p.backups)
	for i := range backups {
		for _, r := range got {
			if r.Step == fileStep(i) {
				backups[i].Written = r.Detail[0]
			}
		}
	}
	rp := RollbackParams{Marker: tMarker, RunID: run, Backups: backups, Runtime: p.runtime}
	script, err := RollbackScript(rp)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background(), transport.Target{Name: "h1"}, script)
	if err != nil {
		t.Fatal(err)
	}
	want = map[string][]string{}
	for i, b := range backups {
		dir, base := path.Split(b.Path)
		if b.Existed {
			want["restore-file-"+itoa(i)] = []string{at(dir + "." + base + ".kaudit-restore-" + run), at(b.Path), at(path.Dir(b.Path))}
		} else {
			want["restore-file-"+itoa(i)] = []string{at(path.Dir(b.Path))}
		}
	}
	got = steps(t, res.Stdout, tMarker)
	checkSynced(t, "rollback", got, want)
	var details []string
	for _, r := range got {
		details = append(details, r.Step+" "+r.Text())
	}
	if d := strings.Join(details, ", "); !strings.Contains(d, "restore-file-0 restored") || !strings.Contains(d, "restore-file-1 removed") || !strings.Contains(d, "done ok") {
		t.Errorf("rollback: %s", d)
	}
	// Run again, everything is unchanged, and still made sure of.
	res, err = s.Run(context.Background(), transport.Target{Name: "h1"}, script)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		want[k] = v[len(v)-1:]
	}
	checkSynced(t, "second rollback", steps(t, res.Stdout, tMarker), want)
}

// checkSynced: each ok step of want was preceded (since the result line
// before it) by a sync of every path want lists.
func checkSynced(t *testing.T, what string, got []step, want map[string][]string) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range got {
		if !r.OK {
			t.Errorf("%s: step %s failed: %s", what, r.Step, r.Text())
			continue
		}
		paths, ok := want[r.Step]
		if !ok {
			continue
		}
		seen[r.Step] = true
		for _, p := range paths {
			if !slices.Contains(r.synced, filepath.Clean(p)) {
				t.Errorf("%s: step %s ok without a sync of %s (synced: %q)", what, r.Step, p, r.synced)
			}
		}
	}
	for st := range want {
		if !seen[st] {
			t.Errorf("%s: no ok line for step %s", what, st)
		}
	}
}

// grantLease gives run runID the host's lease, as its read step would.
func grantLease(t *testing.T, s *sandbox, host, runID string) {
	t.Helper()
	s.write(t, host, KaudirDir+"/lease", runID+"\tunknown\t0\t0\t1\t9999999999\n")
}

func itoa(i int) string { return string(rune('0' + i)) }

// Where sync refuses file arguments, every step that must be durable is
// preceded by a plain sync (everything flushed), and no sync is given
// arguments again after the first try.
func TestDurableFallbackPlainSync(t *testing.T) {
	s := newSandbox(t, "h1")
	withFakeSync(t, s, "h1")
	s.write(t, "h1", "/bin/sync", "#!/bin/sh\nNOARGS=1\n"+strings.TrimPrefix(fakeSync, "#!/bin/sh\n"))
	p, out := applyDirect(t, s, "h1", "20260101T000000Z-000000d2")
	got := steps(t, out, tMarker)
	n := 0
	for _, r := range got {
		if !r.OK {
			t.Fatalf("step %s failed: %s", r.Step, r.Text())
		}
		if len(r.synced) > 0 {
			t.Errorf("step %s: sync given arguments %q after it refused them", r.Step, r.synced)
		}
		if strings.HasPrefix(r.Step, "file-") || strings.HasPrefix(r.Step, "backup-") || r.Step == "rundir" || r.Step == "done" {
			n++
			if r.plain == 0 && !(strings.HasPrefix(r.Step, "backup-file-") && r.Text() == "absent") {
				t.Errorf("step %s ok without a sync", r.Step)
			}
		}
	}
	if n < len(p.params.Files)*2+2 {
		t.Errorf("only %d steps checked", n)
	}
}

// A manifest that is empty, truncated, of another run or unreadable is an
// error that names the run, the manifest and what kaudit left on the host
// — never a host without the run ("nothing to roll back"). A manifest an
// older kaudit wrote (no header, no end line) is read, and said so.
func TestManifestUntrusted(t *testing.T) {
	const run = "20260101T000000Z-000000d3"
	s := newSandbox(t, "h1")
	if _, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: run}); err != nil {
		t.Fatal(err)
	}
	mpath := RunDir(run) + "/manifest"
	good := s.read("h1", mpath)
	lines := strings.SplitAfter(strings.TrimSuffix(good, "\n"), "\n")
	if !strings.HasPrefix(good, "kaudit-manifest\t2\t"+run+"\n") || lines[len(lines)-1] != "end\t10" {
		t.Fatalf("manifest:\n%s", good)
	}
	legacy := strings.Join(lines[1:len(lines)-1], "")
	inv := []inventory.Host{sbHosts("h1")[0].Inv}
	for _, tc := range []struct {
		name, manifest string
		why            string // "": read
	}{
		{"complete", good, ""},
		{"empty", "", "is empty (0 bytes)"},
		{"no end line", strings.Join(lines[:len(lines)-1], ""), "is truncated (no end line after 10 records)"},
		{"cut in a line", good[:len(good)/2], "is truncated"},
		{"end line miscounts", strings.Join(lines[:3], "") + "end\t10\n", "is truncated (end line says 10 records, 2 read)"},
		{"another run", strings.Replace(good, run, "20260101T000000Z-0000ffff", 1), `names run "20260101T000000Z-0000ffff"`},
		{"another version", strings.Replace(good, "kaudit-manifest\t2", "kaudit-manifest\t3", 1), "has version"},
		{"zeroes", "\x00\x00\x00\x00\n", "has a malformed line (1 fields)"},
		{"a file neither present nor absent", strings.Replace(good, "\tabsent\t", "\tgone\t", 1), `has a file record neither present nor absent ("gone")`},
		{"legacy", legacy, ""},
		{"unreadable", "<dir>", "cannot be read"},
	} {
		_ = os.RemoveAll(s.path("h1", mpath))
		if tc.manifest == "<dir>" {
			if err := os.Mkdir(s.path("h1", mpath), 0o700); err != nil {
				t.Fatal(err)
			}
		} else {
			s.write(t, "h1", mpath, tc.manifest)
		}
		j, unread, err := JournalFromHosts(context.Background(), inv, run, Options{Runner: s})
		if err != nil {
			t.Fatal(err)
		}
		if tc.why == "" {
			if len(unread) != 0 || len(j.Hosts) != 1 || len(j.Hosts[0].Backups) != 3 || len(j.Hosts[0].Runtime) != 4 {
				t.Errorf("%s: not read: %+v %+v", tc.name, unread, j.Hosts)
			} else if legacy := strings.Contains(j.Hosts[0].Error, "older kaudit"); legacy != (tc.name == "legacy") {
				t.Errorf("%s: note %q", tc.name, j.Hosts[0].Error)
			}
			continue
		}
		if len(unread) != 1 || len(j.Hosts) != 0 {
			t.Errorf("%s: accepted: %+v %+v", tc.name, unread, j.Hosts)
			continue
		}
		var ue *UntrustedManifestError
		msg := unread[0].Err.Error()
		t.Logf("%s: %s", tc.name, msg)
		if !errors.As(unread[0].Err, &ue) {
			t.Errorf("%s: %T %v", tc.name, unread[0].Err, msg)
			continue
		}
		for _, want := range []string{"run " + run + ": ", mpath + " " + tc.why, "cannot be trusted, nothing was restored",
			"kaudit left " + s.path("h1", "/etc/sysctl.d/99-kaudit.conf") + " (from run " + run + "), " + s.path("h1", remediate.NICPersistPath) + " (from run " + run + ")",
			"file-0 (", "restore by hand"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q lacks %q", tc.name, msg, want)
			}
		}
	}
}

// A rollback from the local journal refuses a backup that is empty or
// missing, says so, and fails (the host is not rolled back).
func TestRollbackRefusesLostBackups(t *testing.T) {
	const run = "20260101T000000Z-000000d4"
	for _, lost := range []string{"empty", "missing"} {
		s := newSandbox(t, "h1")
		j, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: run})
		if err != nil || j.Host("h1").Status != remediate.StatusVerified {
			t.Fatalf("apply: %v %+v", err, j.Host("h1"))
		}
		bk := s.path("h1", RunDir(run)+"/file-0")
		if lost == "empty" {
			err = os.Truncate(bk, 0)
		} else {
			err = os.Remove(bk)
		}
		if err != nil {
			t.Fatal(err)
		}
		props := s.read("h1", sbProps)
		res, err := Rollback(context.Background(), []inventory.Host{sbHosts("h1")[0].Inv}, j, Options{Runner: s})
		if err != nil || len(res) != 1 {
			t.Fatalf("%v %+v", err, res)
		}
		wantMsg := map[string]string{"empty": "backup " + bk + " is empty (0 bytes: lost in a crash?): " + s.path("h1", sbProps) + " not restored",
			"missing": "backup " + bk + " is missing"}[lost]
		if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), wantMsg) {
			t.Errorf("%s backup: %+v, want %q", lost, res[0], wantMsg)
		}
		if got := s.read("h1", sbProps); got != props {
			t.Errorf("%s backup: server.properties changed: %q", lost, got)
		}
		if st := j.Host("h1").Status; st != remediate.StatusFailed {
			t.Errorf("%s backup: journal status %s", lost, st)
		}
	}
}

// Every embedded script, rendered (header, say and fail, lib.sh and its
// file) and each sh/*.sh file alone, is clean for shellcheck -s sh.
func TestShellcheck(t *testing.T) {
	bin, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck is not on PATH")
	}
	apply := sampleApply()
	apply.Runtime = append(apply.Runtime, RuntimeWrite{Kind: remediate.KindNICRing, Key: "eth0 rx", Before: "512", To: "4096"})
	read, err := ReadScript(ReadParams{Marker: tMarker, Files: []string{"/etc/sysctl.d/99-kaudit.conf"}, Sysctls: []string{"net.core.somaxconn"},
		NICs: []NICRead{{Kind: remediate.KindNICOffload, Target: "eth0 gro"}}})
	if err != nil {
		t.Fatal(err)
	}
	ap, err := ApplyScript(apply)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := RollbackScript(RollbackParams{Marker: tMarker, RunID: tRun, Wait: 5, Force: true,
		Backups: []remediate.Backup{{Path: "/opt/kafka/config/server.properties", Existed: true, SHA256: SHA256(nil)}, {Path: "/etc/sysctl.d/99-kaudit.conf"}},
		Runtime: []remediate.RuntimeValue{{Kind: remediate.KindNICOffload, Key: "nm:" + tUUID + " gro", Before: "unset", After: "on"}}})
	if err != nil {
		t.Fatal(err)
	}
	mf, err := ManifestScript(tMarker, tRun)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := ReleaseScript(tMarker, tRun, Lease{Operator: "alice@laptop", PID: 12, PStart: "345", TTL: 200, LockWait: 15})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := RunsScript(tMarker)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := RestartScript(RestartParams{Marker: tMarker, Unit: "kafka.service", Port: 9092, Wait: 600, RunID: tRun})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, s := range map[string][]byte{"restart": rs, "sh/restart.sh": []byte(restartSh), "release": rel, "runs": runs, "read": read, "apply": ap, "rollback": rb, "manifest": mf,
		"sh/lib.sh": []byte(libSh), "sh/read.sh": []byte(readSh), "sh/apply.sh": []byte(applySh), "sh/rollback.sh": []byte(rollbackSh), "sh/manifest.sh": []byte(manifestSh), "sh/release.sh": []byte(releaseSh), "sh/runs.sh": []byte(runsSh)} {
		p := filepath.Join(dir, strings.ReplaceAll(name, "/", "-"))
		if err := os.WriteFile(p, s, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bin, "-s", "sh", p).CombinedOutput(); err != nil {
			t.Errorf("shellcheck -s sh %s: %v\n%s", name, err, out)
		}
	}
}
