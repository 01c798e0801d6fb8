package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/discover"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/simhost"
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
	j := pipeline.ServeJob{Fleet: pipeline.Fleet{Inventory: inv}, Interval: time.Hour, Reload: make(chan struct{}), WatchEvery: time.Hour}
	j.Config = pipeline.Config{Concurrency: 1, Timeout: audit.DefaultTimeout, ConnectTimeout: 5 * time.Second, FailOn: rules.High,
		Cluster: &pipeline.ClusterSource{Bootstrap: []string{closed}, Options: &discover.Options{Bootstrap: []string{closed}, Timeout: 2 * time.Second}}}
	addr, stderr, stop := startServe(t, dir, j)
	waitFor(t, "failed cycle", func() bool {
		return strings.Contains(scrapeServe(t, addr), `kaudit_scans_total{result="error"} 1`+"\n")
	})
	if !strings.Contains(stderr.String(), "scan could not run") || !strings.Contains(stderr.String(), closed) {
		t.Errorf("the log does not name the bootstrap failure:\n%s", stderr.String())
	}
	stop()
}

// startServe runs Serve with j (listening on a free loopback port, its
// state in dir) until stop, which checks that it returns; addr is where
// it listens, stderr its log.
func startServe(t *testing.T, dir string, j pipeline.ServeJob) (addr string, stderr *lockedBuffer, stop func()) {
	t.Helper()
	stderr = &lockedBuffer{}
	c := pipeline.Console{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr, Now: time.Now}
	addrc := make(chan net.Addr, 1)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	j.Listen, j.StateDir, j.Version = "127.0.0.1:0", filepath.Join(dir, "state"), "test"
	j.Listening = func(a net.Addr) { addrc <- a }
	go func() { done <- pipeline.Serve(ctx, c, j) }()
	select {
	case a := <-addrc:
		addr = a.String()
	case err := <-done:
		t.Fatalf("Serve: %v\n%s", err, stderr.String())
	}
	return addr, stderr, func() { stopServe(t, cancel, done) }
}

