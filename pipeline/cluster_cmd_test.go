package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
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

// TestFixBootstrap: fix --bootstrap asks the cluster like scan and
// tells the user, who sees only a plan, the cluster's findings.
func TestFixBootstrap(t *testing.T) {
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
	if err := pipeline.Fix(context.Background(), c, pipeline.Fleet{Inventory: inv}, cfg, true, j); err != nil {
		t.Fatalf("Fix: %v\n%s", err, stderr.String())
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
	stopServe(t, cancel, done)
}

// TestScanDiscovered: scan --bootstrap without an inventory audits
// the cluster's brokers, each host its advertised name, connected to
// through ssh_config.
func TestScanDiscovered(t *testing.T) {
	k, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.ClusterID("NoInventory"))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	f := startFleet(t, []*simhost.Host{simhost.DemoFleet()[0]})
	dir := t.TempDir()
	sshConfig := filepath.Join(dir, "ssh_config")
	// kfake advertises 127.0.0.1: that is the host name ssh_config matches.
	cfgText := fmt.Sprintf("Host 127.0.0.1\n  Port %d\n  User kafka\n  IdentityFile %s\n  UserKnownHostsFile %s\n  IdentityAgent none\n", f.Hosts[0].Port, f.KeyFile, f.KnownHosts)
	if err := os.WriteFile(sshConfig, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.json")
	var stderr lockedBuffer
	c := pipeline.Console{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Now: time.Now}
	o, err := pipeline.OutputFlags{Format: "json", Path: out, FailOn: "critical"}.Check("critical", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	bs := k.ListenAddrs()
	j := pipeline.ReportJob{Output: o, Config: pipeline.Config{Concurrency: 1, Timeout: audit.DefaultTimeout, ConnectTimeout: 5 * time.Second, FailOn: rules.Critical,
		Cluster: &pipeline.ClusterSource{Bootstrap: bs, Options: &discover.Options{Bootstrap: bs, Timeout: 10 * time.Second}}}}
	err = pipeline.Scan(context.Background(), c, pipeline.Fleet{Connect: pipeline.ConnectConfig{SSHConfig: sshConfig}}, "", j)
	data, rerr := os.ReadFile(out)
	if rerr != nil {
		t.Fatalf("Scan: %v; no report: %v\n%s", err, rerr, stderr.String())
	}
	var r struct {
		Inventory string `json:"inventory"`
		Hosts     []struct {
			Name  string `json:"name"`
			Error any    `json:"error"`
		} `json:"hosts"`
		Cluster struct {
			ID      string `json:"cluster_id"`
			Brokers []struct {
				Host string `json:"host"`
				By   string `json:"by"`
			} `json:"brokers"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Hosts) != 1 || r.Hosts[0].Name != "127.0.0.1" || r.Hosts[0].Error != nil {
		t.Fatalf("hosts %+v (Scan: %v)\n%s", r.Hosts, err, stderr.String())
	}
	if r.Inventory != "brokers of "+bs[0] || r.Cluster.ID != "NoInventory" || len(r.Cluster.Brokers) != 1 || r.Cluster.Brokers[0].Host != "127.0.0.1" {
		t.Errorf("report %+v", r)
	}
}
