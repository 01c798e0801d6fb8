package pipeline

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/report"
)

// The fix plan of 1,000 simulated hosts counts its changes by group, with
// their hosts per cluster, before it lists hosts; 10 hosts' plan does not.
func TestPlanChangesByGroup(t *testing.T) {
	demo, err := report.Load("../report/testdata/demo.json")
	if err != nil {
		t.Fatal(err)
	}
	var small bytes.Buffer
	WritePlan(&small, report.Simulated(demo, 10, 3), remediate.Selector{}, nil, 0)
	if strings.Contains(small.String(), "Changes by group") {
		t.Errorf("10 hosts' plan grouped:\n%.500s", small.String())
	}
	r := report.Simulated(demo, 1000, 3)
	var b bytes.Buffer
	WritePlan(&b, r, remediate.Selector{}, nil, 0)
	out := b.String()
	groups := strings.Index(out, "Changes by group (900 audited hosts; each host's plan follows):")
	firstHost := strings.Index(out, "\nsim-00000-centos7")
	if groups < 0 || firstHost < 0 || groups > firstHost {
		t.Fatalf("changes by group at %d, the first host at %d:\n%.1500s", groups, firstHost, out)
	}
	// somaxconn is one change on 400 hosts (the report's first action),
	// whichever of its six rules asked for it on each.
	m := regexp.MustCompile(`(?m)^  (\d+) hosts: sysctl net\.core\.somaxconn → 4096 \([^)]*\)( \[restart required\])?; prod-1 (\d+), prod-2 (\d+), prod-3 (\d+)$`).FindStringSubmatch(out[groups:firstHost])
	if m == nil {
		t.Fatalf("no somaxconn group:\n%s", out[groups:firstHost])
	}
	if m[1] != "400" || m[3]+m[4]+m[5] != "134134132" {
		t.Errorf("somaxconn group: %s", m[0])
	}
}
