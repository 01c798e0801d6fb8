package apply

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
)

// What the apply script's results say about each item: ok lines own it;
// a failing step before the first change owns nothing; a failing value
// step owns the values said ok and itself, not the later ones nor the
// files; a failing file step owns every value and, maybe, every file (a
// file's ok line comes after all of them are renamed); a script cut off
// owns, maybe, all it did not say ok.
func TestApplyParamsChanged(t *testing.T) {
	p := sampleApply() // values sysctl-0, sysctl-1; files file-0, file-1
	const y, m, n = remediate.ChangedYes, remediate.ChangedMaybe, remediate.ChangedNo
	ok := func(step string) remote.Result { return remote.Result{Step: step, OK: true, Detail: []string{"-"}} }
	bad := func(step string) remote.Result { return remote.Result{Step: step, Detail: []string{"x"}} }
	for _, tc := range []struct {
		name          string
		rs            remote.Results
		files, values []remediate.Changed
	}{
		{"done", remote.Results{ok("sysctl-0"), ok("sysctl-1"), ok("file-0"), ok("file-1"), ok("done")}, []remediate.Changed{y, y}, []remediate.Changed{y, y}},
		{"a check failed: nothing changed, re-run", remote.Results{ok("lease"), bad("check-file-0")}, []remediate.Changed{n, n}, []remediate.Changed{n, n}},
		{"no room for the backups", remote.Results{ok("lease"), ok("check-file-0"), bad("space")}, []remediate.Changed{n, n}, []remediate.Changed{n, n}},
		{"the lease is another run's", remote.Results{bad("lease")}, []remediate.Changed{n, n}, []remediate.Changed{n, n}},
		{"the second value failed", remote.Results{ok("backup-manifest"), ok("sysctl-0"), bad("sysctl-1")}, []remediate.Changed{n, n}, []remediate.Changed{y, m}},
		{"the first value failed", remote.Results{ok("backup-manifest"), bad("sysctl-0")}, []remediate.Changed{n, n}, []remediate.Changed{m, n}},
		{"a rename failed", remote.Results{ok("sysctl-0"), ok("sysctl-1"), bad("file-1")}, []remediate.Changed{m, m}, []remediate.Changed{y, y}},
		{"cut off after the first value", remote.Results{ok("backup-manifest"), ok("sysctl-0")}, []remediate.Changed{m, m}, []remediate.Changed{y, m}},
		{"cut off before any line", nil, []remediate.Changed{m, m}, []remediate.Changed{m, m}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, values := p.Changed(tc.rs)
			if strings.Join(toStrings(files), " ") != strings.Join(toStrings(tc.files), " ") || strings.Join(toStrings(values), " ") != strings.Join(toStrings(tc.values), " ") {
				t.Errorf("files %v values %v, want %v %v", files, values, tc.files, tc.values)
			}
		})
	}
}

func toStrings(cs []remediate.Changed) []string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c))
	}
	return out
}

// logTo collects Options.Log lines.
func logTo(lines *[]string) func(string) {
	var mu sync.Mutex
	return func(s string) { mu.Lock(); *lines = append(*lines, s); mu.Unlock() }
}

