package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kaudit/kaudit/discover"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/simhost"
)

// hostileCluster is a kfake broker whose Metadata answer is an attacker's:
// a cluster id of idLen bytes and brokers more brokers, none of them an
// inventory host (loopback addresses where nothing listens on port 9, so
// asking them fails at once).
func hostileCluster(tb testing.TB, idLen, brokers int) []string {
	k, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(k.Close)
	id := strings.Repeat("C", idLen)
	k.ControlKey(int16(kmsg.Metadata), func(req kmsg.Request) (kmsg.Response, error, bool) {
		k.KeepControl()
		resp := req.(*kmsg.MetadataRequest).ResponseKind().(*kmsg.MetadataResponse)
		resp.ClusterID, resp.ControllerID = &id, 0
		var port int32
		fmt.Sscanf(k.ListenAddrs()[0][strings.LastIndexByte(k.ListenAddrs()[0], ':')+1:], "%d", &port)
		resp.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 0, Host: "127.0.0.1", Port: port}}
		for i := 1; i <= brokers; i++ {
			resp.Brokers = append(resp.Brokers, kmsg.MetadataResponseBroker{NodeID: int32(i), Host: fmt.Sprintf("127.0.%d.%d", 1+i/250, 1+i%250), Port: 9})
		}
		return resp, nil, true
	})
	return k.ListenAddrs()
}

// BenchmarkHostileCluster is issue 34 row 6: scan INVENTORY --bootstrap
// of a cluster whose id is 1 MB and whose 300 brokers are in no inventory
// (it took 19 s, 2.7 GB peak RSS and wrote a 304 MB JSON report: the id
// was copied into every broker's finding); and, for the report's size,
// the same cluster with the largest id kaudit accepts (64 bytes). It
// reports the JSON report's bytes and the process's peak RSS (run each
// case alone: -bench 'HostileCluster/1MB').
func BenchmarkHostileCluster(b *testing.B) {
	f := startFleet(b, []*simhost.Host{simhost.DemoFleet()[2]})
	for _, tc := range []struct {
		name           string
		idLen, brokers int
		refused        bool
	}{{"1MB-id-300-brokers", 1 << 20, 300, true}, {"64B-id-300-brokers", discover.MaxClusterID, 300, false}, {"22B-id-50000-brokers", 22, 50000, true}} {
		bs := hostileCluster(b, tc.idLen, tc.brokers)
		b.Run(tc.name, func(b *testing.B) {
			cfg := pipeline.Config{Concurrency: 4, Timeout: 20 * time.Second, ConnectTimeout: 5 * time.Second, Profile: rules.DefaultProfile(),
				Cluster: &pipeline.ClusterSource{Bootstrap: bs, Options: &discover.Options{Bootstrap: bs, Timeout: 10 * time.Second}}}
			var size int64
			for i := 0; i < b.N; i++ {
				r, err := pipeline.Audit(context.Background(), f.Hosts, cfg)
				var de *discover.Error
				if tc.refused {
					if !errors.As(err, &de) || de.Kind != discover.Refused {
						b.Fatalf("error %.200v, want the reply refused", err)
					}
					continue
				}
				if err != nil {
					b.Fatal(err)
				}
				w := &countWriter{}
				if err := report.Render(w, "json", r, report.Options{}); err != nil {
					b.Fatal(err)
				}
				size = w.n
			}
			var ru syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			b.ReportMetric(float64(size), "report-bytes")
			b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
		})
	}
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)
