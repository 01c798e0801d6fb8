//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

// probeFleet: this machine's kernel (it has commit 909172a) seen through
// different release strings, logins and pythons.
func probeFleet() []testfleet.HostSpec {
	kafka := func() *testfleet.BrokerSpec { return &testfleet.BrokerSpec{Version: "3.6.1"} }
	sys := map[string]string{"net.ipv4.tcp_syncookies": "1"}
	return []testfleet.HostSpec{
		{Name: "plain", Sysctls: sys, Kafka: kafka()},
		{ // A RHEL 8 release string: the version table cannot settle it, the probe can.
			Name: "el8", Sysctls: sys, Kafka: kafka(),
			ProcFiles: map[string]string{"/proc/sys/kernel/osrelease": "4.18.0-477.27.1.el8_8.x86_64\n"},
		},
		{ // A 3.10 release string: tcp_syncookies would be host-wide, never probed.
			Name: "el7", Sysctls: sys, Kafka: kafka(),
			ProcFiles: map[string]string{"/proc/sys/kernel/osrelease": "3.10.0-1160.95.1.el7.x86_64\n"},
		},
		{ // Root only through sudo (kops), and a login without it (kafka).
			Name: "sudo", Sysctls: sys, Kafka: kafka(),
			Files: map[string]string{"/etc/sudoers": sudoers},
			Users: []testfleet.UserSpec{{Name: "kafka"}, {Name: "kops"}},
		},
		{ // A python that never answers: killed on the host after the budget.
			Name: "hung", Sysctls: sys, Kafka: kafka(),
			Files: map[string]string{"/usr/bin/python3": "#!/bin/sh\nexec sleep 60\n"},
		},
	}
}

