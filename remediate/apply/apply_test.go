package apply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/simhost"
)

// sandbox is a transport.Runner that runs kaudit's apply, read and
// restore scripts with the local /bin/sh inside a per-host directory
// (every quoted absolute path is moved under it), and answers the gather
// script like a simulated host built from that directory's state. No
// root, no SSH: the orchestration is tested, the real hosts are in
// e2e_test.go.
type sandbox struct {
	root string
	mu   sync.Mutex
	// dropAfterApply: the connection "drops" after the apply script ran.
	dropAfterApply map[string]bool
	// stale: the gather reports the running values as they were.
	stale map[string]bool
	// orphanApply: the connection "drops" while the apply script runs,
	// once the script has created <host>/in-mv (see slowMvSandbox); the
	// script goes on running, as it does under a real sshd.
	orphanApply map[string]bool
	orphans     []*exec.Cmd
	applied     []string // hosts, in the order their apply scripts ran
}

const sbProps = "/opt/k/config/server.properties"

// fakeEthtool keeps a NIC's state in files under $SANDBOX_NIC/<iface>/.
const fakeEthtool = `#!/bin/sh
d="$SANDBOX_NIC/$2"
[ -d "$d" ] || { echo "netlink error: no device matches name ($2)" >&2; exit 1; }
case "$1" in
-g) printf 'Ring parameters for %s:\nPre-set maximums:\nRX:\t\t4096\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t4096\nCurrent hardware settings:\nRX:\t\t%s\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t%s\n' "$2" "$(cat "$d/rx")" "$(cat "$d/tx")" ;;
-k) printf 'Features for %s:\ntcp-segmentation-offload: %s\ngeneric-segmentation-offload: %s\ngeneric-receive-offload: %s\n' "$2" "$(cat "$d/tso")" "$(cat "$d/gso")" "$(cat "$d/gro")" ;;
-G|-K) printf '%s\n' "$4" > "$d/$3" ;;
*) exit 2 ;;
esac
`

var (
	reGatherMarker = regexp.MustCompile(`(?m)^M='([A-Za-z0-9_-]+)'$`)
	reSysctls      = regexp.MustCompile(`(?m)^SYSCTLS='([^']*)'$`)
)

