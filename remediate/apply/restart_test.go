package apply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/rules"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
)

func TestRestartDecision(t *testing.T) {
	backlog := remediate.Change{Kind: remediate.KindKafkaProperty, Target: "socket.listen.backlog.size", To: "4096", RestartRequired: true}
	sysctl := remediate.Change{Kind: remediate.KindSysctl, Target: "net.ipv4.tcp_syncookies", To: "0"}
	unit := &facts.Facts{Kafka: &facts.Kafka{PID: 42, Unit: &facts.BrokerUnit{Name: "kafka.service", SystemdRuns: true}}}
	noSystemd := &facts.Facts{Kafka: &facts.Kafka{PID: 42, Unit: &facts.BrokerUnit{Name: "kafka.service"}}}
	shell := &facts.Facts{Kafka: &facts.Kafka{PID: 42}}
	for _, tc := range []struct {
		name      string
		f         *facts.Facts
		changes   []remediate.Change
		need      bool
		unit      string
		refusedIn string
	}{
		{"no change needs a restart", unit, []remediate.Change{sysctl}, false, "", ""},
		{"systemd unit", unit, []remediate.Change{sysctl, backlog}, true, "kafka.service", ""},
		{"not under systemd", shell, []remediate.Change{backlog}, true, "", "not a systemd service"},
		{"cgroup names a unit, systemd does not run", noSystemd, []remediate.Change{backlog}, true, "", "not a systemd service"},
		{"bad unit name", &facts.Facts{Kafka: &facts.Kafka{PID: 1, Unit: &facts.BrokerUnit{Name: "x; rm -rf /"}}}, []remediate.Change{backlog}, true, "", "not a systemd service"},
		{"no broker running", &facts.Facts{}, []remediate.Change{backlog}, true, "", "no running broker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			need, u, refused := RestartDecision(tc.f, tc.changes)
			if need != tc.need || u != tc.unit || (tc.refusedIn == "") != (refused == "") || !strings.Contains(refused, tc.refusedIn) {
				t.Errorf("got %v %q %q, want %v %q refused~%q", need, u, refused, tc.need, tc.unit, tc.refusedIn)
			}
		})
	}
}

func TestRestartWantsAndInForce(t *testing.T) {
	after := &facts.Facts{Sysctl: map[string]string{"net.core.somaxconn": "2048"},
		Kafka: &facts.Kafka{Version: "3.6.1", Distribution: "apache", Properties: map[string]string{"socket.listen.backlog.size": "4096"}}}
	b, n := restartWants(after, []remediate.Change{{Kind: remediate.KindUnitDropIn, To: "100000"}})
	if b != 2048 || n != "100000 100000" {
		t.Fatalf("wants %d %q, want 2048 and \"100000 100000\"", b, n)
	}
	for _, tc := range []struct {
		r    remediate.Restart
		ok   bool
		want string
	}{
		{remediate.Restart{Backlog: 2048, WantBacklog: 2048, NoFile: "100000 100000", WantNoFile: "100000 100000"}, true, ""},
		{remediate.Restart{Backlog: 50, WantBacklog: 2048}, false, "Send-Q) is 50 after the restart, want 2048"},
		{remediate.Restart{Backlog: 2048, WantBacklog: 2048, NoFile: "4096 4096", WantNoFile: "100000 100000"}, false, "open-files limit is \"4096 4096\""},
	} {
		r := tc.r
		r.CheckInForce()
		if r.InForce != tc.ok || !strings.Contains(r.Error, tc.want) {
			t.Errorf("%+v: in force %v %q, want %v ~%q", tc.r, r.InForce, r.Error, tc.ok, tc.want)
		}
	}
}

