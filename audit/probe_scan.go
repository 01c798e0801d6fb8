package audit

import (
	"context"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/probe"
)

// probeHost runs the SYN-cookie probe on a gathered host when the scan
// asks for it, with the broker's own socket.receive.buffer.bytes as the
// first case. It has its own bound (probe.Options.Budget + connect
// timeout), so a gather that used most of the host's timeout does not
// starve it; parent still cuts it on Ctrl-C.
func probeHost(parent context.Context, h inventory.Host, f *facts.Facts, opt Options) {
	if opt.Probe == nil || parent.Err() != nil {
		return
	}
	if opt.MayProbe != nil {
		if why := opt.MayProbe(h, f); why != "" {
			f.Probe = &facts.Probe{State: facts.ProbeUnproven, Reason: why}
			return
		}
	}
	rcvbuf := ""
	if f.Kafka != nil {
		rcvbuf = f.Kafka.Properties["socket.receive.buffer.bytes"]
	}
	f.Probe = probe.Run(parent, opt.Runner, Target(h, opt.ConnectTimeout), f.Kernel, rcvbuf, *opt.Probe)
	opt.Probes.Stamp(f.Probe, f)
}