func newSandbox(t *testing.T, hosts ...string) *sandbox {
	s := &sandbox{root: t.TempDir(), dropAfterApply: map[string]bool{}, stale: map[string]bool{}, orphanApply: map[string]bool{}}
	for _, h := range hosts {
		for p, v := range map[string]string{
			"/proc/sys/net/core/somaxconn":           "128\n",
			"/proc/sys/net/ipv4/tcp_max_syn_backlog": "256\n",
			"/proc/sys/net/ipv4/tcp_rmem":            "4096\t131072\t6291456\n",
			sbProps:                                  "# Broker config\nssl.keystore.password=s3cr3t\nlisteners=PLAINTEXT://:9092\n",
		} {
			s.write(t, h, p, v)
		}
		for _, d := range []string{"/etc/sysctl.d", "/etc/udev/rules.d"} {
			if err := os.MkdirAll(s.path(h, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for set, v := range map[string]string{"rx": "512", "tx": "512", "tso": "on", "gso": "on", "gro": "off"} {
			s.write(t, h, "/nic/eth0/"+set, v+"\n")
		}
		s.write(t, h, "/bin/ethtool", fakeEthtool)
		if err := os.Chmod(s.path(h, "/bin/ethtool"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// unsandboxLines is the manifest script's output with dir taken out of
// the paths of its manifest lines: the host's word as a real host would
// say it, comparable with the journal's paths (HostJournal.Reconcile).
func unsandboxLines(out []byte, dir string) []byte {
	lines := strings.SplitAfter(string(out), "\n")
	for i, l := range lines {
		if f := strings.SplitN(l, "\t", 3); len(f) == 3 && f[1] == "line" {
			lines[i] = strings.ReplaceAll(l, "\t"+dir+"/", "\t/")
		}
	}
	return []byte(strings.Join(lines, ""))
}

func (s *sandbox) path(host, p string) string { return filepath.Join(s.root, host, p) }

func (s *sandbox) write(t *testing.T, host, p, v string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(s.path(host, p)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.path(host, p), []byte(v), 0o640); err != nil {
		t.Fatal(err)
	}
}

func (s *sandbox) read(host, p string) string {
	b, err := os.ReadFile(s.path(host, p))
	if err != nil {
		return "<absent>"
	}
	return string(b)
}

func (s *sandbox) Run(ctx context.Context, t transport.Target, script []byte) (*transport.Output, error) {
	dir := filepath.Join(s.root, t.Name)
	if bytes.HasPrefix(script, []byte("M='KAUDIT_")) {
		// Quoted values, and the fields of the scripts' records (after a
		// tab, or first on a line).
		sc := strings.NewReplacer("'/", "'"+dir+"/", "\t/", "\t"+dir+"/", "\n/", "\n"+dir+"/").Replace(string(script))
		sc = strings.ReplaceAll(sc, dir+dir+"/", dir+"/") // a path the host printed (a rebuilt journal's) is there already
		isApply := bytes.Contains(script, []byte("# kaudit apply script:"))
		s.mu.Lock()
		orphan := isApply && s.orphanApply[t.Name]
		s.mu.Unlock()
		cmd := exec.CommandContext(ctx, "/bin/sh", "-s")
		if orphan {
			cmd = exec.Command("/bin/sh", "-s") // outlives this call
		}
		cmd.Stdin = strings.NewReader(sc)
		// The fake ethtool first, and never the machine's own (/usr/sbin, /sbin).
		cmd.Env = []string{"PATH=" + filepath.Join(dir, "bin") + ":/usr/bin:/bin", "SANDBOX_NIC=" + filepath.Join(dir, "nic"), "LANG=C"}
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if orphan {
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			s.mu.Lock()
			s.orphans = append(s.orphans, cmd)
			s.mu.Unlock()
			for i := 0; ; i++ {
				if _, err := os.Stat(filepath.Join(dir, "in-mv")); err == nil {
					break
				}
				if i >= 500 {
					return nil, errors.New("sandbox: the apply script never reached mv")
				}
				time.Sleep(20 * time.Millisecond)
			}
			return nil, transport.NoExitStatus(t.Step, nil)
		}
		if err := cmd.Run(); err != nil {
			return nil, err
		}
		out := &transport.Output{Stdout: o.Bytes(), Stderr: e.Bytes()}
		if bytes.Contains(script, []byte("# kaudit manifest script:")) {
			out.Stdout = unsandboxLines(out.Stdout, dir)
		}
		if isApply {
			s.mu.Lock()
			s.applied = append(s.applied, t.Name)
			drop := s.dropAfterApply[t.Name]
			s.mu.Unlock()
			if drop {
				return nil, &transport.Error{Kind: facts.KindUnreachable, Msg: "connection lost"}
			}
		}
		return out, nil
	}
	// The gather script: a simulated host with this directory's state.
	m := reGatherMarker.FindSubmatch(script)
	k := reSysctls.FindSubmatch(script)
	if m == nil || k == nil {
		return nil, errors.New("sandbox: not a gather script")
	}
	h := *simhost.DemoFleet()[2]
	h.Name = t.Name
	h.Sysctl = map[string]string{}
	for key, v := range simhost.DemoFleet()[2].Sysctl {
		h.Sysctl[key] = v
	}
	for _, key := range []string{"net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog", "net.ipv4.tcp_rmem"} {
		v := s.read(t.Name, procPath(key))
		if s.stale[t.Name] {
			v = map[string]string{"net.core.somaxconn": "128", "net.ipv4.tcp_max_syn_backlog": "256", "net.ipv4.tcp_rmem": "4096 131072 6291456"}[key]
		}
		h.Sysctl[key] = strings.Join(strings.Fields(v), " ")
	}
	var sf strings.Builder
	if c := s.read(t.Name, "/etc/sysctl.d/99-kaudit.conf"); c != "<absent>" {
		sf.WriteString("@file /etc/sysctl.d/99-kaudit.conf\n")
		for i, line := range strings.Split(strings.TrimSuffix(c, "\n"), "\n") {
			fmt.Fprintf(&sf, "%d:%s\n", i+1, line)
		}
	}
	h.SysctlFiles = sf.String()
	kf := *h.Kafka
	kf.Config = sbProps
	var body strings.Builder
	for i, line := range strings.Split(s.read(t.Name, sbProps), "\n") {
		if strings.HasPrefix(line, "socket.") || strings.HasPrefix(line, "listeners") {
			fmt.Fprintf(&body, "%d:%s\n", i+1, line)
		}
	}
	kf.ConfigBody = body.String()
	h.Kafka = &kf
	nic := func(set string) string { return strings.TrimSpace(s.read(t.Name, "/nic/eth0/"+set)) }
	rx, _ := strconv.Atoi(nic("rx"))
	tx, _ := strconv.Atoi(nic("tx"))
	h.NICs = []simhost.NIC{{Name: "eth0", Driver: "ixgbe", Ring: simhost.RingIoctl("eth0", 4096, 4096, rx, tx), Features: simhost.Features("eth0", nic("tso"), nic("gso"), nic("gro"))}}
	return &transport.Output{Stdout: []byte(h.Render(string(m[1]), string(k[1])))}, nil
}

func sbPlan(host string) remediate.HostPlan {
	return remediate.HostPlan{Host: host, Changes: []remediate.Change{
		{Host: host, Rules: []string{"kafka-backlog-config"}, Kind: remediate.KindKafkaProperty, Target: "socket.listen.backlog.size", To: "4096", Persist: true, PersistPath: sbProps, RestartRequired: true},
		{Host: host, Rules: []string{"somaxconn"}, Kind: remediate.KindSysctl, Target: "net.core.somaxconn", From: "128", To: "4096", Runtime: true, Persist: true, PersistPath: "/etc/sysctl.d/99-kaudit.conf"},
		{Host: host, Rules: []string{"socket-buffers"}, Kind: remediate.KindSysctl, Target: "net.ipv4.tcp_rmem", From: "4096 131072 6291456", To: "4096 87380 134217728", Runtime: true, Persist: true, PersistPath: "/etc/sysctl.d/99-kaudit.conf"},
		{Host: host, Rules: []string{"nic-ring"}, Kind: remediate.KindNICRing, Target: "eth0 rx", From: "512", To: "4096", Runtime: true, Persist: true, PersistPath: remediate.NICPersistPath},
		{Host: host, Rules: []string{"nic-offload"}, Kind: remediate.KindNICOffload, Target: "eth0 gro", From: "off", To: "on", Runtime: true, Persist: true, PersistPath: remediate.NICPersistPath},
	}}
}

func sbHosts(names ...string) []Host {
	var out []Host
	for _, n := range names {
		out = append(out, Host{Inv: inventory.Host{Name: n, Address: "192.0.2.1", User: "root", KafkaPort: 9092},
			Findings: []rules.Finding{{Rule: rules.RuleKernelSynackWscale, Status: rules.Pass}}, Plan: sbPlan(n)})
	}
	return out
}

func snapshot(s *sandbox, host string) string {
	var b strings.Builder
	for _, p := range []string{"/proc/sys/net/core/somaxconn", "/proc/sys/net/ipv4/tcp_rmem", "/proc/sys/net/ipv4/tcp_max_syn_backlog", sbProps, "/etc/sysctl.d/99-kaudit.conf",
		"/nic/eth0/rx", "/nic/eth0/tx", "/nic/eth0/gro", remediate.NICPersistPath} {
		v := s.read(host, p)
		if strings.HasPrefix(p, "/proc/sys/") { // the kernel prints tabs, takes spaces
			v = strings.Join(strings.Fields(v), " ")
		}
		fmt.Fprintf(&b, "%s: %q\n", p, v)
	}
	return b.String()
}

func TestApplyRollbackSandbox(t *testing.T) {
	s := newSandbox(t, "h1", "h2")
	before := map[string]string{"h1": snapshot(s, "h1"), "h2": snapshot(s, "h2")}
	jpath := filepath.Join(t.TempDir(), "run.json")
	var log []string
	j, err := Apply(context.Background(), sbHosts("h1", "h2"), Options{Runner: s, RunID: "20260101T000000Z-00000001", JournalPath: jpath,
		Log: func(l string) { log = append(log, l) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"h1", "h2"} {
		hj := j.Host(n)
		if hj.Status != remediate.StatusVerified || len(hj.Changes) != 5 || len(hj.Backups) != 3 || len(hj.Runtime) != 4 {
			t.Fatalf("%s: %+v\nlog: %s", n, hj, strings.Join(log, "\n"))
		}
		if got := s.read(n, "/proc/sys/net/ipv4/tcp_rmem"); got != "4096 87380 134217728\n" {
			t.Errorf("%s tcp_rmem %q", n, got)
		}
		if got := s.read(n, "/nic/eth0/rx") + s.read(n, "/nic/eth0/gro"); got != "4096\non\n" {
			t.Errorf("%s NIC rx, gro: %q", n, got)
		}
		wantRules := "# Managed by kaudit — do not edit by hand; changes are overwritten by 'kaudit fix'.\n# Last run: 20260101T000000Z-00000001\n" +
			"ACTION==\"add\", SUBSYSTEM==\"net\", KERNEL==\"eth0\", RUN+=\"" + s.path(n, "/bin/ethtool") + " -K eth0 gro on\"\n" +
			"ACTION==\"add\", SUBSYSTEM==\"net\", KERNEL==\"eth0\", RUN+=\"" + s.path(n, "/bin/ethtool") + " -G eth0 rx 4096\"\n"
		if got := s.read(n, remediate.NICPersistPath); got != wantRules {
			t.Errorf("%s udev rules:\n%s\nwant\n%s", n, got, wantRules)
		}
		if got := s.read(n, sbProps); got != "# Broker config\nssl.keystore.password=s3cr3t\nlisteners=PLAINTEXT://:9092\n# added by kaudit fix, run 20260101T000000Z-00000001\nsocket.listen.backlog.size=4096\n" {
			t.Errorf("%s server.properties %q", n, got)
		}
		if got := s.read(n, remediate.HostRunsDir+"/20260101T000000Z-00000001/file-0"); !strings.HasPrefix(got, "# Broker config\n") {
			t.Errorf("%s backup %q", n, got)
		}
		fi, err := os.Stat(s.path(n, sbProps))
		if err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: mode of the edited file %v %v, want 0640 kept", n, fi.Mode(), err)
		}
	}
	raw, _ := os.ReadFile(jpath)
	if bytes.Contains(raw, []byte("s3cr3t")) || strings.Contains(strings.Join(log, "\n"), "s3cr3t") {
		t.Error("properties content in the journal or the log")
	}
	if s.applied[0] != "h1" {
		t.Errorf("apply order %v", s.applied)
	}

	// A second run finds nothing to do.
	clock := time.Date(2026, 1, 1, 0, 0, 7, 500, time.UTC)
	j2, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: "20260101T000000Z-00000002", Now: func() time.Time { return clock }})
	if err != nil || j2.Host("h1").Status != remediate.StatusUnchanged || len(s.applied) != 2 {
		t.Errorf("second apply: %+v %v (apply scripts run: %v)", j2.Host("h1"), err, s.applied)
	}
	if want := clock.Truncate(time.Second); err == nil && (!j2.StartedAt.Equal(want) || !j2.FinishedAt.Equal(want)) {
		t.Errorf("journal times %v .. %v, want both %v (Options.Now)", j2.StartedAt, j2.FinishedAt, want)
	}

	loaded, err := remediate.LoadJournal(jpath)
	if err != nil {
		t.Fatal(err)
	}
	inv := []inventory.Host{sbHosts("h1")[0].Inv, sbHosts("h2")[0].Inv}
	res, err := Rollback(context.Background(), inv, loaded, Options{Runner: s, JournalPath: jpath})
	if err != nil || len(res) != 2 || res[0].Err != nil || res[1].Err != nil {
		t.Fatalf("rollback: %+v %v", res, err)
	}
	for _, n := range []string{"h1", "h2"} {
		if got := snapshot(s, n); got != before[n] {
			t.Errorf("%s after rollback:\n%s\nwant\n%s", n, got, before[n])
		}
	}
	if res[0].Detail != "5 restored, 2 removed" {
		t.Errorf("rollback detail %q", res[0].Detail)
	}
	res, _ = Rollback(context.Background(), inv, loaded, Options{Runner: s})
	if res[0].Err != nil || res[0].Detail != "7 unchanged" {
		t.Errorf("second rollback: %+v", res[0])
	}
}

func TestCanaryFailureStopsAndRestores(t *testing.T) {
	s := newSandbox(t, "h1", "h2", "h3")
	s.dropAfterApply["h1"] = true
	before := snapshot(s, "h1")
	j, err := Apply(context.Background(), sbHosts("h1", "h2", "h3"), Options{Runner: s, RunID: "20260101T000000Z-00000003", Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if hj := j.Host("h1"); hj.Status != remediate.StatusRolledBack || !strings.Contains(hj.Error, "connection lost") {
		t.Errorf("canary: %s %q", hj.Status, hj.Error)
	}
	if got := snapshot(s, "h1"); got != before {
		t.Errorf("canary not restored:\n%s", got)
	}
	for _, n := range []string{"h2", "h3"} {
		if hj := j.Host(n); hj.Status != remediate.StatusUnchanged || !strings.Contains(hj.Error, "not started") {
			t.Errorf("%s: %s %q", n, hj.Status, hj.Error)
		}
	}
	if len(s.applied) != 1 {
		t.Errorf("apply scripts ran on %v", s.applied)
	}

	// --max-failures 1: the next batch (h2 and h3 together) goes.
	j, _ = Apply(context.Background(), sbHosts("h1", "h2", "h3"), Options{Runner: s, RunID: "20260101T000000Z-00000004", Batch: 2, MaxFailures: 1})
	if j.Host("h2").Status != remediate.StatusVerified || j.Host("h3").Status != remediate.StatusVerified {
		t.Errorf("h2 %s, h3 %s", j.Host("h2").Status, j.Host("h3").Status)
	}
}

func TestVerifyFailureRestores(t *testing.T) {
	s := newSandbox(t, "h1")
	s.stale["h1"] = true
	before := snapshot(s, "h1")
	j, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: "20260101T000000Z-00000005"})
	if err != nil {
		t.Fatal(err)
	}
	hj := j.Host("h1")
	if hj.Status != remediate.StatusRolledBack || !strings.Contains(hj.Error, "verification failed: net.core.somaxconn is \"128\" at runtime") {
		t.Errorf("%s %q", hj.Status, hj.Error)
	}
	if got := snapshot(s, "h1"); got != before {
		t.Errorf("not restored:\n%s\nwant\n%s", got, before)
	}
}

func TestChangedSinceReadRefused(t *testing.T) {
	s := newSandbox(t, "h1")
	h := sbHosts("h1")[0]
	changes, _ := Split(h.Plan, h.Findings)
	files, keys, nics := filesOf(changes)
	st, err := read(context.Background(), Options{Runner: s, Timeout: 10e9}, h.Inv, files, keys, nics, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := prepare("20260101T000000Z-00000006", changes, st)
	if err != nil {
		t.Fatal(err)
	}
	grantLease(t, s, "h1", "20260101T000000Z-00000006")
	// Someone edits server.properties between the read and the apply.
	s.write(t, "h1", sbProps, "changed=1\n")
	before := snapshot(s, "h1")
	p.params.Marker = NewMarker()
	script, err := ApplyScript(p.params)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(context.Background(), transport.Target{Name: "h1"}, script)
	if err != nil {
		t.Fatal(err)
	}
	rs := remote.ParseResults(out.Stdout, p.params.Marker)
	f := rs.FirstFailure()
	if f == nil || f.Step != "check-file-0" || changedAnything(rs, f.Step, p.params.ChangeSteps()) {
		t.Errorf("results %+v", rs)
	}
	if got := snapshot(s, "h1"); got != before {
		t.Errorf("changed:\n%s", got)
	}
}

func TestJournalFromHosts(t *testing.T) {
	s := newSandbox(t, "h1", "h2")
	before := snapshot(s, "h1")
	const id = "20260101T000000Z-00000007"
	local, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	inv := []inventory.Host{sbHosts("h1")[0].Inv, sbHosts("h2")[0].Inv}
	j, unread, err := JournalFromHosts(context.Background(), inv, id, Options{Runner: s})
	if err != nil || len(unread) != 0 {
		t.Fatalf("%v %+v", err, unread)
	}
	if len(j.Hosts) != 1 || j.Hosts[0].Host != "h1" || len(j.Hosts[0].Backups) != 3 || len(j.Hosts[0].Runtime) != 4 {
		t.Fatalf("rebuilt journal: %+v", j.Hosts)
	}
	// The manifest holds the hash of each file after writing, as the
	// local journal does.
	for i, b := range j.Hosts[0].Backups {
		if want := local.Host("h1").Backups[i].Written; b.Written != want || want == "" {
			t.Errorf("%s: rebuilt written_sha256 %q, local journal %q", b.Path, b.Written, want)
		}
	}
	res, err := Rollback(context.Background(), inv, j, Options{Runner: s})
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("%+v %v", res, err)
	}
	if got := snapshot(s, "h1"); got != before {
		t.Errorf("after rollback from the manifest:\n%s\nwant\n%s", got, before)
	}
	// A forged manifest is refused before any restore.
	s.write(t, "h2", RunDir(id)+"/manifest", "file\tfile-0\tpresent\t"+strings.Repeat("a", 64)+"\t/etc/$(reboot)\n")
	_, unread, _ = JournalFromHosts(context.Background(), inv[1:], id, Options{Runner: s})
	if len(unread) != 1 {
		t.Errorf("forged manifest accepted: %+v", unread)
	}
	// An ended context reads no host, and says so for each one.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	j, unread, _ = JournalFromHosts(ended, inv, id, Options{Runner: s})
	runs, _, unreadRuns := HostRuns(ended, inv, Options{Runner: s})
	if len(j.Hosts) != 0 || len(unread) != 2 || len(runs) != 0 || len(unreadRuns) != 2 {
		t.Errorf("ended context: rebuilt %d host(s), %d unread; listed %d run(s), %d unread; want 0, 2, 0, 2", len(j.Hosts), len(unread), len(runs), len(unreadRuns))
	}
	for _, u := range append(unread, unreadRuns...) {
		if !errors.Is(u.Err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", u.Host, u.Err)
		}
	}
}

// slowMvSandbox puts an mv in front of the host's PATH that, while
// <host>/slow-mv exists, removes it, creates <host>/in-mv and waits
// until the test creates <host>/release-mv (60 s at most) first (so only
// the first mv of a file is held: the first of step 4, after the running
// values are set; the run's manifest is renamed into place in step 2
// already). Waiting on the test, not on a clock, keeps the test's
// outcome the same on a loaded machine.
func slowMvSandbox(t *testing.T, s *sandbox, host string) {
	t.Helper()
	real := "/usr/bin/mv"
	if _, err := os.Stat(real); err != nil {
		real = "/bin/mv"
	}
	s.write(t, host, "/bin/mv", fmt.Sprintf("#!/bin/sh\ncase \"$*\" in */manifest) ;; *) if [ -e '%s' ]; then rm -f '%s'; : > '%s'; i=0; while [ ! -e '%s' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; fi ;; esac\nexec %s \"$@\"\n",
		s.path(host, "/slow-mv"), s.path(host, "/slow-mv"), s.path(host, "/in-mv"), s.path(host, "/release-mv"), real))
	if err := os.Chmod(s.path(host, "/bin/mv"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.write(t, host, "/slow-mv", "")
}

// The connection drops while the apply script is replacing a file, and
// the script goes on on the host (sshd does not kill it). The restore
// must not run beside it: it waits for it (here 5 s, half of the apply's Timeout),
// and as the script is still held in its mv it restores nothing and the host is
// journalled failed — before the fix it was journalled rolled-back and
// the orphaned script's mv then left server.properties changed. Once the
// script has ended, Rollback restores everything; a second one changes
// nothing.
func TestRestoreWaitsForOrphanedApply(t *testing.T) {
	s := newSandbox(t, "h1")
	slowMvSandbox(t, s, "h1")
	s.orphanApply["h1"] = true
	t.Cleanup(func() {
		for _, c := range s.orphans {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	})
	before := snapshot(s, "h1")
	hosts := sbHosts("h1")
	j, err := Apply(context.Background(), hosts, Options{Runner: s, RunID: "20260101T000000Z-00000009", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	hj := j.Host("h1")
	t.Logf("h1: %s %q", hj.Status, hj.Error)
	if hj.Status != remediate.StatusFailed || !strings.Contains(hj.Error, "still running on the host") ||
		!strings.Contains(hj.Error, "during the apply script") || !strings.Contains(hj.Error, "kaudit rollback --run") {
		t.Errorf("h1: %s %q", hj.Status, hj.Error)
	}
	// The orphaned script ends (its mv, then the rest of the script).
	s.write(t, "h1", "/release-mv", "")
	for _, c := range s.orphans {
		if err := c.Wait(); err != nil {
			t.Errorf("orphaned apply script: %v", err)
		}
	}
	s.orphans = nil
	if got := snapshot(s, "h1"); got == before {
		t.Fatal("the orphaned apply script changed nothing: the test does not test anything")
	}
	for i := 0; i < 2; i++ {
		res, err := Rollback(context.Background(), []inventory.Host{hosts[0].Inv}, j, Options{Runner: s, Timeout: time.Minute})
		if err != nil || len(res) != 1 || res[0].Err != nil {
			t.Fatalf("rollback %d: %+v %v", i, res, err)
		}
		t.Logf("rollback %d: %s", i, res[0].Detail)
		if i == 1 && (strings.Contains(res[0].Detail, "restored") || strings.Contains(res[0].Detail, "removed")) {
			t.Errorf("second rollback: %s", res[0].Detail)
		}
		if got := snapshot(s, "h1"); got != before {
			t.Errorf("after rollback %d:\n%s\nwant\n%s", i, got, before)
		}
	}
	if s := j.Host("h1").Status; s != remediate.StatusRolledBack {
		t.Errorf("journal after rollback: %s", s)
	}
}

// The restore's wait for the run's apply script is the host lock: while
// this run's apply script holds it (its holder record names an apply
// script, the lease names the run), the restore waits Wait seconds, then
// restores nothing (apply-running); another script holding it fails step
// lock, naming it; a record left by a holder that is gone holds nothing
// up, and neither does the apply.owner an older kaudit left.
func TestRollbackWaitsForItsApply(t *testing.T) {
	s := newSandbox(t, "h1")
	grantLease(t, s, "h1", tRun)
	holder := func(script string) (done chan struct{}) {
		var h header
		h.set("M", tMarker)
		h.lock(tRun, Lease{})
		sc, err := h.script("hold " + script + "\nsay holding ok -\nsleep 3\n")
		if err != nil {
			t.Fatal(err)
		}
		done = make(chan struct{})
		go func() { defer close(done); _, _ = s.Run(context.Background(), transport.Target{Name: "h1"}, sc) }()
		for i := 0; i < 200; i++ {
			if b, _ := os.ReadFile(s.path("h1", KaudirDir+"/lock")); strings.Contains(string(b), " "+strings.Fields(script)[0]) {
				return done
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("%s never took the lock", script)
		return nil
	}
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock: the lock directory's holder is TestLockDirFallback's")
	}
	for _, tc := range []struct{ name, holder, record, owner, want string }{
		{name: "its apply script runs", holder: "apply mine", want: "apply-running fail the apply script of this run (pid"},
		{name: "another script", holder: "restart free", want: "lock fail another kaudit script has held"},
		{name: "a holder that is gone", record: "999999999 5 apply\n", want: "done ok ok"},
		{name: "an older kaudit's apply.owner", record: "999999999 5\n", owner: "999999999 5\n", want: "cleaned ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var done chan struct{}
			if tc.holder != "" {
				done = holder(tc.holder)
			} else {
				s.write(t, "h1", KaudirDir+"/lock", tc.record)
			}
			if tc.owner != "" {
				s.write(t, "h1", RunDir(tRun)+"/apply.owner", tc.owner)
			}
			script, err := RollbackScript(RollbackParams{Marker: tMarker, RunID: tRun, Wait: 1,
				Runtime: []remediate.RuntimeValue{{Kind: remediate.KindSysctl, Key: "net.core.somaxconn", Before: "128", After: "4096"}}})
			if err != nil {
				t.Fatal(err)
			}
			out, err := s.Run(context.Background(), transport.Target{Name: "h1"}, script)
			if err != nil {
				t.Fatal(err)
			}
			if done != nil {
				<-done
			}
			var got []string
			for _, r := range remote.ParseResults(out.Stdout, tMarker) {
				got = append(got, r.Step+" "+map[bool]string{true: "ok", false: "fail"}[r.OK]+" "+strings.Join(r.Detail, " "))
			}
			all := strings.Join(got, "\n")
			t.Logf("%s", all)
			if !strings.Contains(all, tc.want) {
				t.Errorf("want %q in\n%s", tc.want, all)
			}
			if strings.Contains(tc.want, "fail") && strings.Contains(all, "restore-") {
				t.Error("restored beside a script that holds the host")
			}
			if _, err := os.Stat(s.path("h1", RunDir(tRun)+"/apply.owner")); !os.IsNotExist(err) {
				t.Errorf("apply.owner left (%v)", err)
			}
		})
	}
}

// A file and a running value changed after the run are kept by a
// rollback (and said so), everything else is restored; Force overwrites
// them. The journal holds the hash each file had after writing.
func TestRollbackKeepsLaterEdits(t *testing.T) {
	s := newSandbox(t, "h1")
	before := snapshot(s, "h1")
	jpath := filepath.Join(t.TempDir(), "run.json")
	const run = "20260101T000000Z-0000000a"
	j, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: run, JournalPath: jpath})
	if err != nil || j.Host("h1").Status != remediate.StatusVerified {
		t.Fatalf("apply: %+v %v", j.Host("h1"), err)
	}
	for _, b := range j.Host("h1").Backups {
		if got := SHA256([]byte(s.read("h1", b.Path))); b.Written != got {
			t.Errorf("%s: journal written_sha256 %q, file has %s", b.Path, b.Written, got)
		}
	}
	// After the run: someone edits the managed sysctl file and sets
	// somaxconn by hand.
	edited := "net.core.somaxconn = 8192\n"
	s.write(t, "h1", "/etc/sysctl.d/99-kaudit.conf", edited)
	s.write(t, "h1", "/proc/sys/net/core/somaxconn", "8192\n")
	loaded, err := remediate.LoadJournal(jpath)
	if err != nil {
		t.Fatal(err)
	}
	inv := []inventory.Host{sbHosts("h1")[0].Inv}
	res, err := Rollback(context.Background(), inv, loaded, Options{Runner: s, JournalPath: jpath})
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("rollback: %+v %v", res, err)
	}
	if res[0].Detail != "4 restored, 1 removed, 2 kept" || len(res[0].Kept) != 2 ||
		!strings.Contains(res[0].Kept[0], "/etc/sysctl.d/99-kaudit.conf changed since run "+run) ||
		!strings.Contains(res[0].Kept[1], "net.core.somaxconn is 8192, not the 4096 run "+run+" set") ||
		!strings.Contains(res[0].Kept[0], "--force") {
		t.Errorf("rollback: %q kept %q", res[0].Detail, res[0].Kept)
	}
	if got := s.read("h1", "/etc/sysctl.d/99-kaudit.conf"); got != edited {
		t.Errorf("edited file overwritten: %q", got)
	}
	if got := strings.TrimSpace(s.read("h1", "/proc/sys/net/core/somaxconn")); got != "8192" {
		t.Errorf("hand-set somaxconn overwritten: %q", got)
	}
	if got := s.read("h1", sbProps); !strings.HasPrefix(got, "# Broker config\n") || strings.Contains(got, "kaudit") {
		t.Errorf("server.properties not restored: %q", got)
	}
	res, _ = Rollback(context.Background(), inv, loaded, Options{Runner: s, Force: true})
	if res[0].Err != nil || res[0].Detail != "1 restored, 1 removed, 5 unchanged" {
		t.Errorf("rollback --force: %+v", res[0])
	}
	if got := snapshot(s, "h1"); got != before {
		t.Errorf("after rollback --force:\n%s\nwant\n%s", got, before)
	}
}

// The atomic replace keeps the replaced file's extended attributes (as it
// would its SELinux context, security.selinux, where SELinux is on), mode
// and owner; so does the restore. Tested with a user xattr.
func TestReplaceKeepsXattrs(t *testing.T) {
	s := newSandbox(t, "h1")
	p := s.path("h1", sbProps)
	if err := syscall.Setxattr(p, "user.kaudit-test", []byte("ctx-1"), 0); err != nil {
		t.Skipf("no user xattrs on %s: %v", p, err)
	}
	get := func() string {
		buf := make([]byte, 64)
		n, err := syscall.Getxattr(p, "user.kaudit-test", buf)
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(buf[:n])
	}
	j, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: "20260101T000000Z-0000000b"})
	if err != nil || j.Host("h1").Status != remediate.StatusVerified {
		t.Fatalf("apply: %+v %v", j.Host("h1"), err)
	}
	if !strings.Contains(s.read("h1", sbProps), "socket.listen.backlog.size=4096") {
		t.Fatal("server.properties not edited")
	}
	if got := get(); got != "ctx-1" {
		t.Errorf("xattr after the replace: %q, want ctx-1", got)
	}
	res, err := Rollback(context.Background(), []inventory.Host{sbHosts("h1")[0].Inv}, j, Options{Runner: s})
	if err != nil || res[0].Err != nil {
		t.Fatalf("rollback: %+v %v", res, err)
	}
	if got := get(); got != "ctx-1" {
		t.Errorf("xattr after the restore: %q, want ctx-1", got)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after the restore: %v %v, want 0640", fi.Mode(), err)
	}
}