func TestWatchVerdict(t *testing.T) {
	before := remediate.Counters{SyncookiesSent: 10, TCPReqQFullDoCookies: 3, ListenOverflows: 0, ListenDrops: 0}
	storm := remediate.Counters{SyncookiesSent: 250, TCPReqQFullDoCookies: 240, ListenOverflows: 7, ListenDrops: 7}
	d := before.Delta(storm)
	if d != (remediate.Counters{SyncookiesSent: 240, TCPReqQFullDoCookies: 237, ListenOverflows: 7, ListenDrops: 7}) {
		t.Fatalf("delta %+v", d)
	}
	if v := remediate.WatchVerdict("b1", d, true); !strings.Contains(v, "b1: 240 SYN cookie(s) sent") || !strings.Contains(v, "wrong window scale") {
		t.Errorf("storm on an affected kernel: %q", v)
	}
	if v := remediate.WatchVerdict("b1", d, false); v != "" {
		t.Errorf("fixed kernel: %q, want none", v)
	}
	if v := remediate.WatchVerdict("b1", before.Delta(before), true); v != "" {
		t.Errorf("no cookies: %q, want none", v)
	}
	if d := before.Delta(remediate.Counters{SyncookiesSent: -1}); d.SyncookiesSent != -1 {
		t.Errorf("unknown counter: delta %d, want -1", d.SyncookiesSent)
	}
}

func TestParseRestart(t *testing.T) {
	ok := remote.Results{
		{Step: "counters", OK: true, Detail: []string{"10 3 - 0"}}, {Step: "oldpid", OK: true, Detail: []string{"100"}},
		{Step: "restart", OK: true, Detail: []string{"-"}}, {Step: "stopped", OK: true, Detail: []string{"4"}},
		{Step: "newpid", OK: true, Detail: []string{"200"}}, {Step: "listen", OK: true, Detail: []string{"2048"}},
		{Step: "nofile", OK: true, Detail: []string{"100000 unlimited"}}, {Step: "done", OK: true, Detail: []string{"-"}},
	}
	var r remediate.Restart
	if err := parseRestart("h1", ok, &r); err != nil {
		t.Fatal(err)
	}
	if r.OldPID != 100 || r.NewPID != 200 || r.Backlog != 2048 || r.NoFile != "100000 infinity" || *r.Before != (remediate.Counters{SyncookiesSent: 10, TCPReqQFullDoCookies: 3, ListenOverflows: -1}) {
		t.Errorf("parsed %+v before %+v", r, *r.Before)
	}
	stuck := append(remote.Results{}, ok[:4]...)
	stuck[3] = remote.Result{Step: "stopped", Detail: []string{"the old process 100 of kafka.service still runs after 600s"}}
	if err := parseRestart("h1", stuck, &remediate.Restart{}); err == nil || !strings.Contains(err.Error(), "still runs after 600s") {
		t.Errorf("stuck stop: %v", err)
	}
	if err := parseRestart("h1", ok[:5], &remediate.Restart{}); err == nil {
		t.Error("a script cut short parsed as done")
	}
	held, err := remote.ParseSteps([]byte(tMarker+"\tcounters\tok\t10 3 - 0\n"+tMarker+"\tlease\tfail\theld\t20260101T000000Z-0000000f\tbob@ops\t77\t123\t1767225600\t1767226200\n"), tMarker, "h1", restartWords)
	if err != nil {
		t.Fatal(err)
	}
	var he *HeldError
	if err := parseRestart("h1", held, &remediate.Restart{}); !errors.As(err, &he) || he.RunID != "20260101T000000Z-0000000f" || he.PID != 77 || !strings.Contains(err.Error(), "the broker not restarted") {
		t.Errorf("another run's lease: %v, want a HeldError naming the run and that nothing was restarted", err)
	}
}