// A live lease of another run refuses the run on the host, naming the
// holder, and changes nothing; an expired one is taken over and said so;
// the run's last step removes its own lease.
func TestLeaseHeldAndStale(t *testing.T) {
	s := newSandbox(t, "h1")
	before := snapshot(s, "h1")
	lease := s.path("h1", KaudirDir+"/lease")
	now := time.Now().Unix()
	s.write(t, "h1", KaudirDir+"/lease", "20260101T000000Z-0000000a\talice@laptop\t1\t1\t"+itoa64(now-5)+"\t"+itoa64(now+600)+"\n")
	var log []string
	j, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: "20260101T000000Z-0000000b", Timeout: 60 * time.Second, Log: logTo(&log)})
	if err != nil {
		t.Fatal(err)
	}
	hj := j.Host("h1")
	want := "h1 is being changed by run 20260101T000000Z-0000000a (alice@laptop, since " + time.Unix(now-5, 0).UTC().Format("15:04:05") + " UTC): nothing changed here (hint: re-run when it is done"
	if hj.Status != remediate.StatusUnchanged || !strings.HasPrefix(hj.Error, want) || hj.Owns() {
		t.Errorf("held: %s %q, want %q", hj.Status, hj.Error, want)
	}
	if got := snapshot(s, "h1"); got != before {
		t.Errorf("changed under another run's lease:\n%s", got)
	}
	if b, _ := os.ReadFile(lease); !strings.HasPrefix(string(b), "20260101T000000Z-0000000a\t") {
		t.Errorf("the holder's lease is now %q", b)
	}
	// Expired: taken over, said, and released at the end.
	s.write(t, "h1", KaudirDir+"/lease", "20260101T000000Z-0000000a\talice@laptop\t1\t1\t"+itoa64(now-700)+"\t"+itoa64(now-100)+"\n")
	log = nil
	j, err = Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: "20260101T000000Z-0000000c", Timeout: 60 * time.Second, Log: logTo(&log)})
	if err != nil {
		t.Fatal(err)
	}
	if hj := j.Host("h1"); hj.Status != remediate.StatusVerified {
		t.Errorf("after an expired lease: %s %q", hj.Status, hj.Error)
	}
	if all := strings.Join(log, "\n"); !strings.Contains(all, "h1: took over the stale lease of run 20260101T000000Z-0000000a (alice@laptop, since") {
		t.Errorf("log does not say the lease was taken over:\n%s", all)
	}
	if _, err := os.Stat(lease); !os.IsNotExist(err) {
		t.Errorf("the run's lease is left after its run (%v)", err)
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// fullDF makes df report /var/lib/kaudit full (16 KiB, none free).
const fullDF = "#!/bin/sh\nprintf 'Filesystem 1024-blocks Used Available Capacity Mounted on\\ntmpfs 16 16 0 100%% /var/lib/kaudit\\n'\n"

// The first seen failure: run 1 stops on a host before writing (its
// /var/lib/kaudit is full), the disk is freed, run 2 fixes the host; run
// 1's rollback must change nothing there, and say so.
func TestRollbackOfRunThatChangedNothing(t *testing.T) {
	s := newSandbox(t, "h1")
	before := snapshot(s, "h1")
	s.write(t, "h1", "/bin/df", fullDF)
	if err := os.Chmod(s.path("h1", "/bin/df"), 0o755); err != nil {
		t.Fatal(err)
	}
	const run1, run2 = "20260101T000000Z-000000f1", "20260101T000000Z-000000f2"
	j1, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: run1, Timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	hj := j1.Host("h1")
	t.Logf("run 1: %s %q", hj.Status, hj.Error)
	// (the sandbox's /var/lib/kaudit is under its directory)
	if !strings.HasPrefix(hj.Error, "nothing changed: ") || !strings.Contains(hj.Error, "/var/lib/kaudit on h1: 0 of 16 KiB free, the backups need 32 KiB; make room there and re-run") ||
		hj.Owns() || j1.ChangedAnything() {
		t.Errorf("run 1: %s %q owns %v", hj.Status, hj.Error, hj.Owns())
	}
	if got := snapshot(s, "h1"); got != before {
		t.Errorf("run 1 changed the host:\n%s", got)
	}
	if _, err := os.Stat(s.path("h1", RunDir(run1))); !os.IsNotExist(err) {
		t.Errorf("run 1 left its directory (%v)", err)
	}
	_ = os.Remove(s.path("h1", "/bin/df"))
	j2, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: run2, Timeout: 60 * time.Second})
	if err != nil || j2.Host("h1").Status != remediate.StatusVerified {
		t.Fatalf("run 2: %+v %v", j2.Host("h1"), err)
	}
	after2 := snapshot(s, "h1")
	res, err := Rollback(context.Background(), []inventory.Host{sbHosts("h1")[0].Inv}, j1, Options{Runner: s, Timeout: 60 * time.Second})
	if err != nil || len(res) != 1 || !res[0].Nothing || res[0].Err != nil {
		t.Fatalf("rollback of run 1: %+v %v", res, err)
	}
	if got := snapshot(s, "h1"); got != after2 {
		t.Errorf("rollback of run 1 changed run 2's host:\n%s\nwant\n%s", got, after2)
	}
	// Even an older journal (no record of what changed) restores nothing
	// where the host has no manifest of the run.
	for i := range hj.Backups {
		hj.Backups[i].Changed = remediate.ChangedUnknown
	}
	for i := range hj.Runtime {
		hj.Runtime[i].Changed = remediate.ChangedUnknown
	}
	res, err = Rollback(context.Background(), []inventory.Host{sbHosts("h1")[0].Inv}, j1, Options{Runner: s, Timeout: 60 * time.Second})
	if err != nil || len(res) != 1 || !res[0].Nothing || res[0].Err != nil {
		t.Fatalf("rollback of run 1 from a journal without ownership: %+v %v", res, err)
	}
	if got := snapshot(s, "h1"); got != after2 {
		t.Errorf("rollback of run 1 (journal without ownership) changed run 2's host:\n%s", got)
	}
}

