package rules

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// failingValue is a value of c's sysctl (cur: the compliant one) that fails c.
func failingValue(c SysctlCheck, cur string, p Profile) string {
	n, str, _ := c.target(p)
	var v string
	switch c.Op {
	case OpAtLeast:
		v = strconv.Itoa(n - 1)
	case OpAtMost:
		v = strconv.Itoa(n + 1)
	default:
		v = str + "x"
	}
	if c.Field == 0 {
		return v
	}
	f := strings.Fields(cur)
	f[c.Field-1] = v
	return strings.Join(f, " ")
}

// TestFailingSeverities: every failing path of every catalog check —
// each check item failed alone — fails with the catalog's severity, a
// fix for exactly that key, and the direction of the check.
func TestFailingSeverities(t *testing.T) {
	p := DefaultProfile()
	for _, r := range Catalog() {
		if r.Check == nil {
			continue
		}
		for _, c := range r.Check.Sysctls {
			t.Run(r.ID+"/"+c.Key, func(t *testing.T) {
				f := compliantHost()
				f.Sysctl[c.Key] = failingValue(c, f.Sysctl[c.Key], p)
				fd := find(t, Evaluate(f, p), r.ID)
				if fd.Status != Fail || fd.Severity != r.Severity {
					t.Fatalf("%s=%s: %s/%s, want fail/%s (the catalog's): %s", c.Key, f.Sysctl[c.Key], fd.Status, fd.Severity, r.Severity, fd.Reason)
				}
				if fd.Fix == nil || len(fd.Fix.Sysctl) != 1 || fd.Fix.Sysctl[c.Key] == "" {
					t.Fatalf("fix %+v, want one for %s", fd.Fix, c.Key)
				}
				if got := fd.Fix.BoundOf(c.Key); got != c.bound() {
					t.Errorf("fix bound %+v, want %+v", got, c.bound())
				}
				if ok, err := c.ok(fd.Fix.Sysctl[c.Key], p); !ok || err != nil {
					t.Errorf("the fix's value %q does not meet the check (%v)", fd.Fix.Sysctl[c.Key], err)
				}
				if !strings.Contains(fd.Reason, c.Key+"=") || !strings.Contains(fd.Expected, c.Key+" "+c.expected(p)) {
					t.Errorf("reason %q / expected %q do not name %s", fd.Reason, fd.Expected, c.Key)
				}
			})
		}
	}
}

