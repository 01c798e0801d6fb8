package remediate

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func sampleJournal() *Journal {
	start := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	return &Journal{
		RunID:      "20240102T030405Z-1a2b3c4d",
		StartedAt:  start,
		FinishedAt: start.Add(42 * time.Second),
		Hosts: []HostJournal{
			{
				Host:   "broker-1",
				Status: StatusVerified,
				Backups: []Backup{
					{Path: "/etc/sysctl.d/99-kaudit.conf", Existed: false},
					{Path: "/opt/kafka/config/server.properties", Existed: true, SHA256: strings.Repeat("ab", 32), Mode: "0640", Owner: "kafka:kafka",
						Stored: "/var/lib/kaudit/runs/20240102T030405Z-1a2b3c4d/opt/kafka/config/server.properties"},
				},
				Runtime: []RuntimeValue{{Kind: KindSysctl, Key: "net.core.somaxconn", Before: "128", After: "4096"}},
				Changes: []Change{{Host: "broker-1", Rules: []string{"somaxconn"}, Kind: KindSysctl, Target: "net.core.somaxconn", From: "128", To: "4096",
					Runtime: true, Persist: true, PersistPath: "/etc/sysctl.d/99-kaudit.conf", RestartRequired: true, Note: "a\nb"}},
			},
			{Host: "broker-2", Status: StatusRolledBack, Changes: []Change{}, Error: "verify: net.core.somaxconn reads 128, want 4096"},
		},
	}
}

func TestJournalRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	j := sampleJournal()
	if err := j.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := LoadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, j) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, j)
	}
	if got.Host("broker-2").Status != StatusRolledBack || got.Host("nope") != nil {
		t.Fatal("Host lookup")
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}

	// Overwrite in place: still atomic, no temporary file left behind.
	got.Hosts[0].Status = StatusRolledBack
	if err := got.Save(path); err != nil {
		t.Fatal(err)
	}
	again, err := LoadJournal(path)
	if err != nil || again.Hosts[0].Status != StatusRolledBack {
		t.Fatalf("after overwrite: %v %+v", err, again)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("files left in %s: %v", dir, entries)
	}
}