// Where there is no flock(1), the lock is a directory naming its holder:
// a second script waits for it (LOCKWAIT), gets it once the holder ends,
// fails step lock after LOCKWAIT while it is held, and takes over one
// whose holder is gone (killed: the directory is left behind).
func TestLockDirFallback(t *testing.T) {
	bin := t.TempDir()
	for _, tool := range []string{"mkdir", "rm", "cat", "sleep", "date", "sync"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skip(tool, " not found")
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	kdir := filepath.Join(t.TempDir(), "kaudit")
	script := func(wait int, hold string) string {
		var h header
		h.set("M", tMarker)
		h.set("KDIR", kdir)
		h.set("LOCKWAIT", strconv.Itoa(wait))
		h.set("RUNID", tRun)
		s, err := h.script("lock_host || lock_busy\nsay locked ok \"$$\"\nsleep " + hold + "\n")
		if err != nil {
			t.Fatal(err)
		}
		return string(s)
	}
	run := func(wait int, hold string) *exec.Cmd {
		c := exec.Command("/bin/sh", "-s")
		c.Stdin = strings.NewReader(script(wait, hold))
		c.Env = []string{"PATH=" + bin}
		return c
	}
	first := run(5, "2")
	var out1 bytes.Buffer
	first.Stdout = &out1
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(filepath.Join(kdir, "lock.d", "owner")); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	busy, _ := run(0, "0").Output()
	if rs := remote.ParseResults(busy, tMarker); rs.Find("lock") == nil || rs.Find("lock").OK {
		t.Errorf("while held, LOCKWAIT 0: %q", busy)
	}
	t0 := time.Now()
	second, _ := run(5, "0").Output()
	if rs := remote.ParseResults(second, tMarker); rs.Find("locked") == nil || time.Since(t0) < time.Second {
		t.Errorf("the waiter: %q after %v", second, time.Since(t0))
	}
	_ = first.Wait()
	// A holder killed with the lock: taken over at once.
	killed := run(5, "5")
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(filepath.Join(kdir, "lock.d", "owner")); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = killed.Process.Kill()
	_ = killed.Wait()
	if _, err := os.Stat(filepath.Join(kdir, "lock.d")); err != nil {
		t.Fatalf("the killed holder's lock directory is not there to take over (%v)", err)
	}
	t0 = time.Now()
	after, _ := run(3, "0").Output()
	if rs := remote.ParseResults(after, tMarker); rs.Find("locked") == nil || time.Since(t0) > 2*time.Second {
		t.Errorf("after the holder was killed: %q after %v", after, time.Since(t0))
	}
	if _, err := os.Stat(filepath.Join(kdir, "lock.d")); !os.IsNotExist(err) {
		t.Errorf("lock directory left after its holder ended (%v)", err)
	}
}

// A host an older kaudit left records on: the run directory of an
// interrupted run holding its apply script's apply.owner (the older
// second record of ownership) and that run's expired lease (the lease's
// format is unchanged). The next run's read takes the lease over and
// removes apply.owner, saying both; the older run is then listed, and
// rolled back from its manifest alone (--from-hosts); nothing of it is
// left.
func TestOlderKauditRecords(t *testing.T) {
	s := newSandbox(t, "h1")
	before := snapshot(s, "h1")
	const old, next = "20260101T000000Z-0000001a", "20260101T000000Z-0000001b"
	if j, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: old, Timeout: time.Minute}); err != nil || j.Host("h1").Status != remediate.StatusVerified {
		t.Fatalf("the older run: %+v %v", j, err)
	}
	changed := snapshot(s, "h1")
	owner := RunDir(old) + "/apply.owner"
	now := time.Now().Unix()
	s.write(t, "h1", owner, "999999999 5\n")
	s.write(t, "h1", KaudirDir+"/lease", old+"\tbob@ops\t77\t123\t"+itoa64(now-700)+"\t"+itoa64(now-100)+"\n")
	var log []string
	j, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: next, Timeout: time.Minute, Log: logTo(&log)})
	if err != nil || j.Host("h1").Status != remediate.StatusUnchanged {
		t.Fatalf("the next run: %+v %v", j.Host("h1"), err)
	}
	all := strings.Join(log, "\n")
	for _, want := range []string{"h1: took over the stale lease of run " + old + " (bob@ops, since", "apply.owner (left by a run that is gone)"} {
		if !strings.Contains(all, want) {
			t.Errorf("log lacks %q:\n%s", want, all)
		}
	}
	if _, err := os.Stat(s.path("h1", owner)); !os.IsNotExist(err) {
		t.Errorf("the older run's apply.owner is left (%v)", err)
	}
	runs, leases, errs := HostRuns(context.Background(), []inventory.Host{sbHosts("h1")[0].Inv}, Options{Runner: s, Timeout: time.Minute})
	if len(errs) != 0 || len(leases) != 0 || len(runs) != 1 || runs[0].RunID != old || runs[0].State != wordManifest || runs[0].Running {
		t.Errorf("listed runs %+v leases %+v errors %+v", runs, leases, errs)
	}
	oj, errs2, err := JournalFromHosts(context.Background(), []inventory.Host{sbHosts("h1")[0].Inv}, old, Options{Runner: s, Timeout: time.Minute})
	if err != nil || len(errs2) != 0 || len(oj.Hosts) != 1 {
		t.Fatalf("rebuilt journal %+v %v %v", oj, errs2, err)
	}
	if snapshot(s, "h1") != changed {
		t.Fatal("the next run changed the host: the test does not test what it says")
	}
	res, err := Rollback(context.Background(), []inventory.Host{sbHosts("h1")[0].Inv}, oj, Options{Runner: s, Timeout: time.Minute})
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("rollback: %+v %v", res, err)
	}
	if got := snapshot(s, "h1"); got != before {
		t.Errorf("after the rollback:\n%s\nwant\n%s", got, before)
	}
	if _, err := os.Stat(s.path("h1", KaudirDir+"/lease")); !os.IsNotExist(err) {
		t.Errorf("a lease is left (%v)", err)
	}
}
