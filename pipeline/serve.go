package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/fanout"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/serve"
	"github.com/kaudit/kaudit/waiver"
)

// ServeJob is kaudit serve: the fleet scanned every Interval, the last
// report served over HTTP (package serve).
type ServeJob struct {
	// Fleet is the hosts scanned; without an inventory, the brokers of
	// Config.Cluster, asked again before every scan.
	Fleet       Fleet
	Config      Config // the scans' fan-out; its Profile is reloaded from ProfileFile, its Cluster's map from its MapFile
	ProfileFile string // --profile ("" the default thresholds)
	Waivers     string // --waivers ("" none)

	Interval time.Duration // between the starts of two scans
	Jitter   float64       // each wait is Interval ± up to Jitter × Interval (0 to 0.5)
	// Listen is the address served (host:port; a port 0 picks one, see
	// Listening); WebConfigFile the exporter toolkit's TLS and basic-auth
	// file ("" plain HTTP).
	Listen, WebConfigFile string
	// HealthListen, when set, serves /healthz and /readyz alone, plain
	// HTTP without authentication, for probes that carry no credentials
	// (Kubernetes'): serve.HealthHandler.
	HealthListen string
	StateDir     string // the last report kept here ("" not kept)
	HostRules    bool   // per host × rule series in /metrics
	// KeepConnections keeps each host's SSH connection from one scan to
	// the next (a new session on it; transport.SSH.KeepConnections): as
	// many as the open-file limit allows besides the fan-out, at most
	// KeepMax (0: DefaultKeepMax).
	KeepConnections bool
	KeepMax         int

	// Reload receives a value when the inventory, profile, waivers and
	// broker map are to be read again, then a scan run (SIGHUP: HangUps).
	// The files are also checked for a change every WatchEvery (0: 5 s;
	// < 0: never).
	Reload     <-chan struct{}
	WatchEvery time.Duration
	// Listening, when set, is called with the address once it is bound.
	Listening func(net.Addr)
	Version   string // kaudit_build_info
}

// DefaultInterval is kaudit serve's time between scans.
const DefaultInterval = 15 * time.Minute

// DefaultKeepMax bounds the SSH connections serve keeps between scans:
// each holds ≈ 60 KB (x/crypto's read cipher buffer, sized by the largest
// packet, its goroutines and buffers; bench/serve.sh), so 500 take
// ≈ 30 MB and serve's RSS stays under 80 MB at 1,000 hosts and under
// 400 MB at 10,000 (issue 31). A connection kept saves the host one key
// exchange per scan, worth little every 15 minutes.
const DefaultKeepMax = 500

// DefaultListen is kaudit serve's address: loopback unless told otherwise.
const DefaultListen = "127.0.0.1:9874"

// Check validates the job before anything is read or bound.
func (j ServeJob) Check() error {
	switch {
	case j.Interval < time.Second:
		return located.Hint(fmt.Errorf("--interval %v", j.Interval), "give at least 1s (e.g. 15m)")
	case j.Jitter < 0 || j.Jitter > 0.5:
		return located.Hint(fmt.Errorf("--jitter %v", j.Jitter), "give a fraction of --interval from 0 to 0.5")
	case j.Fleet.Inventory == "-" || (j.Fleet.Inventory == "" && j.Config.Cluster == nil):
		return located.Hint(errors.New("serve needs an INVENTORY file (not stdin: it is read again on SIGHUP and when it changes)"), "give an inventory file, or --bootstrap HOST:PORT")
	}
	if _, _, err := net.SplitHostPort(j.Listen); err != nil {
		return located.Hint(fmt.Errorf("--listen %q: %v", j.Listen, err), "give HOST:PORT (e.g. "+DefaultListen+"; :9874 listens on every address)")
	}
	_, err := serve.ReadWebConfig(j.WebConfigFile)
	return err
}

// DefaultStateDir is kaudit serve's --state-dir: systemd's
// $STATE_DIRECTORY (StateDirectory=), else $XDG_STATE_HOME/kaudit, else
// ~/.local/state/kaudit.
func DefaultStateDir() string {
	if d := os.Getenv("STATE_DIRECTORY"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "kaudit")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "kaudit")
	}
	return ""
}