// A journal written before Change.Rules holds a change's rules as one
// string joined with "," under "rule": it still loads, the rules split.
func TestJournalLoadsTheOldRuleForm(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	old := `{"version": 1, "run_id": "20240102T030405Z-1a2b3c4d", "hosts": [{"host": "broker-1", "status": "verified",
	  "changes": [{"host": "broker-1", "rule": "listen-backlog-effective,somaxconn", "kind": "sysctl", "target": "net.core.somaxconn",
	    "from": "128", "to": "4096", "runtime": true, "persist": false},
	   {"host": "broker-1", "rules": ["swap-a", "swap-b"], "kind": "sysctl", "target": "vm.swappiness", "from": "60", "to": "1", "runtime": true, "persist": false}]}]}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := LoadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	cs := j.Hosts[0].Changes
	if len(cs) != 2 || !reflect.DeepEqual(cs[0].Rules, []string{"listen-backlog-effective", "somaxconn"}) || cs[0].To != "4096" || !cs[0].Runtime ||
		!reflect.DeepEqual(cs[1].Rules, []string{"swap-a", "swap-b"}) {
		t.Fatalf("changes %+v", cs)
	}
}

func TestJournalErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nope.json"), "no such file"},
		{"not json", write("bad.json", "{"), "bad.json"},
		{"future version", write("v2.json", `{"version":2,"run_id":"x"}`), "version 2"},
		{"path in run id", write("id.json", `{"version":1,"run_id":"../../etc"}`), "invalid run id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadJournal(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	j := sampleJournal()
	j.RunID = "a/b"
	if err := j.Save(filepath.Join(dir, "x.json")); err == nil {
		t.Fatal("saved a journal with a slash in its run id")
	}
	j = sampleJournal()
	if err := j.Save(filepath.Join(dir, "no-such-dir", "x.json")); err == nil {
		t.Fatal("saved into a missing directory")
	}
}

func TestNewRunID(t *testing.T) {
	now := time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	id := NewRunID(now)
	if !regexp.MustCompile(`^20240102T020405Z-[0-9a-f]{8}$`).MatchString(id) || !ValidRunID(id) {
		t.Fatalf("run id %q", id)
	}
	if NewRunID(now) == id {
		t.Fatal("two run ids in the same second are equal")
	}
}

// The ownership rules: a rollback may touch an item unless the run is
// known not to have changed it; an older journal's items (no Changed)
// are owned; a host owns something when any item is owned; a journal
// changed something when any host owns something; a load keeps the
// record.
func TestOwnership(t *testing.T) {
	b := func(c Changed) Backup { return Backup{Path: "/etc/x-" + string(c), Changed: c} }
	r := func(c Changed) RuntimeValue { return RuntimeValue{Key: "k." + string(c), Changed: c} }
	for _, tc := range []struct {
		name    string
		hj      HostJournal
		backups []int // indexes owned
		runtime []int
		owns    bool
	}{
		{"nothing recorded", HostJournal{}, nil, nil, false},
		{"stopped before writing (check failed, disk full, lease held)", HostJournal{Backups: []Backup{b(ChangedNo), b(ChangedNo)}, Runtime: []RuntimeValue{r(ChangedNo)}}, nil, nil, false},
		{"an older journal", HostJournal{Backups: []Backup{b(ChangedUnknown)}, Runtime: []RuntimeValue{r(ChangedUnknown)}}, []int{0}, []int{0}, true},
		{"failed at the second value", HostJournal{Backups: []Backup{b(ChangedNo)}, Runtime: []RuntimeValue{r(ChangedYes), r(ChangedMaybe), r(ChangedNo)}}, nil, []int{0, 1}, true},
		{"cut off while writing files", HostJournal{Backups: []Backup{b(ChangedYes), b(ChangedMaybe)}, Runtime: []RuntimeValue{r(ChangedYes)}}, []int{0, 1}, []int{0}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bs, bi, rs, ri := tc.hj.Owned()
			if !reflect.DeepEqual(bi, tc.backups) || !reflect.DeepEqual(ri, tc.runtime) {
				t.Errorf("owned backups %v runtime %v, want %v %v", bi, ri, tc.backups, tc.runtime)
			}
			for k, i := range bi {
				if bs[k] != tc.hj.Backups[i] {
					t.Errorf("backup %d: %+v, want %+v", k, bs[k], tc.hj.Backups[i])
				}
			}
			for k, i := range ri {
				if rs[k] != tc.hj.Runtime[i] {
					t.Errorf("runtime %d: %+v, want %+v", k, rs[k], tc.hj.Runtime[i])
				}
			}
			if got := tc.hj.Owns(); got != tc.owns {
				t.Errorf("Owns %v, want %v", got, tc.owns)
			}
			j := &Journal{RunID: "20240102T030405Z-1a2b3c4d", Hosts: []HostJournal{{Host: "other"}, tc.hj}}
			if got := j.ChangedAnything(); got != tc.owns {
				t.Errorf("ChangedAnything %v, want %v", got, tc.owns)
			}
			p := filepath.Join(t.TempDir(), "j.json")
			if err := j.Save(p); err != nil {
				t.Fatal(err)
			}
			back, err := LoadJournal(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := back.Hosts[1].Owns(); got != tc.owns {
				t.Errorf("after a load: Owns %v, want %v", got, tc.owns)
			}
		})
	}
	hj := HostJournal{Backups: []Backup{b(ChangedMaybe), b(ChangedMaybe)}, Runtime: []RuntimeValue{r(ChangedMaybe)}}
	hj.SetChanged([]Changed{ChangedYes, ChangedNo}, []Changed{ChangedNo})
	if hj.Backups[0].Changed != ChangedYes || hj.Backups[1].Changed != ChangedNo || hj.Runtime[0].Changed != ChangedNo {
		t.Errorf("SetChanged: %+v", hj)
	}
}

// A journal another user could write is refused, named, as OpenSSH
// refuses such a config: a file or directory writable by group or
// others, or owned by another user.
func TestLoadJournalInsecure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(dir, file string) error
		want  string
	}{
		{"private", func(string, string) error { return nil }, ""},
		{"file writable by others", func(_, f string) error { return os.Chmod(f, 0o666) }, "is writable by group or others (mode 0666)"},
		{"file writable by group", func(_, f string) error { return os.Chmod(f, 0o620) }, "is writable by group or others (mode 0620)"},
		{"directory writable by others", func(d, _ string) error { return os.Chmod(d, 0o777) }, "is writable by group or others (mode 0777)"},
		{"file of another user", func(_, f string) error {
			if os.Geteuid() != 0 {
				return errSkip
			}
			return os.Chown(f, 65534, 65534)
		}, "is owned by uid 65534, not by you"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "runs")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "20240102T030405Z-1a2b3c4d.json")
			if err := (&Journal{RunID: "20240102T030405Z-1a2b3c4d"}).Save(p); err != nil {
				t.Fatal(err)
			}
			if err := tc.spoil(dir, p); errors.Is(err, errSkip) {
				t.Skip("needs root to give the file away")
			} else if err != nil {
				t.Fatal(err)
			}
			_, err := LoadJournal(p)
			var insecure *InsecureError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("private journal: %v", err)
			case tc.want != "" && (!errors.As(err, &insecure) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "(hint: ")):
				t.Errorf("error %v, want an InsecureError saying %q with a hint", err, tc.want)
			}
		})
	}
}

var errSkip = errors.New("skip")
