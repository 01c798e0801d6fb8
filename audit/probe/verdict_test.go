package probe_test

// An external test package: audit/probe never imports rules, but what its
// probe measures on this machine must reach the verdict the user sees.

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/probe"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/rules"
)

// This machine's kernel has commit 909172a: the probe, run for real, must
// make kernel-synack-wscale pass with source probe, naming the pairs and
// the throughput.
func TestProbeThisKernelVerdict(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("needs root on Linux")
	}
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	k := facts.Kernel{Release: strings.TrimSpace(string(b))}
	p := probe.Run(context.Background(), transport.Local{}, transport.Target{Name: "local", Local: true}, k, "", probe.Options{})
	f := &facts.Facts{Kernel: k, Probe: p}
	var fd *rules.Finding
	for _, x := range rules.Evaluate(f, rules.DefaultProfile()) {
		if x.Rule == "kernel-synack-wscale" {
			fd = &x
		}
	}
	if fd == nil {
		t.Fatal("no kernel-synack-wscale finding")
	}
	if fd.Status != rules.Pass || fd.Source != rules.SourceProbe {
		t.Fatalf("%s from %s, want pass from probe; probe %s (%s); reason: %s", fd.Status, fd.Source, p.State, p.Reason, fd.Reason)
	}
	for _, want := range []string{"SO_RCVBUF 102400: client 1 / server 1, 384 KiB in ", "B/s", "handles cookie connections correctly"} {
		if !strings.Contains(fd.Reason, want) {
			t.Errorf("reason lacks %q: %s", want, fd.Reason)
		}
	}
	t.Logf("%s/%s: %s", fd.Status, fd.Source, fd.Reason)
}