func TestRestartScriptRefusesBadValues(t *testing.T) {
	good := RestartParams{Marker: tMarker, Unit: "kafka.service", Port: 9092, Wait: 600, RunID: tRun}
	if _, err := RestartScript(good); err != nil {
		t.Fatal(err)
	}
	for _, p := range []RestartParams{
		{Marker: tMarker, Unit: "kafka.service'; reboot; '", Port: 9092, Wait: 600, RunID: tRun},
		{Marker: tMarker, Unit: "kafka.service", Port: 0, Wait: 600, RunID: tRun},
		{Marker: tMarker, Unit: "kafka.service", Port: 9092, Wait: 0, RunID: tRun},
		{Marker: "x", Unit: "kafka.service", Port: 9092, Wait: 600, RunID: tRun},
	} {
		if _, err := RestartScript(p); err == nil {
			t.Errorf("%+v rendered", p)
		}
	}
}

// The counters mode reads this machine's /proc/net/netstat (read-only).
func TestRestartScriptCounters(t *testing.T) {
	s, err := RestartScript(RestartParams{Marker: tMarker, Unit: "kafka.service", Port: 9092, Wait: 1, CountersOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh")
	cmd.Stdin = strings.NewReader(string(s))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	rs := remote.ParseResults(out, tMarker)
	c, err := parseCounters(rs.Find("counters"))
	if err != nil || rs.Find("done") == nil {
		t.Fatalf("%v; output %q", err, out)
	}
	if c.ListenDrops < 0 || c.SyncookiesSent < 0 {
		t.Errorf("counters %+v: this kernel has them", c)
	}
}

// countersHost answers the restart script's counters mode with canned
// counters, per host.
type countersHost map[string]string

func (c countersHost) Run(_ context.Context, t transport.Target, script []byte) (*transport.Output, error) {
	m, _ := remote.ScriptMarker(script)
	if v, _ := remote.ScriptVar(script, "MODE"); v != "counters" {
		return nil, fmt.Errorf("unexpected script for %s", t.Name)
	}
	return &transport.Output{Stdout: []byte(m + "\tcounters\tok\t" + c[t.Name] + "\n" + m + "\tdone\tok\t-\n")}, nil
}

// TestWatchBetweenWaves: after a wave whose broker kaudit restarted, the
// gate after it runs first (the cluster healthy again), then the watch
// reads the counters, then the gate before the next wave; SYN cookies
// sent on a kernel that may have the bug stop the rollout before the next
// wave, critical; on a fixed kernel they are reported and the run goes on.
func TestWatchBetweenWaves(t *testing.T) {
	for _, tc := range []struct {
		name     string
		kernel   rules.Status
		stop     bool
		gateCall []string
	}{
		{"affected kernel: stop", rules.Fail, true, []string{"[a1]>[]"}},
		{"unknown kernel: stop", rules.Unknown, true, []string{"[a1]>[]"}},
		{"fixed kernel: go on", rules.Pass, false, []string{"[a1]>[]", "[]>[b1]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &gateLog{}
			ro := &Rollout{Gate: g.gate}
			before := remediate.Counters{SyncookiesSent: 10, TCPReqQFullDoCookies: 10, ListenOverflows: 1, ListenDrops: 1}
			rec := &journal{j: &remediate.Journal{Hosts: []remediate.HostJournal{{Host: "a1", Status: remediate.StatusVerified,
				Residual: &remediate.Residual{Kernel: tc.kernel},
				Restart:  &remediate.Restart{Unit: "kafka.service", At: time.Unix(0, 0), Before: &before, InForce: true}}}}, now: time.Now}
			opt := Options{Runner: countersHost{"a1": "130 125 9 9"}, Timeout: time.Second, Now: time.Now, Restart: &RestartOptions{Watch: time.Millisecond}}
			w := newWatcher(sbHosts("a1", "b1"), opt, rec)
			err := ro.between(context.Background(), []string{"a1"}, []string{"b1"}, w)
			var ge *GateError
			if tc.stop != (err != nil) || (err != nil && (!errors.As(err, &ge) || !strings.Contains(err.Error(), "CRITICAL: a1: 120 SYN cookie(s) sent"))) {
				t.Fatalf("between: %v, want stop %v", err, tc.stop)
			}
			if !reflect.DeepEqual(g.calls, tc.gateCall) {
				t.Errorf("gate calls %q, want %q", g.calls, tc.gateCall)
			}
			r := rec.j.Host("a1").Restart
			if r.Deltas == nil || *r.Deltas != (remediate.Counters{SyncookiesSent: 120, TCPReqQFullDoCookies: 115, ListenOverflows: 8, ListenDrops: 8}) {
				t.Errorf("deltas %+v", r.Deltas)
			}
			if (r.Critical != "") != tc.stop || rec.j.Host("a1").Failed() != tc.stop {
				t.Errorf("critical %q, failed %v", r.Critical, rec.j.Host("a1").Failed())
			}
			if w.pending([]string{"a1"}) {
				t.Error("a watched restart is still pending")
			}
		})
	}
}

// TestRestartRefusedInSandbox: with --restart, a verified host whose
// broker is not a systemd service (the sandbox's gather finds none) is
// not restarted: the journal and the log say so and give the manual step.
func TestRestartRefusedInSandbox(t *testing.T) {
	s := newSandbox(t, "h1")
	var log []string
	j, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: "20260101T000000Z-0000000b",
		Restart: &RestartOptions{Watch: time.Millisecond}, Log: func(l string) { log = append(log, l) }})
	if err != nil {
		t.Fatal(err)
	}
	hj := j.Host("h1")
	if hj.Status != remediate.StatusVerified || hj.Restart == nil || hj.Restart.Refused == "" || hj.Restart.NewPID != 0 || hj.Failed() {
		t.Fatalf("status %s restart %+v", hj.Status, hj.Restart)
	}
	if !strings.Contains(strings.Join(log, "\n"), "h1: broker restart required, NOT restarted: ") {
		t.Errorf("log:\n%s", strings.Join(log, "\n"))
	}
}

