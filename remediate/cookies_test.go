package remediate

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
)

// The plan's SYN-cookie decision for each kernel verdict × its source ×
// the current tcp_syncookies, through the real rules: cookies off (with
// the trade-off) exactly when kernel-synack-wscale fails or is unknown,
// never on a kernel the version table or the probe settled as fixed; a
// forced 2 undone to 1 with a note true for 1; nothing depends on
// whether clients are connected (the facts have none).
func TestCookieDecision(t *testing.T) {
	const (
		fixedByVersion = "6.1.0-13-amd64"        // Debian 6.1.55: the version table says fixed
		affectedByVer  = "4.19.0-12-amd64"       // Debian 4.19.152: before the fix
		unknownRelease = "4.18.0-477.el8.x86_64" // RHEL 8 without its changelog
	)
	probe := func(client, server int, recorded bool) *facts.Probe {
		return &facts.Probe{State: facts.ProbeOK, Recorded: recorded, BootID: "b", HostKey: "k",
			Cases: []facts.ProbeCase{{RcvBuf: 102400, ClientSndWscale: client, ServerRcvWscale: server, CookiesRecv: 1, Bytes: 1 << 16, Flowed: 1 << 16}}}
	}
	for _, tc := range []struct {
		name    string
		release string
		probe   *facts.Probe
		cookies string
		kernel  rules.Status
		source  rules.Source
		to      string // the planned tcp_syncookies, "" none
		note    string
	}{
		{"fixed by version, default", fixedByVersion, nil, "1", rules.Pass, rules.SourceVersion, "", ""},
		{"fixed by version, forced 2", fixedByVersion, nil, "2", rules.Pass, rules.SourceVersion, "1", SyncookiesDefaultNote},
		{"fixed by version, off", fixedByVersion, nil, "0", rules.Pass, rules.SourceVersion, "", ""},
		{"probe proves the bug on a release read as fixed", fixedByVersion, probe(1, 7, false), "1", rules.Fail, rules.SourceProbe, "0", SyncookiesTradeOff},
		{"recorded probe proves the bug", fixedByVersion, probe(1, 7, true), "1", rules.Fail, rules.SourceProbe, "0", SyncookiesTradeOff},
		{"probe proves the bug, forced 2", fixedByVersion, probe(1, 7, false), "2", rules.Fail, rules.SourceProbe, "0", SyncookiesTradeOff},
		{"probe proves the bug, already off", fixedByVersion, probe(1, 7, false), "0", rules.Warn, rules.SourceProbe, "", ""},
		{"probe proves the fix", unknownRelease, probe(7, 7, false), "1", rules.Pass, rules.SourceProbe, "", ""},
		{"probe proves the fix, forced 2", unknownRelease, probe(7, 7, true), "2", rules.Pass, rules.SourceProbe, "1", SyncookiesDefaultNote},
		{"affected by version", affectedByVer, nil, "1", rules.Fail, rules.SourceVersion, "0", SyncookiesTradeOff},
		{"unknown", unknownRelease, nil, "1", rules.Unknown, rules.SourceNone, "0", "planned because the kernel could not be settled as fixed"},
		{"unknown, forced 2", unknownRelease, nil, "2", rules.Unknown, rules.SourceNone, "0", SyncookiesTradeOff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := hostFacts()
			f.Kernel = facts.Kernel{Release: tc.release, Distro: "debian"}
			if strings.Contains(tc.release, "el8") {
				f.Kernel.Distro = "rhel"
			}
			if tc.release == fixedByVersion {
				f.Kernel.Version = "Linux version 6.1.0-13-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1 (2023-09-29)"
			}
			if tc.release == affectedByVer {
				f.Kernel.Version = "Linux version 4.19.0-12-amd64 (debian-kernel@lists.debian.org) #1 SMP Debian 4.19.152-1 (2020-10-18)"
			}
			if tc.probe != nil {
				tc.probe.Release = tc.release
			}
			f.Probe = tc.probe
			f.Sysctl[keySyncookies] = tc.cookies
			f.Established = []facts.LocalConns{} // no client connected while kaudit runs
			findings := rules.Evaluate(f, rules.DefaultProfile())
			var kernel rules.Finding
			for _, fd := range findings {
				if fd.Rule == ruleKernel {
					kernel = fd
				}
			}
			if kernel.Status != tc.kernel || kernel.Source != tc.source {
				t.Fatalf("kernel-synack-wscale %s by %s, want %s by %s: %s", kernel.Status, kernel.Source, tc.kernel, tc.source, kernel.Reason)
			}
			p := PlanHost("h", f, findings, Selector{})
			c := find(p, KindSysctl, keySyncookies)
			switch {
			case tc.to == "" && c != nil:
				t.Fatalf("tcp_syncookies %s → %s planned, want none (note %q)", c.From, c.To, c.Note)
			case tc.to != "" && c == nil:
				t.Fatalf("no tcp_syncookies change, want → %s; warnings %q", tc.to, p.Warnings)
			case c != nil && (c.To != tc.to || !strings.Contains(c.Note, tc.note)):
				t.Fatalf("tcp_syncookies → %s with note %q, want → %s with %q", c.To, c.Note, tc.to, tc.note)
			case c != nil && c.To == "1" && strings.Contains(c.Note, "909172a: the cookie path uses"):
				t.Fatalf("a change to 1 carries the note of 0: %q", c.Note)
			}
			if c != nil && c.To == "0" {
				for _, k := range []string{keySomaxconn, keySynBacklog} {
					if find(p, KindSysctl, k) == nil {
						t.Errorf("cookies off without %s raised: %+v", k, p.Changes)
					}
				}
			}
		})
	}
}

// A plan that leaves cookies on where the kernel is exposed says the
// failure remains possible; one that turns them off does not.
func TestCookiePathOpenWarned(t *testing.T) {
	f := hostFacts() // Debian 4.19.0-12 (release only: unknown), cookies 1, SO_RCVBUF set
	findings := rules.Evaluate(f, rules.DefaultProfile())
	const warning = "the SYN-cookie path stays open after this plan"
	if p := PlanHost("h", f, findings, Selector{Rules: []string{"somaxconn"}}); !hasText(p.Warnings, warning) {
		t.Fatalf("--rules somaxconn: warnings %q, want %q", p.Warnings, warning)
	}
	if p := PlanHost("h", f, findings, Selector{}); hasText(p.Warnings, warning) || find(p, KindSysctl, keySyncookies) == nil {
		t.Fatalf("every rule: warnings %q, changes %+v", p.Warnings, p.Changes)
	}
}
