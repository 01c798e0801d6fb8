package rules

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// probeCase is one probe case as the probe records it.
func probeCase(rcvbuf, client, server int) facts.ProbeCase {
	return facts.ProbeCase{RcvBuf: rcvbuf, Effective: 2 * rcvbuf, ClientSndWscale: client, ClientRcvWscale: 7,
		ServerSndWscale: 7, ServerRcvWscale: server, CookiesSent: 1, CookiesRecv: 1, Bytes: 393216, Flowed: 393216, MS: 3}
}

func ranProbe(release string, cases ...facts.ProbeCase) *facts.Probe {
	return &facts.Probe{State: facts.ProbeOK, Release: release, Arch: "x86_64", Python: "3.6.8 /usr/libexec/platform-python",
		PerNetns: "kernel series 4.18 ≥ 4.9", NetnsHost: "net:[4026531992]", NetnsProbe: "net:[4026532301]",
		HostSyncookiesBefore: "1", HostSyncookiesDuring: "1", HostSyncookiesAfter: "1", RmemMax: 212992,
		Cases: cases, DurationMS: 180, ScriptBytes: 9125, RemoteMS: 12}
}

func TestKernelSynackWscaleSource(t *testing.T) {
	const el8 = "4.18.0-240.el8.x86_64"
	el8Kernel := facts.Kernel{Release: el8, Distro: "rhel"}
	tests := []struct {
		name   string
		kernel facts.Kernel
		probe  *facts.Probe
		rcvbuf string // socket.receive.buffer.bytes ("" = leave the compliant host's 102400)
		status Status
		sev    Severity
		source string
		reason []string // substrings
	}{
		{"mismatch 7 vs 1 at SO_RCVBUF 102400", el8Kernel,
			ranProbe(el8, probeCase(102400, 1, 7), probeCase(65536, 1, 7), probeCase(212992, 2, 7)), "",
			Fail, Critical, SourceProbe, []string{"SO_RCVBUF 102400 the client believes window scale 1 while the cookie-completed socket uses 7", "lacks commit 909172a"}},
		{"mismatch but SO_RCVBUF not set by the broker", el8Kernel,
			ranProbe(el8, probeCase(102400, 1, 7)), "-1",
			Warn, Low, SourceProbe, []string{"socket.receive.buffer.bytes=-1"}},
		{"consistent on an el8 build", el8Kernel,
			ranProbe(el8, probeCase(102400, 1, 1), probeCase(65536, 1, 1), probeCase(212992, 7, 7)), "",
			Pass, "", SourceProbe, []string{"client 1 / server 1", "384 KiB flowed", "handles cookie connections correctly"}},
		{"probe outranks the version table", facts.Kernel{Release: "6.1.0-13-amd64", Version: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1 (2023-09-29)"},
			ranProbe("6.1.0-13-amd64", probeCase(102400, 1, 7)), "",
			Fail, Critical, SourceProbe, []string{"without the probe: fixed from the version"}},
		{"no cookie connection proves nothing", el8Kernel,
			ranProbe(el8, facts.ProbeCase{RcvBuf: 102400, ClientSndWscale: 1, ServerRcvWscale: 1, Bytes: 10, Flowed: 10}), "",
			Unknown, Critical, SourceNone, []string{"probe inconclusive: 0 of 1"}},
		{"payload did not flow", el8Kernel,
			ranProbe(el8, facts.ProbeCase{RcvBuf: 102400, ClientSndWscale: 1, ServerRcvWscale: 1, CookiesRecv: 1, Bytes: 393216, Flowed: 65536}), "",
			Unknown, Critical, SourceNone, []string{"probe inconclusive"}},
		{"3.10 not per netns: changelog decides, reason kept", facts.Kernel{Release: "3.10.0-1160.el7.x86_64",
			Changelog: &facts.KernelChangelog{Source: "rpm -q --changelog kernel-3.10.0-1160.el7.x86_64"}},
			&facts.Probe{State: facts.ProbeNotPerNetns, Release: "3.10.0-1160.el7.x86_64", Reason: "kernel 3.10.0-1160.el7.x86_64 (series 3.10) is older than 4.9"}, "",
			Fail, Critical, SourceChangelog, []string{"lacks the fix title", "probe not-per-netns: kernel 3.10.0-1160.el7.x86_64 (series 3.10) is older than 4.9"}},
		{"needs root: unknown with the reason", el8Kernel,
			&facts.Probe{State: facts.ProbeNeedsRoot, Release: el8, Reason: "needs root (become): running as uid 1000"}, "",
			Unknown, Critical, SourceNone, []string{"probe needs-root: needs root (become)"}},
		{"probe from another kernel ignored", el8Kernel,
			ranProbe("4.18.0-477.el8.x86_64", probeCase(102400, 1, 1)), "",
			Unknown, Critical, SourceNone, []string{"probe ran on kernel 4.18.0-477.el8.x86_64, not " + el8 + ": ignored"}},
		{"no probe: version table", facts.Kernel{Release: "6.1.0-13-amd64"}, nil, "",
			Pass, "", SourceVersion, []string{"base version 6.1"}},
		{"no probe: changelog", facts.Kernel{Release: el8, Changelog: &facts.KernelChangelog{Source: "rpm", HasFix: true}}, nil, "",
			Pass, "", SourceChangelog, []string{"contains"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := compliantHost()
			f.Kernel, f.Probe = tt.kernel, tt.probe
			if tt.rcvbuf != "" {
				f.Kafka.Properties["socket.receive.buffer.bytes"] = tt.rcvbuf
			}
			fd := find(t, Evaluate(f, DefaultProfile()), "kernel-synack-wscale")
			if fd.Status != tt.status || fd.Source != tt.source || (tt.sev != "" && fd.Severity != tt.sev) {
				t.Fatalf("status %s severity %s source %q, want %s %s %q; reason: %s", fd.Status, fd.Severity, fd.Source, tt.status, tt.sev, tt.source, fd.Reason)
			}
			for _, want := range tt.reason {
				if !strings.Contains(fd.Reason, want) {
					t.Errorf("reason lacks %q: %s", want, fd.Reason)
				}
			}
			if tt.probe != nil && tt.probe.State == facts.ProbeOK && len(fd.Evidence) < 2 {
				t.Errorf("probe evidence missing: %v", fd.Evidence)
			}
		})
	}
}

// The probe's verdict reaches the rules that read the kernel's status:
// cookies fired on a host the probe proved buggy is critical.
func TestProbeRaisesSyncookiesFired(t *testing.T) {
	f := compliantHost()
	f.Kernel = facts.Kernel{Release: "4.18.0-240.el8.x86_64"}
	f.Probe = ranProbe("4.18.0-240.el8.x86_64", probeCase(102400, 1, 7))
	f.Netstat["TcpExt"]["SyncookiesSent"] = 96
	fd := find(t, Evaluate(f, DefaultProfile()), "syncookies-fired")
	if fd.Status != Fail || fd.Severity != Critical {
		t.Fatalf("%s %s: %s", fd.Status, fd.Severity, fd.Reason)
	}
}

func TestProbeEvidence(t *testing.T) {
	p := ranProbe("4.18.0-240.el8.x86_64", probeCase(102400, 1, 7))
	got := strings.Join(probeEvidence(p), "\n")
	for _, want := range []string{
		"kernel 4.18.0-240.el8.x86_64, x86_64, python 3.6.8 /usr/libexec/platform-python, 180 ms (12 ms on the host, 9125 bytes sent)",
		"SO_RCVBUF 102400 (effective 204800): client tcpi_snd_wscale 1, server tcpi_rcv_wscale 7, cookie connections 1, 393216/393216 bytes in 3 ms",
		"namespace net:[4026531992] -> net:[4026532301]; host tcp_syncookies 1 before, 1 during, 1 after",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("evidence lacks %q:\n%s", want, got)
		}
	}
}
