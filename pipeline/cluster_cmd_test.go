package pipeline_test

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/discover"
	"github.com/kaudit/kaudit/internal/simhost"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/rules"
)

// TestFixFleetBootstrap: fix --bootstrap asks the cluster like scan and
// tells the user, who sees only a plan, the cluster's findings.
func TestFixFleetBootstrap(t *testing.T) {
	k, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.ClusterID("FixCluster"))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	f := startFleet(t, []*simhost.Host{simhost.DemoFleet()[0]})
	inv := filepath.Join(t.TempDir(), "inventory.yaml")
	serveInventory(t, inv, f, 1)
	var stderr lockedBuffer
	c := pipeline.Console{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Now: time.Now}
	bs := k.ListenAddrs()
	cfg := pipeline.Config{Concurrency: 1, Timeout: audit.DefaultTimeout, ConnectTimeout: 5 * time.Second, FailOn: rules.High,
		Cluster: &pipeline.ClusterSource{Bootstrap: bs, Options: &discover.Options{Bootstrap: bs, Timeout: 10 * time.Second}}}
	j := pipeline.FixJob{Config: pipeline.ApplyConfig{Batch: 1}}
	if err := pipeline.FixFleet(context.Background(), c, pipeline.Fleet{Inventory: inv}, cfg, true, j); err != nil {
		t.Fatalf("FixFleet: %v\n%s", err, stderr.String())
	}
	// kfake's two brokers both advertise 127.0.0.1, the host's address:
	// one is matched to it, the other is unaudited.
	for _, want := range []string{"cluster FixCluster: broker-unaudited (high): broker ", "cluster FixCluster: advertised-shared"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestServeBootstrapFailure: a bootstrap that does not answer fails the
// cycle (the log and kaudit_scans_total say so); the server keeps serving.
func TestServeBootstrapFailure(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close() // nothing listens there now
	f := startFleet(t, []*simhost.Host{simhost.DemoFleet()[0]})
	dir := t.TempDir()
	inv := filepath.Join(dir, "inventory.yaml")
	serveInventory(t, inv, f, 1)
	var stderr lockedBuffer
	c := pipeline.Console{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Now: time.Now}
	addrc := make(chan net.Addr, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	j := pipeline.ServeJob{Fleet: pipeline.Fleet{Inventory: inv}, Interval: time.Hour, Listen: "127.0.0.1:0",
		StateDir: filepath.Join(dir, "state"), Reload: make(chan struct{}), WatchEvery: time.Hour,
		Listening: func(a net.Addr) { addrc <- a }, Version: "test"}
	j.Config = pipeline.Config{Concurrency: 1, Timeout: audit.DefaultTimeout, ConnectTimeout: 5 * time.Second, FailOn: rules.High,
		Cluster: &pipeline.ClusterSource{Bootstrap: []string{closed}, Options: &discover.Options{Bootstrap: []string{closed}, Timeout: 2 * time.Second}}}
	go func() { done <- pipeline.Serve(ctx, c, j) }()
	var addr string
	select {
	case a := <-addrc:
		addr = a.String()
	case err := <-done:
		t.Fatalf("Serve: %v\n%s", err, stderr.String())
	}
	waitFor(t, "failed cycle", func() bool {
		return strings.Contains(scrapeServe(t, addr), `kaudit_scans_total{result="error"} 1`+"\n")
	})
	if !strings.Contains(stderr.String(), "scan could not run") || !strings.Contains(stderr.String(), closed) {
		t.Errorf("the log does not name the bootstrap failure:\n%s", stderr.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after its context ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
}
