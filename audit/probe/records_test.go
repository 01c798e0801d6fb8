package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
)

const (
	keyA  = "SHA256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	boot1 = "11111111-1111-4111-8111-111111111111"
	boot2 = "22222222-2222-4222-8222-222222222222"
)

func gathered(key, release, boot string) *facts.Facts {
	return &facts.Facts{HostKey: key, Kernel: facts.Kernel{Release: release, BootID: boot}}
}

func probed(t *testing.T, r *Records, host string, f *facts.Facts, client, server int) {
	t.Helper()
	f.Probe = &facts.Probe{State: facts.ProbeOK, Cases: []facts.ProbeCase{{RcvBuf: 102400, ClientSndWscale: client, ServerRcvWscale: server, CookiesRecv: 1}}}
	r.Stamp(f.Probe, f)
	if err := r.Settle(host, f); err != nil {
		t.Fatal(err)
	}
}

func TestRecordsSettle(t *testing.T) {
	at := time.Date(2026, 12, 5, 10, 2, 0, 0, time.UTC)
	now := at
	r := &Records{Dir: filepath.Join(t.TempDir(), "probes"), Now: func() time.Time { return now }}
	probed(t, r, "a", gathered(keyA, "6.1.0", boot1), 1, 7)
	// Two hosts cloned from one image share the key: each keeps its own.
	probed(t, r, "b", gathered(keyA, "6.1.0", boot2), 7, 7)
	now = at.Add(90 * time.Second)

	for _, tc := range []struct {
		name, host string
		f          *facts.Facts
		probe      bool   // f.Probe set from the record
		client     int    // its first case's client wscale
		earlier    string // f.EarlierProbe's boot id
	}{
		{name: "same boot", host: "a", f: gathered(keyA, "6.1.0", boot1), probe: true, client: 1},
		{name: "the clone's boot", host: "b", f: gathered(keyA, "6.1.0", boot2), probe: true, client: 7},
		{name: "rebooted", host: "a", f: gathered(keyA, "6.1.0", "33333333-3333-4333-8333-333333333333"), earlier: boot1},
		{name: "another kernel, same boot id", host: "a", f: gathered(keyA, "6.1.1", boot1), earlier: boot1},
		{name: "another host key", host: "a", f: gathered("SHA256:other", "6.1.0", boot1)},
		{name: "no boot id", host: "c", f: gathered(keyA, "6.1.0", "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := r.Settle(tc.host, tc.f); err != nil {
				t.Fatal(err)
			}
			switch p := tc.f.Probe; {
			case tc.probe && (p == nil || !p.Recorded || p.AgeS != 90 || !p.At.Equal(at) || p.Cases[0].ClientSndWscale != tc.client):
				t.Fatalf("probe %+v, want recorded 90 s old, client %d", p, tc.client)
			case !tc.probe && p != nil:
				t.Fatalf("probe %+v, want none", p)
			}
			switch e := tc.f.EarlierProbe; {
			case tc.earlier == "" && e != nil:
				t.Fatalf("earlier probe %+v, want none", e)
			case tc.earlier != "" && (e == nil || e.BootID != tc.earlier):
				t.Fatalf("earlier probe %+v, want boot %s", e, tc.earlier)
			}
		})
	}
}

// A probe that never started (needs root) is not kept and does not hide
// the record of this boot.
func TestRecordsNotRunKeepsTheRecord(t *testing.T) {
	r := &Records{Dir: t.TempDir()}
	probed(t, r, "a", gathered(keyA, "6.1.0", boot1), 1, 7)
	f := gathered(keyA, "6.1.0", boot1)
	f.Probe = &facts.Probe{State: facts.ProbeNeedsRoot, Reason: "uid 1001"}
	if err := r.Settle("a", f); err != nil {
		t.Fatal(err)
	}
	if f.Probe == nil || !f.Probe.Recorded || f.Probe.State != facts.ProbeOK {
		t.Fatalf("probe %+v, want the recorded ok one", f.Probe)
	}
}

// Records another user could write are refused (a planted "fixed" would
// be a wrong "you are safe"), and so is a file that is not a record.
func TestRecordsRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, r *Records)
		want  string
	}{
		{"group-writable directory", func(t *testing.T, r *Records) { chmod(t, r.Dir, 0o770) }, "writable by group or others (mode 0770): refused (hint: chmod go-w"},
		{"world-writable file", func(t *testing.T, r *Records) { chmod(t, r.path(keyA), 0o666) }, "writable by group or others (mode 0666)"},
		{"directory of another user", func(t *testing.T, r *Records) { chown(t, r.Dir) }, "not to you"},
		{"a symbolic link", func(t *testing.T, r *Records) {
			real := r.Dir + ".real"
			if err := os.Rename(r.Dir, real); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, r.Dir); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link: refused"},
		{"planted record of another key", func(t *testing.T, r *Records) {
			b, _ := os.ReadFile(r.path(keyA))
			write(t, r.path(keyA), strings.ReplaceAll(string(b), keyA, "SHA256:planted"))
		}, "is not a probe record of kaudit's for this host key (hint: remove it"},
		{"not JSON", func(t *testing.T, r *Records) { write(t, r.path(keyA), "{") }, "is not a probe record"},
		{"unknown field", func(t *testing.T, r *Records) { write(t, r.path(keyA), `{"records":[],"verdict":"fixed"}`) }, "is not a probe record"},
		{"too large", func(t *testing.T, r *Records) { write(t, r.path(keyA), strings.Repeat(" ", maxRecord+1)) }, "is larger than 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Records{Dir: filepath.Join(t.TempDir(), "probes")}
			probed(t, r, "a", gathered(keyA, "6.1.0", boot1), 1, 7)
			tc.setup(t, r)
			f := gathered(keyA, "6.1.0", boot1)
			err := r.Settle("a", f)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Settle: %v, want %q", err, tc.want)
			}
			if f.Probe != nil || f.EarlierProbe != nil {
				t.Fatalf("a refused record was used: %+v %+v", f.Probe, f.EarlierProbe)
			}
		})
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func chown(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