// HangUps is a channel that receives a value on each SIGHUP until ctx ends
// (ServeJob.Reload).
func HangUps(ctx context.Context) <-chan struct{} {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP)
	out := make(chan struct{}, 1)
	go func() {
		defer signal.Stop(sig)
		for {
			select {
			case <-ctx.Done():
				return
			case <-sig:
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out
}

// served is what a load of the inventory (or the cluster's brokers),
// profile and waivers gives.
type served struct {
	inventory string // the report's: the file, or "brokers of BOOTSTRAP"
	// fresh: hosts are the cluster's answer of this load, not yet scanned
	// (without an inventory, every later scan asks the cluster again).
	fresh   bool
	hosts   []inventory.Host
	cfg     Config
	waivers waiver.Waivers
	runner  *transport.SSH
	stamp   string // the files' sizes and times, to notice a change
}

func (s *served) close() {
	if s != nil && s.runner != nil {
		s.runner.Close()
	}
}

// Serve is kaudit serve. It loads the fleet (an error here is returned:
// nothing is served), serves the report the state directory holds (an
// unreadable one is a warning), then runs serve.Run with one scan of the
// fleet as its callback: a scan at once, or when the loaded report is
// Interval old; then every Interval (± Jitter), and again after a reload.
// ctx ending (SIGTERM) interrupts a scan in progress, which is not served,
// and stops the server; Serve then returns nil.
func Serve(ctx context.Context, c Console, j ServeJob) error {
	if err := j.Check(); err != nil {
		return err
	}
	ctx, stop := interruptible(ctx)
	defer stop()
	if err := serve.MakeStateDir(j.StateDir); err != nil {
		return err
	}
	cur, err := loadServed(ctx, c, j)
	if err != nil {
		return err
	}
	defer func() { cur.close() }()

	srv := serve.New(serve.Options{StateDir: j.StateDir, HostRules: j.HostRules, Version: j.Version, Now: c.Now, MaxStateBytes: serve.StateLimit(len(cur.hosts)), SpoolDir: spoolDir(j)})
	srv.SetWaivers(waiverExpiries(cur.waivers))
	if err := srv.LoadState(); err != nil {
		c.Warn(err.Error())
	}
	return serve.Run(ctx, srv, serve.Loop{
		Listen: j.Listen, HealthListen: j.HealthListen, WebConfigFile: j.WebConfigFile, Listening: j.Listening, Hosts: len(cur.hosts),
		Interval: j.Interval, Jitter: j.Jitter, Reload: j.Reload, WatchEvery: j.WatchEvery,
		Changed: func() bool { return fileStamp(j) != cur.stamp },
		Scan:    func(ctx context.Context) (*report.Report, error) { return cur.scan(ctx, c, j) },
		Refresh: func(ctx context.Context) error {
			next, err := loadServed(ctx, c, j)
			if err != nil {
				cur.stamp = fileStamp(j) // warn once per change
				return err
			}
			cur.close()
			cur = next
			srv.SetWaivers(waiverExpiries(cur.waivers))
			fmt.Fprintf(c.Stderr, "kaudit serve: reloaded: %d hosts\n", len(cur.hosts))
			return nil
		},
		Log: c.Stderr, Warn: c.Warn, Now: c.Now,
	})
}

// scan is one scan of s, its waivers applied; without an inventory the
// cluster is asked for its brokers first (rediscover).
func (s *served) scan(ctx context.Context, c Console, j ServeJob) (*report.Report, error) {
	if err := s.rediscover(ctx, c, j); err != nil {
		return nil, err
	}
	r, err := Audit(ctx, s.hosts, s.cfg)
	if err != nil || r.Interrupted {
		return r, err
	}
	r.Inventory = s.inventory
	waive(c, r, s.waivers)
	return r, nil
}

// loadServed reads the inventory (--limit applied) or asks the cluster
// for its brokers, reads the profile, waivers and broker map, and
// connects (known_hosts checked).
func loadServed(ctx context.Context, c Console, j ServeJob) (*served, error) {
	s := &served{stamp: fileStamp(j), cfg: j.Config}
	var err error
	if s.cfg.Cluster, err = j.Config.Cluster.reread(); err != nil {
		return nil, err
	}
	inv, hosts, err := j.Fleet.loadOrDiscover(ctx, c, s.cfg.Cluster)
	if err != nil {
		return nil, err
	}
	s.inventory, s.fresh = inv.Path, j.Fleet.Inventory == ""
	s.cfg.ClientsGroup = clientsGroup(j.Config.ClientsGroup, inv)
	if s.cfg.Profile, err = loadProfile(j.ProfileFile); err != nil {
		return nil, err
	}
	if s.waivers, err = loadWaivers(j.Waivers); err != nil {
		return nil, err
	}
	if err := s.connect(c, j, hosts); err != nil {
		return nil, err
	}
	s.cfg.SpoolDir = spoolDir(j)
	// The served report holds each host's findings; its facts wait on
	// disk for /report.json and /report.html (serve.Server), so a fleet
	// of 10,000 is not held in memory once per scan.
	s.cfg.SpoolFacts = canSpool(c, s.cfg.SpoolDir)
	return s, nil
}

// spoolDir is where serve spools the facts: --state-dir, writable by
// design (a container's /tmp may not be), unless the job names one.
func spoolDir(j ServeJob) string {
	if j.Config.SpoolDir == "" {
		return j.StateDir
	}
	return j.Config.SpoolDir
}

// connect makes s scan hosts: their profiles resolved, a runner for them
// (the previous one closed), their connections kept between scans when
// j asks and the open-file limit allows.
func (s *served) connect(c Console, j ServeJob, hosts []inventory.Host) error {
	if _, err := profiles(hosts, s.cfg.Profile); err != nil {
		return err
	}
	runner, err := j.Fleet.connect(c, hosts, &s.cfg.Concurrency)
	if err != nil {
		return err
	}
	if j.KeepConnections {
		runner.KeepConnections, runner.MaxKept = true, keepCount(c, j, len(hosts), s.cfg.Concurrency)
		runner.KeepConnections = runner.MaxKept > 0
	}
	s.close()
	s.hosts, s.runner, s.cfg.Runner = hosts, runner, runner
	return nil
}

// keepCount is how many of hosts' SSH connections serve keeps between
// scans: as many as the open-file limit leaves beside the fan-out and the
// HTTP connections (the Go runtime has raised the soft limit to the hard
// one at start), and at most --keep-max (each ≈ 60 KB); it says how many
// and, when not all, why and what to do.
func keepCount(c Console, j ServeJob, hosts, concurrency int) int {
	max := j.KeepMax
	if max <= 0 {
		max = DefaultKeepMax
	}
	fit, need, limit := fanout.KeptFit(hosts, concurrency, serve.DefaultMaxConns)
	n := min(hosts, fit, max)
	switch {
	case n == hosts:
		fmt.Fprintf(c.Stderr, "kaudit serve: keeps %d of %d SSH connections between scans\n", n, hosts)
	case fit < max:
		c.Warnf("kaudit serve keeps %d of %d SSH connections between scans: the open-file limit is %d, all would need %d (raise it: ulimit -n, LimitNOFILE=, the container's nofile); the others connect anew each scan", n, hosts, limit, need)
	default:
		fmt.Fprintf(c.Stderr, "kaudit serve: keeps %d of %d SSH connections between scans (--keep-max %d: each holds ≈ 60 KB); the others connect anew each scan\n", n, hosts, max)
	}
	return n
}

// rediscover readies s for a scan without an inventory: unless its hosts
// are the cluster's answer of this load, the cluster is asked again, the
// scan given that answer, and when its brokers are not the hosts s scans
// they are connected to instead (a broker added or removed shows up at
// the next scan). With an inventory it does nothing: the scan asks the
// cluster itself.
func (s *served) rediscover(ctx context.Context, c Console, j ServeJob) error {
	if j.Fleet.Inventory != "" || s.fresh {
		s.fresh = false
		return nil
	}
	src := *s.cfg.Cluster
	src.found = nil
	_, hosts, err := j.Fleet.loadOrDiscover(ctx, c, &src)
	if err != nil {
		return err
	}
	s.cfg.Cluster = &src
	if sameHosts(hosts, s.hosts) {
		return nil
	}
	if err := s.connect(c, j, hosts); err != nil {
		return err
	}
	fmt.Fprintf(c.Stderr, "kaudit serve: the cluster's brokers changed: %d hosts\n", len(hosts))
	return nil
}

// sameHosts reports whether a and b are the same hosts with the same
// Kafka ports.
func sameHosts(a, b []inventory.Host) bool {
	ports := map[string]int{}
	for _, h := range a {
		ports[h.Name] = h.KafkaPort
	}
	for _, h := range b {
		if p, ok := ports[h.Name]; !ok || p != h.KafkaPort {
			return false
		}
	}
	return len(a) == len(b)
}

// fileStamp is the size and modification time of the files a reload reads.
func fileStamp(j ServeJob) string {
	out := ""
	files := []string{j.Fleet.Inventory, j.ProfileFile, j.Waivers}
	if j.Config.Cluster != nil {
		files = append(files, j.Config.Cluster.MapFile)
	}
	for _, f := range files {
		if f == "" {
			continue
		}
		fi, err := os.Stat(f)
		if err != nil {
			out += f + ":missing;"
			continue
		}
		out += fmt.Sprintf("%s:%d:%d;", f, fi.Size(), fi.ModTime().UnixNano())
	}
	return out
}

func waiverExpiries(ws waiver.Waivers) []serve.Waiver {
	var out []serve.Waiver
	for _, w := range ws {
		if !w.Expires.IsZero() {
			out = append(out, serve.Waiver{Rule: w.Rule, Where: fmt.Sprintf("%s:%d", filepath.Base(w.File), w.Line), Expires: w.Expires.AddDate(0, 0, 1)})
		}
	}
	return out
}
