package probe

import (
	"context"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/transport"
)

// BenchmarkProbeLocal is the probe's cost on this machine without SSH
// (root only): wall time per run, bytes of script sent, time on the host.
func BenchmarkProbeLocal(b *testing.B) {
	if !isRoot() {
		b.Skip("needs root on Linux")
	}
	k := facts.Kernel{Release: osRelease()}
	// The system python first: a PATH python3 may be a slow wrapper (pyenv
	// shims are bash scripts) that is not the probe's cost.
	opt := Options{Pythons: []string{"/usr/bin/python3", "python3"}}
	var p *facts.Probe
	for i := 0; i < b.N; i++ {
		p = Run(context.Background(), transport.Local{}, transport.Target{Name: "local", Local: true}, k, "", opt)
		if p.State != facts.ProbeOK {
			b.Fatalf("%s: %s", p.State, p.Reason)
		}
	}
	b.ReportMetric(float64(p.ScriptBytes), "script-bytes/op")
	b.ReportMetric(float64(p.RemoteMS), "host-ms/op")
}
