// Package trust fetches the host keys of an inventory's hosts, judges them
// against known_hosts, and records the new ones: the library behind
// `kaudit trust`.
//
// Keys are fetched the way a scan connects (transport.SSH, so ProxyJump
// works): the handshake stops at the host key, before any authentication to
// the host. A bastion (proxy_jump) is fetched first, directly; a new
// bastion key is trusted for this run only (transport.HostKeys.Pin) so the
// hosts behind it can be reached, and is recorded like the others only
// after the user confirms. A key that differs from known_hosts is reported
// and never written.
package trust

import (
	"context"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/fanout"
)

// Status is what Fetch or Record found for one host.
type Status string

// Statuses, in the order a user cares about them.
const (
	New       Status = "new"         // not in known_hosts: recorded by Record
	Recorded  Status = "recorded"    // written by Record
	Known     Status = "known"       // already in known_hosts
	Certified Status = "certified"   // a host certificate from a @cert-authority: nothing to record
	Changed   Status = "CHANGED"     // known_hosts holds another key: never overwritten
	Revoked   Status = "REVOKED"     // the key is @revoked
	BadCert   Status = "bad-cert"    // a certificate from a known CA that is not valid
	Failed    Status = "unreachable" // no key fetched (see Err)
	Local     Status = "local"       // connection: local: no host key
)

// Entry is one host (or bastion) and its key.
type Entry struct {
	Host    string // inventory name; for a bastion its proxy_jump spec
	Bastion bool   // a proxy_jump hop, fetched directly
	Name    string // the name the key is recorded under, e.g. "[10.0.0.1]:2222"
	Port    int    // with Address, what Record writes for
	Address string //
	Files   transport.KnownHostsFiles
	Key     ssh.PublicKey // nil when Status is Failed or Local
	Status  Status
	Where   []string         // FILE:LINE of the other key (Changed) or the @revoked line
	Err     *transport.Error // Failed, BadCert
}

// Fingerprint is the SHA256 fingerprint of the host key (of the key inside
// a host certificate), as ssh-keygen -l prints it.
func (e Entry) Fingerprint() string {
	if k := e.HostKey(); k != nil {
		return ssh.FingerprintSHA256(k)
	}
	return ""
}

// HostKey is the key offered, or the key a host certificate certifies.
func (e Entry) HostKey() ssh.PublicKey {
	if c, ok := e.Key.(*ssh.Certificate); ok {
		return c.Key
	}
	return e.Key
}

// KeyType names the key type, with " (certificate)" for a host certificate.
func (e Entry) KeyType() string {
	if e.Key == nil {
		return ""
	}
	if _, ok := e.Key.(*ssh.Certificate); ok {
		return e.HostKey().Type() + " (certificate)"
	}
	return e.Key.Type()
}

// Options bound the fan-out.
type Options struct {
	Concurrency    int           // hosts fetched at once (default 20)
	ConnectTimeout time.Duration // per host, as in a scan
	Timeout        time.Duration // per host, whole fetch (default 30s)
}

