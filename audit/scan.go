package audit

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/gather"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/probe"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/fanout"
)

// Defaults for a scan.
const (
	DefaultConcurrency = 32
	DefaultTimeout     = 30 * time.Second
)

// Options tune a scan.
type Options struct {
	Concurrency    int           // hosts in flight at once
	Timeout        time.Duration // per host, connect + gather; a host's own timeout wins
	ConnectTimeout time.Duration // per host TCP connect + SSH handshake; a host's own wins
	SysctlKeys     []string      // what the rules read
	Files          []string      // the /proc and /sys files the rules read (rules.Files)
	PropertyKeys   []string      // the server.properties keys the catalog's checks read (rules.PropertyKeys)
	Runner         transport.Runner
	// Probe, when set, runs the SYN-cookie probe (audit/probe) on each host
	// after its gather, in the same worker slot (see probeHost).
	Probe *probe.Options
	// MayProbe, when set, is asked before the probe sends a host any
	// traffic: a reason not to (the host is not proven a broker of the
	// cluster that named it) leaves the probe not run (ProbeUnproven),
	// with that reason.
	MayProbe func(h inventory.Host, f *facts.Facts) string
	// Progress, when set, is called once per finished host (from the
	// scanning goroutines, serialized by the caller if needed).
	Progress func(Result)
	// Finish, when set, is called once per host that was started, as it
	// finishes (after Progress, from the scanning goroutines, so
	// concurrently), with the host's index; Scan keeps the result Finish
	// returns instead: a caller that consumes the facts as hosts finish
	// returns the result without them, so they are not all held at once.
	Finish func(i int, res Result) Result
	// ClientsGroup names the inventory group whose hosts are producers or
	// consumers, gathered with the client profile (DefaultClientsGroup
	// when ""): their connections to the other hosts' Kafka ports.
	ClientsGroup string
	// Probes, when set, keeps each probe's verdict on kaudit's side and
	// gives a host without a probe in this run the one recorded for its
	// boot (probe.Records.Settle); ProbesErr is told what it could not do.
	Probes    *probe.Records
	ProbesErr func(error)
}

// DefaultClientsGroup is the inventory group of client hosts.
const DefaultClientsGroup = "clients"

// IsClient reports whether h is in the clients group.
func IsClient(h inventory.Host, group string) bool {
	group = cmp.Or(group, DefaultClientsGroup)
	return slices.Contains(h.Groups, group)
}