func TestProbe(t *testing.T) {
	requireEnv(t)
	kauditBin(t)
	f := testfleet.Start(t, probeFleet())
	sudo := f.Host("sudo")
	inv := writeInventory(t, f,
		entry(f.Host("plain")), entry(f.Host("el8")), entry(f.Host("el7")), entry(f.Host("hung")),
		invHost{name: "sudoer", addr: sudo.Addr, port: sudo.Port, extra: []string{"user: kops", "become: sudo"}},
		invHost{name: "nonroot", addr: sudo.Addr, port: sudo.Port, extra: []string{"user: kafka"}},
	)
	before := probeGroundTruth(t, f)

	r := scan(t, runOpts{}, inv, "--probe", "--probe-budget", "1s", "--timeout", "30s", "--connect-timeout", "5s")
	if r.Dur > 20*time.Second {
		t.Errorf("scan --probe of 6 hosts took %v", r.Dur)
	}
	if r.Report.Summary.Audited != 6 {
		t.Fatalf("summary %+v: a probe outcome must never be a host error", r.Report.Summary)
	}
	want := map[string]struct {
		state  facts.ProbeState
		source rules.Source
		status rules.Status
	}{
		"plain":   {facts.ProbeOK, rules.SourceProbe, rules.Pass},
		"el8":     {facts.ProbeOK, rules.SourceProbe, rules.Pass},            // unknown from the release alone
		"sudoer":  {facts.ProbeOK, rules.SourceProbe, rules.Pass},            // root through become: sudo
		"el7":     {facts.ProbeNotPerNetns, rules.SourceNone, rules.Unknown}, // 3.10 el7, no changelog: unknown with the reason
		"nonroot": {facts.ProbeNeedsRoot, rules.SourceVersion, rules.Pass},   // the version table decides, the reason stays
		// A probe that ran and was killed before it measured anything is
		// not overruled by the version table: unknown, with the reason.
		"hung": {facts.ProbeTimeout, rules.SourceNone, rules.Unknown},
	}
	for name, w := range want {
		h := r.host(t, name)
		if h.Error != nil || h.Facts == nil || h.Facts.Probe == nil {
			t.Errorf("%s: error %+v, no probe", name, h.Error)
			continue
		}
		p, fd := h.Facts.Probe, finding(h, "kernel-synack-wscale")
		if p.State != w.state || fd.Source != w.source || fd.Status != w.status {
			t.Errorf("%s: probe %s (%s), finding %s source %s, want %s %s %s\nreason: %s", name, p.State, p.Reason, fd.Status, fd.Source, w.state, w.status, w.source, fd.Reason)
		}
		if w.state != facts.ProbeOK && !strings.Contains(fd.Reason, "probe "+string(w.state)) {
			t.Errorf("%s: the probe's reason is not kept beside the verdict: %s", name, fd.Reason)
		}
		t.Logf("%s: probe %s in %d ms (%d ms on the host), %d bytes sent; %s", name, p.State, p.DurationMS, p.RemoteMS, p.ScriptBytes, fd.Reason)
	}
	for _, name := range []string{"plain", "el8", "sudoer"} {
		p := r.host(t, name).Facts.Probe
		for _, c := range p.Cases {
			if c.ClientSndWscale != c.ServerRcvWscale || c.CookiesRecv != 1 || c.Flowed != c.Bytes {
				t.Errorf("%s: case %+v", name, c)
			}
		}
		if len(p.Cases) != 3 || p.Cases[0].RcvBuf != 102400 || p.HostSyncookiesBefore != "1" || p.HostSyncookiesAfter != "1" || p.NetnsHost == p.NetnsProbe {
			t.Errorf("%s: probe %+v", name, p)
		}
	}
	if p := r.host(t, "el7").Facts.Probe; p.ScriptBytes != 0 {
		t.Errorf("el7 was sent the probe (%d bytes)", p.ScriptBytes)
	}
	if d := r.host(t, "hung").Facts.Probe.DurationMS; d > 6000 {
		t.Errorf("hung probe took %d ms (budget 1s + kill after 2s)", d)
	}
	// Ctrl-C while the hung probe runs: kaudit stops at once (exit 130);
	// the host side ends within its budget + 2 s although the session is cut.
	p := startKaudit(t, runOpts{}, "probe", inv, "--limit", "hung", "--probe-budget", "5s", "-f", "json", "-o", filepath.Join(t.TempDir(), "int.json"))
	time.Sleep(1500 * time.Millisecond)
	_ = p.cmd.Process.Signal(os.Interrupt)
	if res := p.wait(t); res.Code != 130 || res.Dur > 4*time.Second {
		t.Errorf("interrupted probe: exit %d after %v, want 130 at once; stderr:\n%s", res.Code, res.Dur, res.Stderr)
	}
	waitFor(t, 9*time.Second, "the hung probe to be killed on the host", func() bool {
		return !strings.Contains(f.Host("hung").Exec(t, "ps", "-eo", "args"), "sleep 60")
	})

	after := probeGroundTruth(t, f)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: %q before the probe, %q after", k, v, after[k])
		}
	}
}

// probeGroundTruth is what the probe must leave as it found it: every
// host's (and this machine's) tcp_syncookies, the named network
// namespaces, each host's /tmp, and no process running the probe.
func probeGroundTruth(t *testing.T, f *testfleet.Fleet) map[string]string {
	t.Helper()
	m := map[string]string{"machine tcp_syncookies": readFile(t, "/proc/sys/net/ipv4/tcp_syncookies")}
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	ns := strings.Fields(string(out))
	slices.Sort(ns)
	m["ip netns list"] = strings.Join(ns, " ")
	for _, h := range f.Hosts {
		n := h.Spec.Name
		m[n+" tcp_syncookies"] = h.ExecNet(t, "cat", "/proc/sys/net/ipv4/tcp_syncookies")
		m[n+" /tmp"] = h.Exec(t, "ls", "-A", "/tmp")
		ps := h.Exec(t, "ps", "-eo", "args")
		m[n+" probe processes"] = ""
		for _, l := range strings.Split(ps, "\n") {
			if strings.Contains(l, "kaudit SYN-cookie") || strings.Contains(l, "sleep 60") {
				m[n+" probe processes"] += l + "\n"
			}
		}
	}
	return m
}