// Fetch gets every host's key: bastions first, then the hosts, in
// inventory order in the result.
func Fetch(ctx context.Context, hosts []inventory.Host, runner *transport.SSH, o Options) []Entry {
	if o.Concurrency < 1 {
		o.Concurrency = 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	targets := make([]transport.Target, len(hosts))
	for i, h := range hosts {
		targets[i] = audit.Target(h, o.ConnectTimeout)
	}
	bastions := bastionTargets(targets, runner)
	out := fetchAll(ctx, bastions, runner, o, true)
	for i, e := range out {
		if e.Status == New {
			runner.HostKeys.Pin(e.Address, e.Port, e.Key)
		}
		out[i].Host = bastions[i].ProxyJump // set by bastionTargets to the spec
	}
	// A host that is also a bastion was fetched already; fetching it again
	// while others dial through it would stop their hop at its key.
	byName := map[string]Entry{}
	for _, e := range out {
		byName[e.Name] = e
	}
	var rest []transport.Target
	var restAt []int
	hostEntries := make([]Entry, len(targets))
	for i, t := range targets {
		if e, ok := byName[transport.LookupName(runner.KnownHostsName(t))]; ok && !t.Local {
			e.Bastion = false
			hostEntries[i] = e
			continue
		}
		rest, restAt = append(rest, t), append(restAt, i)
	}
	for j, e := range fetchAll(ctx, rest, runner, o, false) {
		hostEntries[restAt[j]] = e
	}
	for i := range hostEntries {
		hostEntries[i].Host = hosts[i].Name
	}
	return append(out, hostEntries...)
}

// bastionTargets returns one target per distinct last jump hop, from
// proxy_jump or ssh_config's ProxyJump. The
// hop's ProxyJump field carries the spec it came from, for display only:
// it is cleared before dialling.
func bastionTargets(targets []transport.Target, runner *transport.SSH) []transport.Target {
	var out []transport.Target
	seen := map[string]bool{}
	for _, t := range targets {
		spec := runner.ProxyJump(t) // the inventory's proxy_jump, else ssh_config's
		if spec == "" || t.Local {
			continue
		}
		t.ProxyJump, t.Given.ProxyJump = spec, true
		jt, err := transport.JumpTarget(t)
		if err != nil {
			continue // the host's own fetch reports it
		}
		key := transport.LookupName(runner.KnownHostsName(jt))
		if seen[key] {
			continue
		}
		seen[key] = true
		jt.ProxyJump = spec
		out = append(out, jt)
	}
	return out
}

func fetchAll(ctx context.Context, targets []transport.Target, runner *transport.SSH, o Options, bastion bool) []Entry {
	out := make([]Entry, len(targets))
	fetch := func(i int) bool {
		t := targets[i]
		if bastion {
			t.ProxyJump = ""
		}
		out[i] = fetchOne(ctx, t, runner, o.Timeout)
		out[i].Bastion = bastion
		return out[i].Status != Failed
	}
	done := fanout.Run(ctx, len(targets), fanout.Options{Limit: o.Concurrency}, fetch)
	for _, i := range done.NotStarted { // ctx ended: each says so (fetchOne dials nothing then)
		fetch(i)
	}
	return out
}

func fetchOne(parent context.Context, t transport.Target, runner *transport.SSH, timeout time.Duration) Entry {
	name, port, files := runner.HostKeyLookup(t)
	e := Entry{Address: name, Port: port, Name: transport.LookupName(name, port),
		Files: files}
	if t.Local {
		e.Status = Local
		return e
	}
	if parent.Err() != nil {
		e.Status, e.Err = Failed, transport.AsError(parent.Err())
		return e
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	key, err := runner.FetchHostKey(ctx, t)
	if err != nil {
		e.Status, e.Err = Failed, transport.AsError(err)
		return e
	}
	e.Key = key
	v := runner.HostKeys.Check(name, port, e.Files, key)
	e.Status, e.Where = statusOf(v.Status), v.Where
	if v.Err != nil {
		e.Err = transport.AsError(v.Err)
	}
	return e
}

func statusOf(s transport.KeyStatus) Status {
	switch s {
	case transport.KeyKnown:
		return Known
	case transport.KeyCertified:
		return Certified
	case transport.KeyChanged:
		return Changed
	case transport.KeyRevoked:
		return Revoked
	case transport.KeyBadCert:
		return BadCert
	case transport.KeyUnknown:
		return New
	}
	return Failed // KeyFileError
}

// Pending counts the entries Record would write.
func Pending(entries []Entry) int {
	n := 0
	for _, e := range entries {
		if e.Status == New {
			n++
		}
	}
	return n
}

// Record writes every New key into its first user known_hosts file (locked
// appends, never a replacement) and returns the entries with Recorded, or
// Changed when another key for the name appeared meanwhile, or Failed.
func Record(entries []Entry, hk *transport.HostKeys) []Entry {
	out := append([]Entry(nil), entries...)
	for i, e := range out {
		if e.Status != New {
			continue
		}
		v, err := hk.Record(e.Address, e.Port, e.Files, e.Key)
		switch {
		case err != nil:
			out[i].Status, out[i].Err = Failed, &transport.Error{Kind: facts.KindHostKey, Msg: err.Error(), Err: err}
		case v.Status == transport.KeyChanged:
			out[i].Status, out[i].Where = Changed, v.Where
		default:
			out[i].Status = Recorded
		}
	}
	return out
}