func TestCheckOps(t *testing.T) {
	p := DefaultProfile()
	for _, tc := range []struct {
		c       SysctlCheck
		value   string
		ok      bool
		err     string
		exp     string
		fix     string
		current string
	}{
		{c: SysctlCheck{Key: "vm.swappiness", Target: Target{Op: OpAtMost, Value: "1"}}, value: "60", exp: "<= 1", fix: "1"},
		{c: SysctlCheck{Key: "vm.swappiness", Target: Target{Op: OpAtMost, Value: "1"}}, value: "1", ok: true, exp: "<= 1"},
		{c: SysctlCheck{Key: "vm.swappiness", Target: Target{Op: OpAtMost, Value: "1"}}, value: "0", ok: true, exp: "<= 1"},
		{c: SysctlCheck{Key: "vm.swappiness", Target: Target{Op: OpAtMost, Value: "1"}}, value: "one", err: "is not an integer", exp: "<= 1"},
		{c: SysctlCheck{Key: "net.core.somaxconn", Target: Target{Op: OpAtLeast, Profile: "somaxconn"}}, value: "4095", exp: ">= 4096", fix: "4096"},
		{c: SysctlCheck{Key: "net.core.somaxconn", Target: Target{Op: OpAtLeast, Profile: "somaxconn"}}, value: "1 2", err: "is not an integer", exp: ">= 4096"},
		{c: SysctlCheck{Key: "net.ipv4.tcp_rmem", Target: Target{Op: OpAtLeast, Profile: "tcp_rmem_max", Field: 3, FieldName: "max"}}, value: "4096\t131072 6291456", exp: "max field >= 134217728", fix: "4096 131072 134217728"},
		{c: SysctlCheck{Key: "net.ipv4.tcp_rmem", Target: Target{Op: OpAtLeast, Profile: "tcp_rmem_max", Field: 3}}, value: "4096 131072", err: "does not have 3 fields", exp: "field 3 >= 134217728"},
		{c: SysctlCheck{Key: "net.ipv4.tcp_timestamps", Target: Target{Op: OpOneOf, Values: []string{"1", "2"}}}, value: "2", ok: true, exp: "one of 1, 2"},
		{c: SysctlCheck{Key: "net.ipv4.tcp_timestamps", Target: Target{Op: OpOneOf, Values: []string{"1", "2"}}}, value: "0", exp: "one of 1, 2", fix: "1"},
		{c: SysctlCheck{Key: "net.core.default_qdisc", Target: Target{Op: OpEqual, Profile: "default_qdisc"}}, value: "fq_codel", exp: "fq", fix: "fq"},
		{c: SysctlCheck{Key: "net.ipv4.tcp_window_scaling", Target: Target{Op: OpEqual, Value: "1"}}, value: "1", ok: true, exp: "1"},
	} {
		t.Run(tc.c.Key+"="+tc.value, func(t *testing.T) {
			ok, err := tc.c.ok(tc.value, p)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ok = %v, %v; want error %q", ok, err, tc.err)
				}
			} else if err != nil || ok != tc.ok {
				t.Fatalf("ok = %v, %v; want %v", ok, err, tc.ok)
			}
			if got := tc.c.expected(p); got != tc.exp {
				t.Errorf("expected %q, want %q", got, tc.exp)
			}
			if tc.fix != "" {
				if got := tc.c.fixValue(tc.value, p); got != tc.fix {
					t.Errorf("fix %q, want %q", got, tc.fix)
				}
			}
		})
	}
}

func TestBootDefault(t *testing.T) {
	p := DefaultProfile()
	somax := SysctlCheck{Key: "net.core.somaxconn", Target: Target{Op: OpAtLeast, Profile: "somaxconn"},
		Boot: BootDefault{Value: "4096", Note: "kernel default from 5.4", Before: []BootBefore{{Kernel: "5.4", Value: "128", Note: "kernel default before 5.4"}}}}
	rmem := SysctlCheck{Key: "net.ipv4.tcp_rmem", Target: Target{Op: OpAtLeast, Profile: "tcp_rmem_max", Field: 3},
		Boot: BootDefault{Value: "4096 131072 6291456", AtMost: true, Note: "at most"}}
	for _, tc := range []struct {
		name   string
		c      SysctlCheck
		series string
		p      Profile
		value  string
		known  bool
		note   string
	}{
		{"somaxconn on 4.19", somax, "4.19", p, "128", true, "kernel default before 5.4"},
		{"somaxconn on 6.1", somax, "6.1", p, "4096", true, "kernel default from 5.4"},
		{"somaxconn, kernel unknown", somax, "", p, "", false, "128 before Linux 5.4, 4096 from 5.4; the kernel version is not known"},
		{"tcp_rmem above the default's ceiling: known to fail", rmem, "6.1", p, "4096 131072 6291456", true, "at most"},
		{"tcp_rmem within the ceiling: not known", rmem, "6.1", func() Profile { q, _ := p.With(map[string]any{"tcp_rmem_max": 4096}); return q }(), "4096 131072 6291456", false, "at most"},
		{"unknown", SysctlCheck{Boot: BootDefault{Unknown: "scales with memory"}}, "6.1", p, "", false, "scales with memory"},
		{"plain", SysctlCheck{Boot: BootDefault{Value: "1"}}, "6.1", p, "1", true, "kernel default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, known, note := tc.c.bootDefault(kernelAnalysis{series: tc.series}, tc.p)
			if v != tc.value || known != tc.known || note != tc.note {
				t.Fatalf("bootDefault = %q, %v, %q; want %q, %v, %q", v, known, note, tc.value, tc.known, tc.note)
			}
		})
	}
}

