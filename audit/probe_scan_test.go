package audit

import (
	"context"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/probe"
)

// A host MayProbe refuses gets no probe (the nil runner would panic if
// anything were sent): its state says unproven, with the reason.
func TestProbeHostRefused(t *testing.T) {
	f := &facts.Facts{}
	opt := Options{Probe: &probe.Options{}, MayProbe: func(h inventory.Host, _ *facts.Facts) string { return "not proven: " + h.Name }}
	probeHost(context.Background(), inventory.Host{Name: "b1"}, f, opt)
	if f.Probe == nil || f.Probe.State != facts.ProbeUnproven || f.Probe.Reason != "not proven: b1" {
		t.Errorf("probe %+v, want unproven: not proven: b1", f.Probe)
	}
}