// brokerPorts are the Kafka ports of every host that is not a client.
func brokerPorts(hosts []inventory.Host, group string) []int {
	var out []int
	for _, h := range hosts {
		if p := kafkaPort(h); !IsClient(h, group) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func kafkaPort(h inventory.Host) int { return cmp.Or(h.KafkaPort, inventory.DefaultKafkaPort) }

// Result is one host's outcome: Facts, or Err.
type Result struct {
	Host     inventory.Host
	Facts    *facts.Facts
	Err      *transport.Error
	Duration time.Duration
}

// Scan audits every host and returns one result per host, in input order.
// It never returns early: a host that fails, hangs or lies gets an error
// result and the others go on. When ctx is cancelled (Ctrl-C) the hosts in
// flight are cut off and the ones not started are marked as interrupted.
func Scan(ctx context.Context, hosts []inventory.Host, opt Options) []Result {
	if opt.Concurrency <= 0 {
		opt.Concurrency = DefaultConcurrency
	}
	// Never "too many open files": the CLI has said so when it lowered it.
	opt.Concurrency, _ = fanout.FitOpenFiles(opt.Concurrency)
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.Runner == nil {
		opt.Runner = transport.NewSSH()
	}
	if p, ok := opt.Runner.(transport.Preparer); ok {
		targets := make([]transport.Target, len(hosts))
		for i, h := range hosts {
			targets[i] = Target(h, opt.ConnectTimeout)
		}
		p.Prepare(ctx, targets)
	}
	ports := brokerPorts(hosts, opt.ClientsGroup)
	rdns := newRDNSTargets(hosts, opt.ClientsGroup)
	results := make([]Result, len(hosts))
	out := fanout.Run(ctx, len(hosts), fanout.Options{Limit: opt.Concurrency}, func(i int) bool {
		res := scanHost(ctx, hosts[i], opt, ports, rdns.self[i], rdns.peers[i])
		if opt.Progress != nil {
			opt.Progress(res)
		}
		if opt.Finish != nil {
			res = opt.Finish(i, res)
		}
		results[i] = res
		return true
	})
	for _, i := range out.NotStarted {
		results[i] = Result{Host: hosts[i], Err: notStarted()}
	}
	return results
}

// notStarted is the error of a host the scan never started (Ctrl-C).
func notStarted() *transport.Error {
	return &transport.Error{Kind: facts.KindTimeout, Msg: "interrupted before this host was started"}
}

func scanHost(parent context.Context, h inventory.Host, opt Options, clientPorts []int, rdnsSelf string, rdnsPeers []string) (res Result) {
	start := time.Now()
	res.Host = h
	defer func() { res.Duration = time.Since(start) }()
	if parent.Err() != nil {
		res.Err = notStarted()
		return res
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = opt.Timeout
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()

	port := kafkaPort(h)
	marker := gather.NewMarker()
	p := gather.Params{
		KafkaPort: port, KafkaConfig: h.KafkaConfig, Interfaces: h.Interfaces,
		SysctlKeys: opt.SysctlKeys, Files: opt.Files, PropertyKeys: opt.PropertyKeys, Marker: marker,
		RDNSSelf: rdnsSelf, RDNSPeers: rdnsPeers,
	}
	if IsClient(h, opt.ClientsGroup) {
		p.Client, p.ClientPorts = true, clientPorts
		if len(clientPorts) == 0 { // no broker in the inventory: the client's own kafka_port
			p.ClientPorts = []int{port}
		}
	}
	script, err := gather.Script(p)
	if err != nil {
		res.Err = &transport.Error{Kind: facts.KindProtocol, Msg: err.Error(), Err: err}
		return res
	}
	t := Target(h, opt.ConnectTimeout)
	t.Coalesce = true // the gather's result is its output (it always exits 0)
	sent := time.Now()
	out, err := opt.Runner.Run(ctx, t, script)
	received := time.Now()
	if err != nil {
		e := transport.AsError(err)
		if e.Kind == facts.KindTimeout && parent.Err() == nil && ctx.Err() != nil {
			e = &transport.Error{Kind: facts.KindTimeout, Msg: "host did not finish within " + timeout.String() + " (" + e.Msg + ")", Err: err}
		}
		res.Err = e
		return res
	}
	f, err := gather.Parse(out.Stdout, marker, port)
	if err != nil {
		res.Err = &transport.Error{Kind: facts.KindProtocol, Msg: err.Error(), Err: err}
		return res
	}
	res.Facts = f
	f.HostKey = out.HostKey
	if f.Host != nil && f.Host.Clock != nil { // the host read its clock between the two
		f.Host.Clock.Measure(sent.UnixNano(), received.UnixNano())
	}
	if f.Role != facts.RoleClient { // the probe tests a broker's kernel, not a producer's
		probeHost(parent, h, f, opt)
		if err := opt.Probes.Settle(h.Name, f); err != nil && opt.ProbesErr != nil {
			opt.ProbesErr(err)
		}
	}
	return res
}

// Target converts an inventory host to a transport target.
func Target(h inventory.Host, connectTimeout time.Duration) transport.Target {
	ct := h.ConnectTimeout
	if ct <= 0 {
		ct = connectTimeout
	}
	user := h.User
	if user == "" {
		user = transport.LocalUser()
	}
	return transport.Target{
		Name: h.Name, Address: h.Address, Port: h.Port, User: user,
		IdentityFiles: h.IdentityFiles, UseAgent: h.UseAgent, KnownHosts: h.KnownHosts,
		HostKeyPolicy: h.HostKeyPolicy, ProxyJump: h.ProxyJump, Become: h.Become,
		Local: h.Connection == "local", ConnectTimeout: ct,
		Given: transport.Given(h.Given), NoSSHConfig: !h.SSHConfig,
	}
}