// TestTuned: every checked sysctl brought to its target where the base
// value does not meet it, in its field; a value that meets it is kept; a
// value without the compared field is left alone.
func TestTuned(t *testing.T) {
	p := DefaultProfile()
	base := map[string]string{
		"net.core.somaxconn":          "128",
		"vm.dirty_ratio":              "80",
		"net.ipv4.tcp_rmem":           "4096 87380 6291456",
		"net.ipv4.tcp_wmem":           "4096",
		"net.ipv4.tcp_timestamps":     "0",
		"net.core.netdev_max_backlog": "1000",
		"vm.max_map_count":            "65530",
	}
	got := Tuned(base, p)
	for k, want := range map[string]string{
		"net.core.somaxconn":          "4096",
		"vm.dirty_ratio":              "80",
		"net.ipv4.tcp_rmem":           "4096 87380 134217728",
		"net.ipv4.tcp_wmem":           "4096",
		"net.ipv4.tcp_timestamps":     "1",
		"net.core.netdev_max_backlog": "5000",
		"vm.max_map_count":            "65530", // judged by Go, not a check
		"vm.swappiness":               "1",     // absent: set
	} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	if base["net.core.somaxconn"] != "128" {
		t.Error("Tuned changed its base")
	}
}

// A threshold on a broker process limit is one check block: the soft
// open-files limit judged (unlimited meets at-least), the fix raises
// LimitNOFILE with a restart, a host without a broker is skip and one
// whose limits were not read unknown.
func TestLimitCheckByYAMLAlone(t *testing.T) {
	const block = `
  - id: open-files-floor
    title: The broker may open at least 200000 files
    severity: medium
    rationale: A test rule.
    references:
      - {title: proc_pid_limits(5), url: "https://man7.org/linux/man-pages/man5/proc_pid_limits.5.html"}
    thresholds: []
    check:
      why: segments and connections each hold a descriptor
      pass: "open files ≥ 200000"
      limits:
        - {limit: open-files, op: at-least, value: "200000"}
    fix: raise LimitNOFILE.
`
	set := setWith(t, block)
	proc := func(soft int64) *facts.Facts {
		return &facts.Facts{Kafka: &facts.Kafka{PID: 42, Process: &facts.BrokerProcess{NoFile: &facts.Limit{Soft: soft, Hard: facts.Unlimited}, FDs: -1}}}
	}
	judge := func(f *facts.Facts) Finding { return judgeIn(t, set, f, "open-files-floor") }
	fd := judge(proc(100000))
	if fd.Status != Fail || fd.Severity != Medium || fd.Reason != "open-files=100000 (want >= 200000): segments and connections each hold a descriptor" ||
		fd.Observed != "open-files soft 100000, hard unlimited (Max open files)" {
		t.Fatalf("finding %+v", fd)
	}
	if fd.Fix == nil || fd.Fix.NoFile != 200000 || !fd.Fix.Restart || len(fd.Fix.Sysctl)+len(fd.Fix.KafkaProperties) != 0 {
		t.Fatalf("fix %+v", fd.Fix)
	}
	judgeCases(t, set, "open-files-floor", []checkCase{
		{"at the floor", proc(200000), Pass, "open files ≥ 200000"},
		{"unlimited", proc(facts.Unlimited), Pass, "open files ≥ 200000"},
		{"limits not read", &facts.Facts{Kafka: &facts.Kafka{PID: 42, Process: &facts.BrokerProcess{FDs: -1, Unread: map[string]string{"limits": "denied /proc/42/limits"}}}}, Unknown, "not readable: denied /proc/42/limits"},
		{"no process facts", &facts.Facts{Kafka: &facts.Kafka{PID: 42}}, Unknown, "the broker process (pid 42) not gathered"},
		{"no broker", &facts.Facts{}, Skip, "no Kafka broker found"},
	})
}

