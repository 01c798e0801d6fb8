package bench_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/gather"
	"github.com/kaudit/kaudit/rules"
)

// BenchmarkGatherScriptHost is the gather's cost on the host without
// sshd: the script run under dash on this machine, one op one run, and
// the host's CPU (the shell's and every program's it starts, user+sys
// from getrusage(RUSAGE_CHILDREN)) reported per run as host-cpu-ms/op.
// "no-broker" is the host bench/peers.sh measures (no Kafka process);
// "sasl-broker" reads a server.properties with a SASL listener, so the
// rdns section resolves the host's own address and 7 peers' (loopback
// names and addresses: /etc/hosts answers, the cost is the programs'
// starts). Run it with -benchtime=50x or more: a run is tens of ms.
func BenchmarkGatherScriptHost(b *testing.B) {
	if _, err := exec.LookPath("dash"); err != nil {
		b.Skip("no dash")
	}
	dir := b.TempDir()
	conf := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(conf, []byte("listeners=CLIENT://:9092\nlistener.security.protocol.map=CLIENT:SASL_SSL\nlog.dirs="+dir+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	base := gather.Params{KafkaPort: 9092, SysctlKeys: rules.SysctlKeys(), Files: rules.Files()}
	sasl := base
	sasl.KafkaConfig = conf
	sasl.RDNSSelf = "127.0.0.1"
	sasl.RDNSPeers = []string{"localhost", "127.0.0.1", "127.0.0.1", "127.0.0.1", "localhost", "127.0.0.1", "127.0.0.1"}
	for _, c := range []struct {
		name string
		p    gather.Params
	}{{"no-broker", base}, {"sasl-broker", sasl}} {
		b.Run(c.name, func(b *testing.B) {
			script, err := gather.Script(c.p)
			if err != nil {
				b.Fatal(err)
			}
			var before syscall.Rusage
			if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				cmd := exec.CommandContext(context.Background(), "dash", "-s")
				cmd.Stdin = strings.NewReader(string(script))
				if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), " done") {
					b.Fatalf("gather script: %v", err)
				}
			}
			b.StopTimer()
			var after syscall.Rusage
			if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after); err != nil {
				b.Fatal(err)
			}
			cpu := tv(after.Utime) + tv(after.Stime) - tv(before.Utime) - tv(before.Stime)
			b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "host-cpu-ms/op")
		})
	}
}

func tv(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}
