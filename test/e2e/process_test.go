//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

// TestBrokerProcess: the broker-process section read over real SSH from
// real /proc files. A broker started with a low open-files limit fails
// broker-open-files with the limit the kernel reports; one started with
// a high limit passes; a login that is neither root nor the broker's user
// reads the limit but not /proc/PID/fd or maps, and gets unknown for what
// it cannot read, never a pass. vm.max_map_count is this machine's (it is
// global): the test only reads it, and no fix is applied.
func TestBrokerProcess(t *testing.T) {
	requireEnv(t)
	kauditBin(t)
	sys := map[string]string{"net.ipv4.tcp_syncookies": "1"}
	f := testfleet.Start(t, []testfleet.HostSpec{
		{Name: "lownofile", Sysctls: sys, Kafka: &testfleet.BrokerSpec{Version: "3.6.1", NoFile: 1024}},
		{Name: "healthy", Sysctls: sys, Kafka: &testfleet.BrokerSpec{Version: "3.6.1", NoFile: 16384},
			Users: []testfleet.UserSpec{{Name: "kops"}}},
	})
	h := f.Host("healthy")
	// This machine's hard limit caps what a test broker can get (the
	// hosts cannot raise it): the healthy hosts are judged against a
	// profile below their 16384.
	low := "profile: {nofile: 8192}"
	inv := writeInventory(t, f, entry(f.Host("lownofile")), entry(h, low),
		invHost{name: "nonroot", addr: h.Addr, port: h.Port, extra: []string{"user: kops", low}})
	r := scan(t, runOpts{}, inv, "--timeout", "30s", "--connect-timeout", "5s")

	lh := r.host(t, "lownofile")
	if lh.Facts == nil || lh.Facts.Kafka == nil || lh.Facts.Kafka.Process == nil {
		t.Fatalf("lownofile: no broker process facts: %+v", lh.Error)
	}
	p := lh.Facts.Kafka.Process
	if p.NoFile == nil || p.NoFile.Soft != 1024 || p.NoFile.Hard != 1024 || p.FDs <= 0 || p.Maps <= 0 {
		t.Errorf("lownofile process facts: %+v (nofile %+v)", p, p.NoFile)
	}
	if p.Xmx != 1<<30 || p.Xms != 1<<30 || p.JavaVersion == "" && p.Unread["release"] == "" {
		t.Errorf("lownofile JVM facts: xms %d xmx %d java %q unread %v", p.Xms, p.Xmx, p.JavaVersion, p.Unread)
	}
	fd := finding(lh, rules.RuleBrokerOpenFiles)
	if fd == nil || fd.Status != rules.Fail || !strings.Contains(fd.Reason, "soft open-files limit of 1024") || fd.Fix == nil || fd.Fix.NoFile != int64(fleetNoFile(t)) {
		t.Errorf("lownofile %s: %+v", rules.RuleBrokerOpenFiles, fd)
	}

	if fd := finding(r.host(t, "healthy"), rules.RuleBrokerOpenFiles); fd == nil || fd.Status != rules.Pass {
		t.Errorf("healthy %s: %+v", rules.RuleBrokerOpenFiles, fd)
	}
	if fd := finding(r.host(t, "healthy"), rules.RuleBrokerSwap); fd == nil || fd.Status == rules.Unknown {
		t.Errorf("healthy %s: %+v", rules.RuleBrokerSwap, fd)
	}

	nr := r.host(t, "nonroot")
	if nr.Facts == nil || nr.Facts.Kafka == nil || nr.Facts.Kafka.Process == nil {
		t.Fatalf("nonroot: no broker process facts: %+v", nr.Error)
	}
	np := nr.Facts.Kafka.Process
	if np.NoFile == nil || np.NoFile.Soft != 16384 || np.FDs != -1 || np.Maps != -1 || !strings.Contains(np.Unread["fds"], "denied") {
		t.Errorf("nonroot process facts: %+v (nofile %+v)", np, np.NoFile)
	}
	for _, id := range []string{rules.RuleBrokerOpenFiles, rules.RuleBrokerMapCount} {
		fd := finding(nr, id)
		if fd == nil || fd.Status != rules.Unknown || !strings.Contains(fd.Reason, "not readable") {
			t.Errorf("nonroot %s: %+v, want unknown naming what it could not read", id, fd)
		}
	}
	t.Logf("nonroot: %s", finding(nr, rules.RuleBrokerOpenFiles).Reason)
}
