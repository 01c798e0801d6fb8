package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
)

// manifestHost answers kaudit's manifest script with the lines a host's
// manifest script would print (after the marker), per host name.
type manifestHost map[string][]string

func (m manifestHost) Run(_ context.Context, t transport.Target, script []byte) (*transport.Output, error) {
	marker, ok := remote.ScriptMarker(script)
	if !ok || !bytes.Contains(script, []byte("# kaudit manifest script")) {
		return nil, errors.New("not the manifest script")
	}
	var b strings.Builder
	for _, l := range m[t.Name] {
		fmt.Fprintf(&b, "%s\t%s\n", marker, l)
	}
	return &transport.Output{Stdout: []byte(b.String())}, nil
}

func (manifestHost) Close() error { return nil }

// rollback --from-hosts after a power cut left a host's manifest empty:
// an error naming the host, the run and what kaudit left, exit
// NotApplied — never "nothing to roll back" with exit 0. A run that no
// host has is an error too (a plain one: exit 2, the command could not
// run as asked — a mistyped run ID or another inventory).
func TestRollbackFromHostsUntrustedManifest(t *testing.T) {
	const run = "20261201T123400Z-0000ab12"
	emptyManifest := []string{"manifest\tok\tpresent\t0", "stored\tok\tfile-0\t0", "stored\tok\tmanifest\t0",
		"owned\tok\t/etc/sysctl.d/99-kaudit.conf\t" + run, "done\tok\t-"}
	absent := []string{"manifest\tok\tabsent", "done\tok\t-"}
	for _, tc := range []struct {
		name      string
		hosts     manifestHost
		verdict   bool // NotApplied
		out, warn []string
		plain     string // a plain error holding this
	}{
		{"empty manifest", manifestHost{"broker-a": absent, "broker-b": emptyManifest}, true, nil,
			[]string{"broker-b: run " + run + ": /var/lib/kaudit/runs/" + run + "/manifest is empty (0 bytes): the run's backups cannot be trusted",
				"kaudit left /etc/sysctl.d/99-kaudit.conf (from run " + run + ")", "file-0 (0 bytes)"}, ""},
		{"no host has the run", manifestHost{"broker-a": absent, "broker-b": absent}, false, nil, nil,
			"no host of the inventory (2 read) has run " + run + " in /var/lib/kaudit/runs/" + run + ": nothing to roll back"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			c := Console{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Now: time.Now}
			hosts := []inventory.Host{{Name: "broker-a", Address: "192.0.2.1", User: "root"}, {Name: "broker-b", Address: "192.0.2.2", User: "root"}}
			err := rollbackRun(context.Background(), c, hosts, RollbackJob{RunID: run, JournalDir: t.TempDir(), FromHosts: true, Yes: true,
				Config: RollbackConfig{Runner: tc.hosts, Concurrency: 2, Timeout: 5 * time.Second, ConnectTimeout: time.Second}})
			var f *Failure
			if got := errors.As(err, &f) && f.Verdict == NotApplied; got != tc.verdict {
				t.Errorf("verdict: %v (NotApplied %v, want %v)", err, got, tc.verdict)
			}
			if tc.plain != "" {
				if err == nil || f != nil || !strings.Contains(err.Error(), tc.plain) {
					t.Errorf("error %v, want a plain one with %q", err, tc.plain)
				}
				if stdout.Len() > 0 {
					t.Errorf("stdout %q", stdout.String())
				}
				return
			}
			if strings.Contains(stdout.String(), "nothing to roll back") == tc.verdict {
				t.Errorf("stdout %q", stdout.String())
			}
			for _, w := range tc.out {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout %q lacks %q", stdout.String(), w)
				}
			}
			for _, w := range tc.warn {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q lacks %q", stderr.String(), w)
				}
			}
			if tc.verdict && (err == nil || !strings.Contains(err.Error(), "nothing rolled back")) {
				t.Errorf("error %v", err)
			}
		})
	}
}

// runsHost answers kaudit's runs script with the lines given per host.
type runsHost map[string][]string

func (m runsHost) Run(_ context.Context, t transport.Target, script []byte) (*transport.Output, error) {
	marker, ok := remote.ScriptMarker(script)
	if !ok || !bytes.Contains(script, []byte("# kaudit runs script")) {
		return nil, errors.New("not the runs script")
	}
	var b strings.Builder
	for _, l := range m[t.Name] {
		fmt.Fprintf(&b, "%s\t%s\n", marker, l)
	}
	return &transport.Output{Stdout: []byte(b.String())}, nil
}

func (runsHost) Close() error { return nil }

// rollback --list: the runs of the journal directory and of the hosts,
// one row per run and host, and each host's lease.
func TestListRuns(t *testing.T) {
	const run1, run2 = "20261201T120304Z-0000aa01", "20261201T130000Z-0000aa02"
	dir := t.TempDir()
	j := &remediate.Journal{RunID: run1, StartedAt: time.Date(2026, 12, 1, 12, 3, 4, 0, time.UTC), Hosts: []remediate.HostJournal{
		{Host: "broker-a", Status: remediate.StatusVerified, Runtime: []remediate.RuntimeValue{{Key: "net.core.somaxconn", Before: "128", After: "4096", Changed: remediate.ChangedYes}}},
		{Host: "broker-b", Status: remediate.StatusUnchanged, Runtime: []remediate.RuntimeValue{{Key: "net.core.somaxconn", Before: "128", After: "4096", Changed: remediate.ChangedNo}}},
	}}
	if err := j.Save(journalPath(dir, run1)); err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 12, 1, 13, 0, 1, 0, time.UTC).Unix()
	hosts := runsHost{
		"broker-a": {"run\tok\tmanifest\t" + run1, "done\tok\t-"},
		"broker-b": {fmt.Sprintf("lease\tok\tfound\t%s\talice@laptop\t4242\t99\t%d\t%d\t%d", run2, started, started+230, started+10), "run\tok\tpartial\t" + run2, "applying\tok\t" + run2, "done\tok\t-"},
	}
	var stdout, stderr bytes.Buffer
	c := Console{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Now: time.Now}
	inv := []inventory.Host{{Name: "broker-a", Address: "192.0.2.1", User: "root"}, {Name: "broker-b", Address: "192.0.2.2", User: "root"}}
	err := listRuns(context.Background(), c, inv, RollbackJob{List: true, JournalDir: dir,
		Config: RollbackConfig{Runner: hosts, Concurrency: 2, Timeout: 5 * time.Second, ConnectTimeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	got := stdout.String()
	t.Logf("\n%s", got)
	for _, want := range []string{
		run1 + "   2026-12-01 12:03:04  broker-a          verified                          backups\n",
		"                                                 broker-b          unchanged, changed nothing        -\n",
		run2 + "   2026-12-01 13:00:00  broker-b          -                                 manifest cannot be trusted, apply script running\n",
		"broker-b: being changed by run " + run2 + " (alice@laptop, since 13:00:01 UTC; live, expires 13:03:51 UTC)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no line %q", want)
		}
	}
}
