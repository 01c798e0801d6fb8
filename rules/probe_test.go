package rules

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// probeCase is one probe case as the probe records it: a cookie-completed
// connection whose 384 KiB flowed in 3 ms.
func probeCase(rcvbuf, client, server int) facts.ProbeCase {
	return facts.ProbeCase{RcvBuf: rcvbuf, Effective: 2 * rcvbuf, ClientSndWscale: client, ClientRcvWscale: 7,
		ServerSndWscale: 7, ServerRcvWscale: server, CookiesSent: 1, CookiesRecv: 1, Bytes: 393216, Flowed: 393216, MS: 3, LimitMS: 950}
}

// stalled is c whose transfer crawled (the bug's effect: about 14 KB/s)
// until its 950 ms limit.
func stalled(c facts.ProbeCase) facts.ProbeCase {
	c.Flowed, c.MS = 13312, 951
	return c
}

// cut is c whose transfer line never came (killed during it).
func cut(c facts.ProbeCase) facts.ProbeCase {
	c.Bytes, c.Flowed, c.MS, c.LimitMS = 0, 0, 0, 0
	return c
}

func ranProbe(release string, cases ...facts.ProbeCase) *facts.Probe {
	return &facts.Probe{State: facts.ProbeOK, Release: release, Arch: "x86_64", Python: "3.6.8 /usr/libexec/platform-python",
		PerNetns: "kernel series 4.18 ≥ 4.9", NetnsHost: "net:[4026531992]", NetnsProbe: "net:[4026532301]", Unshare: "unshare(1)",
		HostSyncookiesBefore: "1", HostSyncookiesDuring: "1", HostSyncookiesAfter: "1", RmemMax: 212992,
		Cases: cases, DurationMS: 180, ScriptBytes: 9125, RemoteMS: 12}
}

// stoppedProbe is a probe that ran and stopped part way in state, after cases.
func stoppedProbe(release string, state facts.ProbeState, reason string, cases ...facts.ProbeCase) *facts.Probe {
	p := ranProbe(release, cases...)
	p.State, p.Reason, p.HostSyncookiesDuring = state, reason, ""
	return p
}

