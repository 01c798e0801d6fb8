package remediate

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
)

// Verified is not the risk gone: after a run, the kernel rule evaluated
// again on the re-gathered facts says which of the two (kernel, cookie
// path) is still open.
func TestResidualOf(t *testing.T) {
	kernel := func(st rules.Status, src rules.Source) []rules.Finding {
		return []rules.Finding{{Rule: rules.RuleKernelSynackWscale, Status: st, Source: src, Reason: "why"}}
	}
	for _, tc := range []struct {
		name                 string
		cookies              string
		findings             []rules.Finding
		pending              bool
		kernelOpen, pathOpen bool
		text                 string
	}{
		{"affected, cookies off", "0", kernel(rules.Warn, rules.SourceProbe), true, true, false,
			"the kernel still lacks commit 909172a or may (kernel-synack-wscale warn, by probe): only a kernel upgrade closes it; the SYN-cookie path is closed (tcp_syncookies=0); the raised listen backlog is pending a broker restart"},
		{"affected, cookies kept on (rule not selected or waived)", "1", kernel(rules.Fail, rules.SourceProbe), false, true, true,
			"the SYN-cookie path is still OPEN (tcp_syncookies=1): the failure remains possible"},
		{"unknown, cookies on", "1", kernel(rules.Unknown, rules.SourceNone), false, true, true, "kernel-synack-wscale unknown): only"},
		{"fixed", "1", kernel(rules.Pass, rules.SourceVersion), false, false, false, "the failure is not possible here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &facts.Facts{Sysctl: map[string]string{rules.KeySyncookies: tc.cookies}}
			r := ResidualOf(f, tc.findings, tc.pending)
			if r.KernelOpen != tc.kernelOpen || r.CookiePathOpen != tc.pathOpen || r.Syncookies != tc.cookies {
				t.Fatalf("%+v", r)
			}
			if !strings.Contains(r.Text(), tc.text) {
				t.Fatalf("text %q, want %q", r.Text(), tc.text)
			}
		})
	}
}