// kfakeCluster is a kfake cluster of n brokers with cluster id id,
// closed when the test ends.
func kfakeCluster(t *testing.T, n int, id string) *kfake.Cluster {
	t.Helper()
	k, err := kfake.NewCluster(kfake.NumBrokers(n), kfake.ClusterID(id))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
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
	// kfake advertises 127.0.0.1: that is the host name ssh_config matches.
	sshConfig := aliasSSHConfig(t, f, map[string]int{"127.0.0.1": 0})
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

// aliasSSHConfig writes an ssh_config naming hosts of f by aliases
// (alias → index in f.Hosts), as a fleet without an inventory reaches them.
func aliasSSHConfig(t *testing.T, f *simhost.Fleet, aliases map[string]int) string {
	t.Helper()
	var b strings.Builder
	for alias, i := range aliases {
		fmt.Fprintf(&b, "Host %s\n  HostName 127.0.0.1\n  Port %d\n  User kafka\n  IdentityFile %s\n  UserKnownHostsFile %s\n  IdentityAgent none\n", alias, f.Hosts[i].Port, f.KeyFile, f.KnownHosts)
	}
	p := filepath.Join(t.TempDir(), "ssh_config")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// kfakeSource is the ClusterSource of kfake cluster k, its brokers named
// by the map file mapFile ("" none).
func kfakeSource(k *kfake.Cluster, mapFile string) *pipeline.ClusterSource {
	bs := k.ListenAddrs()
	return &pipeline.ClusterSource{Bootstrap: bs, MapFile: mapFile, Options: &discover.Options{Bootstrap: bs, Timeout: 10 * time.Second}}
}

// TestFixFleetDiscovered: fix --bootstrap without an inventory plans for
// the cluster's brokers, each host named by the map file and reached
// through ssh_config.
func TestFixFleetDiscovered(t *testing.T) {
	k := kfakeCluster(t, 2, "FixNoInventory")
	f := startFleet(t, simhost.DemoFleet()[:2])
	conf, src := twoMappedBrokers(t, k, f)
	var stdout, stderr lockedBuffer
	c := pipeline.Console{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Now: time.Now}
	cfg := pipeline.Config{Concurrency: 2, Timeout: audit.DefaultTimeout, ConnectTimeout: 5 * time.Second, FailOn: rules.High, Cluster: src}
	j := pipeline.FixJob{Config: pipeline.ApplyConfig{Batch: 1}}
	if err := pipeline.Fix(context.Background(), c, pipeline.Fleet{Connect: pipeline.ConnectConfig{SSHConfig: conf}}, cfg, true, j); err != nil {
		t.Fatalf("Fix: %v\n%s", err, stderr.String())
	}
	for _, h := range []string{"broker-a", "broker-b"} {
		if !strings.Contains(stdout.String(), h) {
			t.Errorf("the plan has no host %s:\n%s", h, stdout.String())
		}
	}
}

// twoMappedBrokers is the ssh_config naming f's first two hosts broker-a
// and broker-b, and the ClusterSource of kfake cluster k with a map file
// pinning its brokers 0 and 1 to them.
func twoMappedBrokers(t *testing.T, k *kfake.Cluster, f *simhost.Fleet) (string, *pipeline.ClusterSource) {
	t.Helper()
	conf := aliasSSHConfig(t, f, map[string]int{"broker-a": 0, "broker-b": 1})
	mapFile := filepath.Join(t.TempDir(), "map.yaml")
	if err := os.WriteFile(mapFile, []byte("0: broker-a\n1: broker-b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := kfakeSource(k, mapFile)
	var err error
	if src.Map, err = discover.LoadMap(mapFile); err != nil {
		t.Fatal(err)
	}
	return conf, src
}

// TestServeDiscovered: serve --bootstrap without an inventory asks the
// cluster before every scan: a broker added is scanned at the next one,
// a broker removed is gone from it, and a reload reads the map file again.
func TestServeDiscovered(t *testing.T) {
	k := kfakeCluster(t, 1, "ServeNoInventory")
	f := startFleet(t, simhost.DemoFleet()[:2])
	conf := aliasSSHConfig(t, f, map[string]int{"broker-a": 0, "broker-b": 1, "broker-b2": 1})
	dir := t.TempDir()
	mapFile := filepath.Join(dir, "map.yaml")
	writeMap := func(m string) {
		if err := os.WriteFile(mapFile, []byte(m), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeMap("0: broker-a\n1: broker-b\n")
	reload := make(chan struct{}, 1)
	j := pipeline.ServeJob{Fleet: pipeline.Fleet{Connect: pipeline.ConnectConfig{SSHConfig: conf}}, Interval: time.Second, Reload: reload, WatchEvery: -1}
	j.Config = pipeline.Config{Concurrency: 2, Timeout: audit.DefaultTimeout, ConnectTimeout: 5 * time.Second, FailOn: rules.High, Cluster: kfakeSource(k, mapFile)}
	addr, stderr, stop := startServe(t, dir, j)
	served := func(want ...string) func() bool {
		return func() bool {
			resp, err := http.Get("http://" + addr + "/report.json")
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			var r struct {
				Hosts []struct {
					Name  string `json:"name"`
					Error any    `json:"error"`
				} `json:"hosts"`
			}
			if json.NewDecoder(resp.Body).Decode(&r) != nil || len(r.Hosts) != len(want) {
				return false
			}
			for i, h := range r.Hosts {
				if h.Name != want[i] || h.Error != nil {
					return false
				}
			}
			return true
		}
	}
	waitFor(t, "broker-a served", served("broker-a"))
	id, _, err := k.AddNode(1, 0)
	if err != nil || id != 1 {
		t.Fatalf("AddNode: %d %v", id, err)
	}
	waitFor(t, "the added broker served", served("broker-a", "broker-b"))
	if !strings.Contains(stderr.String(), "kaudit serve: the cluster's brokers changed: 2 hosts\n") {
		t.Errorf("the log does not say the brokers changed:\n%s", stderr.String())
	}
	writeMap("0: broker-a\n1: broker-b2\n")
	reload <- struct{}{}
	waitFor(t, "the map file read again", served("broker-a", "broker-b2"))
	if err := k.RemoveNode(1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the removed broker gone", served("broker-a"))
	stop()
}

// TestScanDiscoveredLimited: scan --bootstrap --limit audits the brokers
// the limit selects; a broker it leaves out is named with its host and
// "left out", never "in no inventory": no broker-unaudited for it.
func TestScanDiscoveredLimited(t *testing.T) {
	k := kfakeCluster(t, 2, "LimitedScan")
	f := startFleet(t, simhost.DemoFleet()[:2])
	conf, src := twoMappedBrokers(t, k, f)
	out := filepath.Join(t.TempDir(), "report.json")
	var stderr lockedBuffer
	c := pipeline.Console{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Now: time.Now}
	o, err := pipeline.OutputFlags{Format: "json", Path: out, FailOn: "critical"}.Check("critical", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	j := pipeline.ReportJob{Output: o, Config: pipeline.Config{Concurrency: 1, Timeout: audit.DefaultTimeout, ConnectTimeout: 5 * time.Second, FailOn: rules.Critical, Cluster: src}}
	err = pipeline.Scan(context.Background(), c, pipeline.Fleet{Connect: pipeline.ConnectConfig{SSHConfig: conf}, Limit: "broker-a"}, "", j)
	r, lerr := report.Load(out)
	if lerr != nil {
		t.Fatalf("Scan: %v; %v\n%s", err, lerr, stderr.String())
	}
	if len(r.Hosts) != 1 || r.Hosts[0].Name != "broker-a" || r.Cluster == nil || len(r.Cluster.Brokers) != 2 {
		t.Fatalf("hosts %d, cluster %+v\n%s", len(r.Hosts), r.Cluster, stderr.String())
	}
	if b := r.Cluster.Brokers[1]; b.Host != "broker-b" || b.By != "map" || b.Proof != facts.ProofLeftOut {
		t.Errorf("broker 1: %+v, want broker-b by map, left out", b)
	}
	for _, p := range r.Cluster.Problems {
		if p.Rule == "broker-unaudited" {
			t.Errorf("a broker left out by --limit is called unaudited: %s", p.Message)
		}
	}
}