func TestKernelSynackWscaleSource(t *testing.T) {
	const (
		el8     = "4.18.0-240.el8.x86_64"
		v61     = "6.1.192" // reads as fixed from the version table
		timeout = "probe budget of 3000 ms spent before the case SO_RCVBUF=65536 (1 of 3 cases measured)"
		killed  = "probe killed after its budget (exit 137: SIGKILL from timeout(1) or SIGALRM)"
	)
	el8Kernel, k61 := facts.Kernel{Release: el8, Distro: "rhel"}, facts.Kernel{Release: v61}
	tests := []struct {
		name   string
		kernel facts.Kernel
		probe  *facts.Probe
		rcvbuf string // socket.receive.buffer.bytes ("" = leave the compliant host's 102400)
		status Status
		sev    Severity
		source Source
		reason []string // substrings
	}{
		// 1. A cookie-completed mismatch decides, whatever happened after it.
		{"mismatch 1 vs 7 at SO_RCVBUF 102400", el8Kernel,
			ranProbe(el8, stalled(probeCase(102400, 1, 7)), stalled(probeCase(65536, 1, 7)), probeCase(212992, 7, 7)), "",
			Fail, Critical, SourceProbe, []string{"with tcp_syncookies=2 this kernel completes SYN-cookie connections with a window scale the client was not told: 1 vs 7 (SO_RCVBUF 102400; 13 KiB of 384 KiB in 951 ms, 14 KB/s, stopped at its 950 ms limit, against 131.1 MB/s with SO_RCVBUF 212992 whose scales agree)",
				"kernel " + el8 + " lacks commit 909172a"}},
		{"mismatch but SO_RCVBUF not set by the broker", el8Kernel,
			ranProbe(el8, stalled(probeCase(102400, 1, 7))), "-1",
			Warn, Low, SourceProbe, []string{"socket.receive.buffer.bytes=-1", "1 vs 7"}},
		{"the user's run: 6.1 reverted, cut after case 1, state timeout", k61,
			stoppedProbe(v61, facts.ProbeTimeout, timeout, stalled(probeCase(102400, 1, 7))), "",
			Fail, Critical, SourceProbe, []string{"kernel 6.1.192 reads as fixed by the version table (kernel 6.1.192: base version 6.1 ≥ 5.10",
				"but this kernel completes SYN-cookie connections with a window scale the client was not told: 1 vs 7 (SO_RCVBUF 102400; 13 KiB of 384 KiB in 951 ms, 14 KB/s, stopped at its 950 ms limit)",
				"it lacks commit 909172a (reverted, or a build without it)", "the probe then stopped (timeout: " + timeout + ")"}},
		{"killed during the first transfer after a mismatch", k61,
			stoppedProbe(v61, facts.ProbeTimeout, killed, cut(probeCase(102400, 1, 7))), "",
			Fail, Critical, SourceProbe, []string{"1 vs 7 (SO_RCVBUF 102400; its transfer did not finish: the probe stopped during it)", "reads as fixed by the version table"}},
		{"truncated output after a mismatch", k61,
			stoppedProbe(v61, facts.ProbeError, "probe output truncated (session cut?)", cut(probeCase(102400, 1, 7))), "",
			Fail, Critical, SourceProbe, []string{"1 vs 7", "the probe then stopped (error: probe output truncated"}},
		{"host-changed after a mismatch", el8Kernel,
			stoppedProbe(el8, facts.ProbeHostChanged, "the host namespace's tcp_syncookies changed", probeCase(102400, 2, 7)), "",
			Fail, Critical, SourceProbe, []string{"2 vs 7"}},
		{"mismatch in the last case only", k61,
			ranProbe(v61, probeCase(102400, 1, 1), probeCase(65536, 1, 1), stalled(probeCase(212992, 2, 7))), "",
			Fail, Critical, SourceProbe, []string{"2 vs 7 (SO_RCVBUF 212992", "against 131.1 MB/s with SO_RCVBUF 102400"}},
		{"probe outranks the version table", facts.Kernel{Release: "6.1.0-13-amd64", Version: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1 (2023-09-29)"},
			ranProbe("6.1.0-13-amd64", stalled(probeCase(102400, 1, 7))), "",
			Fail, Critical, SourceProbe, []string{"kernel 6.1.0-13-amd64 reads as fixed by the version table"}},
		// 2. Finished, every case cookie-completed, equal and flowing: fixed.
		{"consistent on an el8 build", el8Kernel,
			ranProbe(el8, probeCase(102400, 1, 1), probeCase(65536, 1, 1), probeCase(212992, 7, 7)), "",
			Pass, "", SourceProbe, []string{"SO_RCVBUF 102400: client 1 / server 1, 384 KiB in 3 ms, 131.1 MB/s", "its 384 KiB flowed", "handles cookie connections correctly"}},
		{"consistent on 6.1: the probe confirms the version table", k61,
			ranProbe(v61, probeCase(102400, 1, 1)), "",
			Pass, "", SourceProbe, []string{"without the probe: fixed from the version"}},
		// 3. Ran and settled nothing: never a pass from the version table.
		{"equal pairs but a stalled transfer on 6.1", k61,
			ranProbe(v61, stalled(probeCase(102400, 1, 1)), probeCase(65536, 1, 1)), "",
			Unknown, Critical, SourceNone, []string{"cannot tell", "probe inconclusive: the window scales agree", "the transfer with SO_RCVBUF 102400 stalled: 13 KiB of 384 KiB in 951 ms, 14 KB/s",
				"kernel 6.1.192 reads as fixed by the version table", "not overruled"}},
		{"equal pairs but a stalled transfer on el8", el8Kernel,
			ranProbe(el8, stalled(probeCase(102400, 1, 1))), "",
			Unknown, Critical, SourceNone, []string{"probe inconclusive: the window scales agree"}},
		{"no cookie connection proves nothing", el8Kernel,
			ranProbe(el8, facts.ProbeCase{RcvBuf: 102400, ClientSndWscale: 1, ServerRcvWscale: 1, Bytes: 10, Flowed: 10}), "",
			Unknown, Critical, SourceNone, []string{"probe inconclusive: the connection with SO_RCVBUF 102400 did not go through the SYN-cookie path"}},
		{"no cookie connection on 6.1: not a pass", k61,
			ranProbe(v61, facts.ProbeCase{RcvBuf: 102400, ClientSndWscale: 1, ServerRcvWscale: 7, Bytes: 10, Flowed: 10}), "",
			Unknown, Critical, SourceNone, []string{"did not go through the SYN-cookie path", "reads as fixed by the version table"}},
		{"timeout after equal pairs on 6.1", k61,
			stoppedProbe(v61, facts.ProbeTimeout, timeout, probeCase(102400, 1, 1)), "",
			Unknown, Critical, SourceNone, []string{"probe timeout after 1 handshake(s) with equal window scales (SO_RCVBUF 102400: client 1 / server 1, 384 KiB in 3 ms", timeout, "not overruled"}},
		{"killed before any handshake on 6.1 (hung python)", k61,
			stoppedProbe(v61, facts.ProbeTimeout, killed), "",
			Unknown, Critical, SourceNone, []string{"probe timeout before it measured a handshake: " + killed, "reads as fixed by the version table"}},
		{"session failed on 6.1", k61,
			&facts.Probe{State: facts.ProbeError, Release: v61, Reason: "probe session failed: connection reset"}, "",
			Unknown, Critical, SourceNone, []string{"probe error before it measured a handshake: probe session failed"}},
		{"host-changed before any case on 6.1", k61,
			stoppedProbe(v61, facts.ProbeHostChanged, "restored to 1, probe aborted"), "",
			Unknown, Critical, SourceNone, []string{"probe host-changed before it measured a handshake"}},
		{"timeout after equal pairs, version table says affected", facts.Kernel{Release: "4.19.100"},
			stoppedProbe("4.19.100", facts.ProbeTimeout, timeout, probeCase(102400, 1, 1)), "",
			Fail, Critical, SourceVersion, []string{"4.19.158", "probe timeout after 1 handshake(s)"}},
		// 4. Never ran: the changelog / version table decides, the reason stays.
		{"3.10 not per netns: changelog decides, reason kept", facts.Kernel{Release: "3.10.0-1160.el7.x86_64",
			Changelog: &facts.KernelChangelog{Source: "rpm -q --changelog kernel-3.10.0-1160.el7.x86_64"}},
			&facts.Probe{State: facts.ProbeNotPerNetns, Release: "3.10.0-1160.el7.x86_64", Reason: "kernel 3.10.0-1160.el7.x86_64 (series 3.10) is older than 4.9"}, "",
			Fail, Critical, SourceChangelog, []string{"lacks the fix title", "probe not-per-netns: kernel 3.10.0-1160.el7.x86_64 (series 3.10) is older than 4.9"}},
		{"needs root: unknown with the reason", el8Kernel,
			&facts.Probe{State: facts.ProbeNeedsRoot, Release: el8, Reason: "needs root (become): running as uid 1000"}, "",
			Unknown, Critical, SourceNone, []string{"probe needs-root: needs root (become)"}},
		{"needs root on 6.1: the version table decides", k61,
			&facts.Probe{State: facts.ProbeNeedsRoot, Release: v61, Reason: "needs root (become): running as uid 1000"}, "",
			Pass, "", SourceVersion, []string{"base version 6.1", "probe needs-root"}},
		{"no python on 6.1: the version table decides", k61,
			&facts.Probe{State: facts.ProbeNoPython, Release: v61, Reason: "none of python3 /usr/libexec/platform-python found"}, "",
			Pass, "", SourceVersion, []string{"probe no-python"}},
		{"unsupported on 6.1: the version table decides", k61,
			&facts.Probe{State: facts.ProbeUnsupported, Release: v61, Reason: "unshare -n: unshare failed: Operation not permitted"}, "",
			Pass, "", SourceVersion, []string{"probe unsupported"}},
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
			t.Logf("%s/%s: %s", fd.Status, fd.Source, fd.Reason)
			for _, want := range tt.reason {
				if !strings.Contains(fd.Reason, want) {
					t.Errorf("reason lacks %q: %s", want, fd.Reason)
				}
			}
			if tt.probe != nil && len(tt.probe.Cases) > 0 && tt.probe.Release == tt.kernel.Release {
				// Evidence keeps every case, also of a probe that stopped.
				ev := strings.Join(fd.Evidence, "\n")
				if got := strings.Count(ev, "probe: SO_RCVBUF "); got != len(tt.probe.Cases) {
					t.Errorf("evidence shows %d cases, want %d:\n%s", got, len(tt.probe.Cases), ev)
				}
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
	for _, tt := range []struct {
		name  string
		probe *facts.Probe
		want  []string
	}{
		{"ok", ranProbe("4.18.0-240.el8.x86_64", stalled(probeCase(102400, 1, 7)), probeCase(212992, 7, 7)), []string{
			"probe: kernel 4.18.0-240.el8.x86_64, x86_64, python 3.6.8 /usr/libexec/platform-python, 180 ms (12 ms on the host, 9125 bytes sent)",
			"probe: SO_RCVBUF 102400 (effective 204800): client tcpi_snd_wscale 1, server tcpi_rcv_wscale 7, cookie connections 1, 13312/393216 bytes in 951 ms (14 KB/s; stalled, stopped at its 950 ms limit)",
			"probe: SO_RCVBUF 212992 (effective 425984): client tcpi_snd_wscale 7, server tcpi_rcv_wscale 7, cookie connections 1, 393216/393216 bytes in 3 ms (131.1 MB/s)",
			"probe: namespace net:[4026531992] -> net:[4026532301] (unshare(1)); host tcp_syncookies 1 before, 1 during, 1 after",
		}},
		{"stopped: the state, then every case", stoppedProbe("6.1.192", facts.ProbeTimeout, "exit 137", cut(probeCase(102400, 1, 7))), []string{
			"probe: timeout (exit 137)\nprobe: kernel 6.1.192",
			"probe: SO_RCVBUF 102400 (effective 204800): client tcpi_snd_wscale 1, server tcpi_rcv_wscale 7, cookie connections 1, transfer not finished (the probe stopped during it)",
		}},
		{"never ran", &facts.Probe{State: facts.ProbeNeedsRoot, Reason: "needs root (become)"}, []string{"probe: needs-root (needs root (become))"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(probeEvidence(tt.probe), "\n")
			for _, want := range tt.want {
				if !strings.Contains(got, want) {
					t.Errorf("evidence lacks %q:\n%s", want, got)
				}
			}
		})
	}
	if got := probeEvidence(&facts.Probe{State: facts.ProbeNeedsRoot, Reason: "x"}); len(got) != 1 {
		t.Errorf("a probe that never ran shows %d evidence lines: %v", len(got), got)
	}
}

func TestProbeRate(t *testing.T) {
	for _, tt := range []struct {
		n, ms int
		want  string
	}{
		{13312, 951, "14 KB/s"}, {393216, 20, "19.7 MB/s"}, {393216, 0, "over 393.2 MB/s"}, {500, 1000, "500 B/s"}, {8 << 20, 1, "8.4 GB/s"},
	} {
		if got := rate(tt.n, tt.ms); got != tt.want {
			t.Errorf("rate(%d, %d) = %q, want %q", tt.n, tt.ms, got, tt.want)
		}
	}
}
