//go:build e2e

package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

// TestLogDirsAndSysctls: log.dirs on a tmpfs and on an ext4 loop mount
// (noatime) inside each host's own mount namespace, tcp_timestamps=0 with
// cookies on, a receive buffer above rmem_max; fix plans and applies the
// net.* key and a re-scan passes it.
func TestLogDirsAndSysctls(t *testing.T) {
	requireEnv(t)
	kauditBin(t)
	// net.core.rmem_max is global (read-only inside a network namespace):
	// the broker asks for twice this machine's value, which is only read.
	rmemMax, err := strconv.Atoi(strings.TrimSpace(readFile(t, "/proc/sys/net/core/rmem_max")))
	if err != nil {
		t.Fatal(err)
	}
	buf := strconv.Itoa(2 * rmemMax)
	f := testfleet.Start(t, []testfleet.HostSpec{
		{
			Name:    "ldtmp",
			Sysctls: base("net.ipv4.tcp_syncookies", "1", "net.core.somaxconn", "4096", "net.ipv4.tcp_timestamps", "0"),
			Kafka:   &testfleet.BrokerSpec{Version: "3.6.1", Properties: map[string]string{"log.dirs": "/var/lib/kafka-tmp"}},
			Mounts:  []testfleet.MountSpec{{Path: "/var/lib/kafka-tmp", FSType: "tmpfs", Source: "kafka-tmp"}},
		},
		{
			Name:    "ldext4",
			Sysctls: base("net.ipv4.tcp_syncookies", "1", "net.core.somaxconn", "4096"),
			Kafka: &testfleet.BrokerSpec{Version: "3.6.1", Properties: map[string]string{
				"log.dirs": "/data/kafka,/data2", "socket.receive.buffer.bytes": buf}},
			Mounts: []testfleet.MountSpec{{Path: "/data/kafka", FSType: "ext4", Options: "noatime"}, {Path: "/data2", FSType: "ext4"}},
		},
	})
	inv := writeInventory(t, f, entry(f.Host("ldtmp")), entry(f.Host("ldext4")))
	r := scan(t, runOpts{}, inv, "--timeout", "30s", "--connect-timeout", "5s")

	tmp, ext := r.host(t, "ldtmp"), r.host(t, "ldext4")
	if tmp.Facts == nil || tmp.Facts.Kafka == nil || len(tmp.Facts.Kafka.LogDirs) != 1 {
		t.Fatalf("ldtmp: log dirs not gathered: %+v", tmp.Facts)
	}
	if d := tmp.Facts.Kafka.LogDirs[0]; d.FSType != "tmpfs" || d.Source != "kafka-tmp" || d.Mount != "/var/lib/kafka-tmp" || d.Segments != 0 {
		t.Errorf("ldtmp log dir %+v, want the kafka-tmp tmpfs with no segments", d)
	}
	if ds := ext.Facts.Kafka.LogDirs; len(ds) != 2 || ds[0].FSType != "ext4" || !strings.HasPrefix(ds[0].Source, "/dev/loop") || ds[0].SameDeviceAsRoot ||
		!contains(ds[0].Options, "noatime") || contains(ds[1].Options, "noatime") {
		t.Errorf("ldext4 log dirs %+v, want two loop ext4 mounts, the first noatime", ds)
	}
	for _, c := range []struct {
		h    string
		rule string
		want rules.Status
		in   string
	}{
		{"ldtmp", rules.RuleLogDirFilesystem, rules.Fail, "lost at every reboot"},
		{"ldtmp", rules.RuleTCPTimestamps, rules.Fail, "loses window scaling and SACK"},
		{"ldext4", rules.RuleLogDirFilesystem, rules.Pass, ""},
		{"ldext4", rules.RuleLogDirNoatime, rules.Warn, "/data2"},
		{"ldext4", rules.RuleLogDirRootDevice, rules.Pass, ""},
		{"ldext4", rules.RuleKafkaBufferCapped, rules.Fail, "socket.receive.buffer.bytes=" + buf + " is above net.core.rmem_max=" + strconv.Itoa(rmemMax)},
		{"ldext4", rules.RuleTCPTimestamps, rules.Pass, ""},
	} {
		fd := finding(r.host(t, c.h), c.rule)
		if fd == nil || fd.Status != c.want || !strings.Contains(fd.Reason, c.in) {
			t.Errorf("%s %s: %+v, want %s with %q", c.h, c.rule, fd, c.want, c.in)
		}
	}
	if fd := finding(ext, rules.RuleLogDirNoatime); fd != nil && (fd.Fix == nil || !strings.Contains(fd.Fix.Manual, "mount -o remount,noatime /data2")) {
		t.Errorf("noatime fix %+v lacks the remount of /data2", fd.Fix)
	}

	// fix plans rmem_max (never applied here: it is the machine's own) and applies tcp_timestamps on the namespace host.
	plan := runKaudit(t, runOpts{}, "fix", inv, "--limit", "ldext4", "--rules", rules.RuleKafkaBufferCapped, "--timeout", "30s")
	if !strings.Contains(plan.Stdout, "net.core.rmem_max") || !strings.Contains(plan.Stdout, buf) {
		t.Errorf("fix plan for ldext4: exit %d\n%s\n%s", plan.Code, plan.Stdout, plan.Stderr)
	}
	fix := runKaudit(t, runOpts{}, "fix", inv, "--limit", "ldtmp", "--rules", rules.RuleTCPTimestamps,
		"--apply", "--yes", "--journal-dir", t.TempDir(), "--timeout", "30s")
	if fix.Code != 0 {
		t.Fatalf("fix --apply on ldtmp: exit %d\n%s\n%s", fix.Code, fix.Stdout, fix.Stderr)
	}
	if got := strings.TrimSpace(f.Host("ldtmp").Exec(t, "cat", "/proc/sys/net/ipv4/tcp_timestamps")); got != "1" {
		t.Errorf("tcp_timestamps after fix --apply: %q", got)
	}
	again := scan(t, runOpts{}, inv, "--limit", "ldtmp", "--timeout", "30s")
	if fd := finding(again.host(t, "ldtmp"), rules.RuleTCPTimestamps); fd == nil || fd.Status != rules.Pass {
		t.Errorf("re-scan tcp-timestamps: %+v", fd)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