// setWith is the shipped catalog and profile with block appended to the
// catalog.
func setWith(t *testing.T, block string) *Set {
	t.Helper()
	cat, err := shippedFS.ReadFile(catalogFile)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := shippedFS.ReadFile(profileFile)
	if err != nil {
		t.Fatal(err)
	}
	set, err := LoadSet(catalogFile, append(cat, block...), profileFile, prof)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func judgeIn(t *testing.T, set *Set, f *facts.Facts, id string) Finding {
	t.Helper()
	for _, fd := range set.Evaluate(f, set.DefaultProfile()) {
		if fd.Rule == id {
			return fd
		}
	}
	t.Fatalf("no finding for %s", id)
	return Finding{}
}

// A threshold on a log directory's mount option is one check block: a
// valued option (commit=N) and a flag (nodiratime), each mount judged
// once, the option's default when the mount does not list it, a manual
// fstab fix naming the mount; a directory whose mount is unknown makes
// the rule unknown, a host without a broker skip.
func TestMountCheckByYAMLAlone(t *testing.T) {
	set := setWith(t, `
  - id: mount-commit
    title: Log directories commit at most every 5 seconds, without diratime
    severity: low
    rationale: A test rule.
    references:
      - {title: ext4(5), url: "https://man7.org/linux/man-pages/man5/ext4.5.html"}
    thresholds: []
    check:
      why: a longer commit interval loses more on a crash
      pass: "commit ≤ 5, nodiratime"
      mounts:
        - {mount_option: commit, op: at-most, value: "5", default: "5"}
        - {mount_option: nodiratime, op: equal, value: set, default: unset}
    fix: set the options in /etc/fstab and remount.
`)
	dir := func(path, mount string, opts ...string) facts.LogDir {
		return facts.LogDir{Path: path, Exists: true, Mount: mount, FSType: "ext4", Options: opts}
	}
	host := func(ds ...facts.LogDir) *facts.Facts { return &facts.Facts{Kafka: &facts.Kafka{PID: 42, LogDirs: ds}} }
	fd := judgeIn(t, set, host(dir("/data/a", "/data", "rw", "commit=30", "nodiratime"), dir("/data/b", "/data", "rw", "commit=30", "nodiratime"), dir("/logs", "/logs", "rw")), "mount-commit")
	if fd.Status != Fail || !strings.HasSuffix(fd.Reason, ": a longer commit interval loses more on a crash") || !strings.Contains(fd.Reason, "/data commit=30 (want <= 5); /logs nodiratime=unset (want set)") || strings.Count(fd.Observed, "/data commit") != 1 {
		t.Fatalf("finding %+v", fd)
	}
	if fd.Fix == nil || fd.Fix.Restart || len(fd.Fix.Sysctl) != 0 ||
		fd.Fix.Manual != "set commit=5 in the options of /data in /etc/fstab and run mount -o remount,commit=5 /data; add nodiratime to the options of /logs in /etc/fstab and run mount -o remount,nodiratime /logs" {
		t.Fatalf("fix %+v", fd.Fix)
	}
	judgeCases(t, set, "mount-commit", []checkCase{
		{"defaults and flags met", host(dir("/data/a", "/data", "rw", "nodiratime")), Pass, "commit ≤ 5, nodiratime"},
		{"mount unknown", host(facts.LogDir{Path: "/data/a"}), Unknown, "/data/a: does not exist"},
		{"no log dirs", host(), Unknown, "log directories not gathered"},
		{"no broker", &facts.Facts{}, Skip, "no Kafka broker found"},
	})
}

// checkCase is a host and the verdict a rule gives it.
type checkCase struct {
	name   string
	f      *facts.Facts
	status Status
	reason string // substring
}

func judgeCases(t *testing.T, set *Set, id string, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		if fd := judgeIn(t, set, tc.f, id); fd.Status != tc.status || !strings.Contains(fd.Reason, tc.reason) {
			t.Errorf("%s: %s %q, want %s %q", tc.name, fd.Status, fd.Reason, tc.status, tc.reason)
		}
	}
}