// TestUndoneRestarts: a rollback restarts the broker only for what it
// changed back of a change that needs a restart: the file of a Kafka
// property or a drop-in, the running value of a runtime sysctl (not its
// persisted file alone).
func TestUndoneRestarts(t *testing.T) {
	backlog := remediate.Change{Kind: remediate.KindKafkaProperty, Target: "socket.listen.backlog.size", Persist: true, PersistPath: "/opt/k/server.properties", RestartRequired: true}
	dropIn := remediate.Change{Kind: remediate.KindUnitDropIn, Target: "LimitNOFILE", Persist: true, PersistPath: "/etc/systemd/system/kafka.service.d/90-kaudit-nofile.conf", RestartRequired: true}
	somaxconn := remediate.Change{Kind: remediate.KindSysctl, Target: "net.core.somaxconn", Runtime: true, Persist: true, PersistPath: "/etc/sysctl.d/99-kaudit.conf", RestartRequired: true}
	rmem := remediate.Change{Kind: remediate.KindSysctl, Target: "net.ipv4.tcp_rmem", Runtime: true, Persist: true, PersistPath: "/etc/sysctl.d/99-kaudit.conf"}
	hj := remediate.HostJournal{Changes: []remediate.Change{backlog, dropIn, somaxconn, rmem}}
	for _, tc := range []struct {
		name   string
		undone []string
		want   []string
	}{
		{"nothing changed back", nil, nil},
		{"server.properties restored", []string{"/opt/k/server.properties"}, []string{"socket.listen.backlog.size"}},
		{"drop-in removed", []string{dropIn.PersistPath}, []string{"LimitNOFILE"}},
		{"somaxconn set back", []string{"net.core.somaxconn", "/etc/sysctl.d/99-kaudit.conf"}, []string{"net.core.somaxconn"}},
		{"only the sysctl file and tcp_rmem", []string{"/etc/sysctl.d/99-kaudit.conf", "net.ipv4.tcp_rmem"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range UndoneRestarts(hj, tc.undone) {
				got = append(got, c.Target)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("restart for %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRollbackRestart: rollback --restart decides per host from what its
// restore changed back: server.properties restored (the backlog change
// needs a restart) → a restart, refused here because the sandbox's
// broker is no systemd service (journalled, said, no failure);
// server.properties edited since the run (kept) → no restart. Without
// --restart the journal holds no restart.
func TestRollbackRestart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		restart bool
		edit    bool
		refused bool
	}{
		{"restored-refused-without-systemd", true, false, true},
		{"server.properties-kept-no-restart", true, true, false},
		{"no-restart-flag", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSandbox(t, "h1")
			j, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: "20260101T000000Z-0000000d"})
			if err != nil || j.Host("h1").Status != remediate.StatusVerified {
				t.Fatalf("apply: %v %+v", err, j.Host("h1"))
			}
			if tc.edit {
				s.write(t, "h1", sbProps, s.read("h1", sbProps)+"num.io.threads=16\n")
			}
			var log []string
			opt := Options{Runner: s, Log: func(l string) { log = append(log, l) }, Rollout: &Rollout{Waves: [][]string{{"h1"}}}}
			if tc.restart {
				opt.Restart = &RestartOptions{Watch: time.Millisecond}
			}
			res, err := Rollback(context.Background(), []inventory.Host{sbHosts("h1")[0].Inv}, j, opt)
			if err != nil || len(res) != 1 || res[0].Err != nil {
				t.Fatalf("rollback: %v %+v", err, res)
			}
			r := j.Host("h1").Restart
			if tc.refused != (r != nil) || (r != nil && (!strings.Contains(r.Refused, "not a systemd service") || r.NewPID != 0)) {
				t.Fatalf("restart %+v, want refused %v", r, tc.refused)
			}
			said := strings.Contains(strings.Join(log, "\n"), "h1: broker restart required, NOT restarted: ")
			if said != tc.refused || j.Host("h1").Status != remediate.StatusRolledBack {
				t.Errorf("refusal said %v, %s (%s); log:\n%s", said, j.Host("h1").Status, j.Host("h1").Error, strings.Join(log, "\n"))
			}
		})
	}
}

// unitSandbox is the sandbox whose gather finds the broker under
// kafka.service, and whose systemctl (first in PATH, never this
// machine's) refuses every command: the restart script runs, and stops
// at its first systemctl call.
// unitSandbox is a sandbox whose broker runs under kafka.service (the
// gather's broker-unit section added) and whose systemctl refuses;
// beforeRestart, when set, runs before each restart script.
type unitSandbox struct {
	*sandbox
	beforeRestart func()
}

func newUnitSandbox(t *testing.T, hosts ...string) unitSandbox {
	s := newSandbox(t, hosts...)
	for _, h := range hosts {
		s.write(t, h, "/bin/systemctl", "#!/bin/sh\necho 'sandbox: no systemd here' >&2\nexit 1\n")
		if err := os.Chmod(s.path(h, "/bin/systemctl"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return unitSandbox{sandbox: s}
}

func (u unitSandbox) Run(ctx context.Context, t transport.Target, script []byte) (*transport.Output, error) {
	if u.beforeRestart != nil && bytes.Contains(script, []byte("\nMODE='restart'\n")) {
		u.beforeRestart()
	}
	out, err := u.sandbox.Run(ctx, t, script)
	m := reGatherMarker.FindSubmatch(script)
	if err != nil || m == nil || bytes.HasPrefix(script, []byte("M='KAUDIT_")) {
		return out, err
	}
	mk := string(m[1])
	sec := mk + " begin broker-unit\npid=4242\ncgroup=0::/system.slice/kafka.service\nsystemd=yes\nunit=kafka.service\n\n" + mk + " end broker-unit ok\n"
	out.Stdout = bytes.Replace(out.Stdout, []byte(mk+" done\n"), []byte(sec+mk+" done\n"), 1)
	return out, nil
}

// TestRollbackRestartRuns: a broker under systemd is restarted after its
// rollback by the restart script, run under the rolled-back run's id
// (its lock names it): here the sandbox's systemctl refuses, so the
// restart fails, the host fails and says why.
func TestRollbackRestartRuns(t *testing.T) {
	s := newUnitSandbox(t, "h1")
	j, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s.sandbox, RunID: "20260101T000000Z-0000000e"})
	if err != nil || j.Host("h1").Status != remediate.StatusVerified {
		t.Fatalf("apply: %v %+v", err, j.Host("h1"))
	}
	res, err := Rollback(context.Background(), []inventory.Host{sbHosts("h1")[0].Inv}, j, Options{Runner: s, Rollout: &Rollout{Waves: [][]string{{"h1"}}},
		Restart: &RestartOptions{Timeout: 5 * time.Second, Watch: time.Millisecond}})
	if err != nil || len(res) != 1 {
		t.Fatalf("rollback: %v %+v", err, res)
	}
	hj := j.Host("h1")
	r := hj.Restart
	if r == nil || r.Unit != "kafka.service" || r.Refused != "" || !strings.Contains(r.Error, "cannot read the MainPID of kafka.service") {
		t.Fatalf("restart %+v: want kafka.service's restart tried by the script", r)
	}
	if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "rolled back, but the broker's restart after it: ") || hj.Status != remediate.StatusFailed {
		t.Errorf("result %+v, journal %s %q", res[0], hj.Status, hj.Error)
	}
	if got := s.read("h1", sbProps); strings.Contains(got, "socket.listen.backlog.size") {
		t.Errorf("server.properties not restored: %q", got)
	}
	if _, err := os.Stat(s.path("h1", KaudirDir+"/lease")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the run's lease is left on the host after rollback --restart (stat: %v)", err)
	}
}

// TestRestartRefusedWhileAnotherRunHoldsTheHost: a rollback holds no
// lease of its own, and between its restore and its restart another run
// may start changing the host (its lease taken, its change half made
// between two of its scripts). The restart then restarts nothing: the
// restart script finds the other run's live lease and says whose it is.
func TestRestartRefusedWhileAnotherRunHoldsTheHost(t *testing.T) {
	s := newUnitSandbox(t, "h1")
	j, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s.sandbox, RunID: "20260101T000000Z-0000000e"})
	if err != nil || j.Host("h1").Status != remediate.StatusVerified {
		t.Fatalf("apply: %v %+v", err, j.Host("h1"))
	}
	called := s.path("h1", "/systemctl-called")
	s.write(t, "h1", "/bin/systemctl", "#!/bin/sh\n: > "+called+"\nexit 1\n")
	other := "20260101T000000Z-0000000f"
	s.beforeRestart = func() {
		now := time.Now().Unix()
		s.write(t, "h1", KaudirDir+"/lease", other+"\tbob@ops\t77\t123\t"+itoa64(now)+"\t"+itoa64(now+600)+"\n")
	}
	res, err := Rollback(context.Background(), []inventory.Host{sbHosts("h1")[0].Inv}, j, Options{Runner: s, Rollout: &Rollout{Waves: [][]string{{"h1"}}},
		Restart: &RestartOptions{Timeout: 5 * time.Second, Watch: time.Millisecond}})
	if err != nil || len(res) != 1 {
		t.Fatalf("rollback: %v %+v", err, res)
	}
	r := j.Host("h1").Restart
	if r == nil || !strings.Contains(r.Error, "is being changed by run "+other) || !strings.Contains(r.Error, "the broker not restarted") {
		t.Fatalf("restart %+v: want it refused, naming run %s", r, other)
	}
	if _, err := os.Stat(called); !errors.Is(err, fs.ErrNotExist) {
		t.Error("systemctl ran while another run held the host")
	}
	if got := s.read("h1", KaudirDir+"/lease"); !strings.HasPrefix(got, other+"\t") {
		t.Errorf("the other run's lease was touched: %q", got)
	}
}
