package transport

import (
	"cmp"
	"context"
	"errors"
	"io"
	"net"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/sshconfig"
	"github.com/kaudit/kaudit/internal/located"
)

// DefaultConnectTimeout bounds TCP connect, key exchange and
// authentication (OpenSSH's ConnectTimeout) when nothing sets one.
const DefaultConnectTimeout = 10 * time.Second

// SSH runs scripts over SSH. One SSH is shared by a whole scan: it caches
// parsed identity files, ssh-agent connections, known_hosts databases and
// the connections to jump hosts. Close it when the scan is over.
type SSH struct {
	HostKeys *HostKeys
	// BecomePassword, when set (--ask-become-pass), is sent to sudo on
	// stdin for hosts with become: sudo instead of running sudo -n.
	BecomePassword *BecomePassword
	// Config is the ssh_config to follow; nil reads none.
	Config *sshconfig.Config
	// Warn receives one-time warnings (an encrypted identity file skipped,
	// an unreachable agent, a failed bastion). Never called with secret
	// material.
	Warn func(string)
	// Passphrase, when set, is asked by Prepare for an encrypted identity
	// file (on a terminal, never echoed). Nil: such keys are skipped.
	Passphrase func(prompt string) ([]byte, error)
	// BastionStartups bounds handshakes in flight through one jump host
	// (0 = DefaultBastionStartups).
	BastionStartups int
	// KeepConnections keeps each host's connection after Run for the
	// next Run to it (kaudit serve: a new session per scan; keep.go).
	// For read-only scripts only: a Run that fails on a kept connection
	// is run again on a new one. Each kept connection holds a file
	// descriptor (and ≈ 60 KB: x/crypto's read cipher buffer, sized by the
	// largest packet, and its goroutines) until Close.
	KeepConnections bool
	// MaxKept bounds the connections kept at once (0: no bound): one
	// more is closed after its Run, as without KeepConnections.
	MaxKept int
	// SharedStartups bounds the handshakes in flight to the addresses
	// whose known host key is the same sshd's (0 = DefaultSharedStartups;
	// shared.go).
	SharedStartups int

	mu     sync.Mutex
	ids    map[string]*identity
	agents map[string]agent.ExtendedAgent
	asked  map[string]bool
	warned map[string]bool
	hops   map[string]*hop
	kept   map[string]*ssh.Client   // KeepConnections: by route (keepKey)
	lent   map[string]bool          // routes whose kept connection a Run holds (keep.go)
	shared map[string]chan struct{} // handshake slots by host key (shared.go)
	// starting counts handshakes in flight per address: the evidence
	// for the MaxStartups hint (startups.go).
	starting startups
}

// NewSSH returns a runner with a fresh host-key verifier.
func NewSSH() *SSH {
	return &SSH{HostKeys: NewHostKeys(), ids: map[string]*identity{}, agents: map[string]agent.ExtendedAgent{},
		asked: map[string]bool{}, warned: map[string]bool{}, hops: map[string]*hop{}}
}

func (c *SSH) warnOnce(key, msg string) {
	c.mu.Lock()
	seen := c.warned[key]
	c.warned[key] = true
	c.mu.Unlock()
	if !seen && c.Warn != nil {
		c.Warn(msg)
	}
}

func hostPort(addr string, port int) string {
	port = cmp.Or(port, 22)
	return net.JoinHostPort(strings.Trim(addr, "[]"), strconv.Itoa(port))
}

// Run connects (through the shared jump-host connections when the target
// has a ProxyJump), runs the script once and closes the target's
// connection (KeepConnections: keeps it for the next Run, keep.go). The context bounds everything: when it ends the connection is
// closed, so no read can outlive it.
func (c *SSH) Run(ctx context.Context, t Target, script []byte) (*Output, error) {
	if t.Local {
		return Local{}.Run(ctx, t, script)
	}
	eps, err := c.route(t)
	if err != nil {
		return nil, err
	}
	ep := eps[len(eps)-1]
	var via *hop
	if len(eps) > 1 {
		if via, err = c.hopFor(ctx, eps[:len(eps)-1]); err != nil {
			return nil, err
		}
	}
	if !c.KeepConnections {
		client, err := c.connect(ctx, ep, via)
		if err != nil {
			return nil, via.explain(err)
		}
		defer client.Close()
		return c.runOn(ctx, client, ep, via, t, script)
	}
	// keep.go: a new session on the connection of the last Run, else a
	// new connection (also when the kept one fails before the script ran).
	key := keepKey(t, eps)
	defer c.unlend(key)
	if client := c.takeKept(ctx, key, ep.timeout); client != nil {
		out, err := c.runOn(ctx, client, ep, via, t, script)
		if err == nil {
			c.putKept(key, client)
			return out, nil
		}
		client.Close()
		if ctx.Err() != nil {
			return out, err
		}
		// Run again on a new connection: KeepConnections is for
		// read-only scripts (the gather), which may run twice.
	}
	client, err := c.connect(ctx, ep, via)
	if err != nil {
		return nil, via.explain(err)
	}
	out, err := c.runOn(ctx, client, ep, via, t, script)
	if err == nil && ctx.Err() == nil {
		c.putKept(key, client)
	} else {
		client.Close()
	}
	return out, err
}

// runOn runs the script in a new session on client, bounded by ctx
// (which closes client when it ends).
func (c *SSH) runOn(ctx context.Context, client *ssh.Client, ep endpoint, via *hop, t Target, script []byte) (*Output, error) {
	stop := closeOnDone(ctx, client)
	defer stop()
	alive := startKeepalive(client, ep)
	defer alive.stop()
	out, err := runSession(ctx, client, t, script, c.BecomePassword)
	if out != nil {
		out.HostKey = hostKeyOf(client)
	}
	if err != nil && alive.dead.Load() {
		return nil, newErr(facts.KindTimeout, err, "host stopped answering during the gather: %d keepalives unanswered (ServerAliveInterval %s, ServerAliveCountMax)", max(ep.aliveMax, 3), ep.alive)
	}
	if err != nil && ctx.Err() == nil {
		return nil, via.explain(err)
	}
	return out, err
}

// connect opens an authenticated connection to ep, over a TCP connection
// or a channel through via. ep.timeout bounds all of it, as OpenSSH's
// ConnectTimeout: TCP connect (or channel open), key exchange and
// authentication (x/crypto's ClientConfig.Timeout alone bounds only TCP).
func (c *SSH) connect(ctx context.Context, ep endpoint, via *hop) (*ssh.Client, error) {
	auth, err := c.authMethods(ep)
	if err != nil {
		return nil, err
	}
	if via != nil {
		// Waiting for a handshake slot on the bastion is kaudit's own
		// queue: bounded by the host's deadline, not by ConnectTimeout.
		release, err := via.acquire(ctx)
		if err != nil {
			return nil, classify(err, "connect")
		}
		defer release()
	} else {
		// One sshd behind many addresses: the same queue (shared.go).
		release, err := c.sharedSlot(ctx, ep)
		if err != nil {
			return nil, newErr(facts.KindTimeout, err, "%s", located.WithHint("no handshake slot before the host's deadline: the sshd behind this address (its host key) is shared with other hosts of the scan, at most "+strconv.Itoa(c.sharedLimit())+" handshakes to it at once", "raise the host's timeout, or lower --concurrency"))
		}
		defer release()
	}
	cctx, cancel := context.WithTimeout(ctx, ep.timeout)
	defer cancel()
	st := c.starting.begin(ep.addr)
	peak := -1
	defer func() {
		if peak < 0 {
			c.starting.done(st)
		}
	}()
	var conn net.Conn
	if via == nil {
		var d net.Dialer
		if conn, err = d.DialContext(cctx, "tcp", ep.addr); err != nil {
			return nil, classify(firstErr(ctx.Err(), err), "connect")
		}
	} else {
		if conn, err = via.dial(cctx, ep.addr); err != nil {
			return nil, classify(err, "connect")
		}
	}
	dl, _ := cctx.Deadline()
	_ = conn.SetDeadline(dl)        // TCP; a channel through a bastion has no deadlines:
	stop := closeOnDone(cctx, conn) // closing it at the deadline covers both
	verify := c.HostKeys.Callback(ep.hkName, ep.hkPort, ep.knownHosts, ep.policy)
	var verified string
	cfg := &ssh.ClientConfig{
		User: ep.user,
		Auth: auth,
		HostKeyCallback: func(name string, addr net.Addr, key ssh.PublicKey) error {
			err := verify(name, addr, key)
			if err == nil {
				verified = ssh.FingerprintSHA256(plainKey(key))
			}
			return err
		},
		HostKeyAlgorithms: c.hostKeyAlgorithms(ep),
		Timeout:           ep.timeout,
		ClientVersion:     "SSH-2.0-kaudit",
	}
	sconn, chans, reqs, err := ssh.NewClientConn(conn, ep.hostKeyName, cfg)
	stop()
	peak = c.starting.done(st)
	if err != nil {
		conn.Close()
		if ctx.Err() == nil && (cctx.Err() != nil || !time.Now().Before(dl)) {
			return nil, newErr(facts.KindTimeout, err, "no SSH handshake before the deadline: ConnectTimeout %s covers TCP connect, key exchange and authentication (the port accepts TCP but the server never finished the SSH banner, key exchange or authentication)", ep.timeout)
		}
		if ctx.Err() == nil && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
			return nil, closedDuringHandshake(err, ep.addr, peak)
		}
		return nil, classify(firstErr(ctx.Err(), err), "handshake")
	}
	_ = conn.SetDeadline(time.Time{})
	return ssh.NewClient(verifiedConn{sconn, verified}, chans, reqs), nil
}

// verifiedConn is a client connection that remembers the fingerprint of
// the host key it was verified with (Output.HostKey).
type verifiedConn struct {
	ssh.Conn
	hostKey string
}

// hostKeyOf is the fingerprint client's connection was verified with.
func hostKeyOf(client *ssh.Client) string {
	if v, ok := client.Conn.(verifiedConn); ok {
		return v.hostKey
	}
	return ""
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// hostKeyAlgorithms asks the server for a key type known_hosts can verify
// (golang/go#29286); an ssh_config HostKeyAlgorithms narrows or reorders
// that list as OpenSSH does (+ appends, - removes, ^ puts first).
func (c *SSH) hostKeyAlgorithms(ep endpoint) []string {
	known := c.HostKeys.Algorithms(ep.hkName, ep.hkPort, ep.knownHosts)
	if ep.hostKeyAlgs == "" {
		return known
	}
	list := applyAlgList(ep.hostKeyAlgs, ssh.SupportedAlgorithms().HostKeys)
	if len(known) == 0 {
		return list
	}
	var first, rest []string
	for _, a := range list {
		if slices.Contains(known, a) {
			first = append(first, a)
		} else {
			rest = append(rest, a)
		}
	}
	return append(first, rest...)
}

// applyAlgList evaluates an OpenSSH algorithm list against the defaults,
// keeping only algorithms x/crypto implements (an old one such as ssh-rsa
// only when the list names it, as "+ssh-rsa" for an old server).
func applyAlgList(spec string, defaults []string) []string {
	impl := append(ssh.SupportedAlgorithms().HostKeys, ssh.InsecureAlgorithms().HostKeys...)
	var out []string
	items := strings.Split(strings.TrimLeft(spec, "+-^"), ",")
	switch spec[0] {
	case '+':
		out = append(append(out, defaults...), items...)
	case '-':
		for _, d := range defaults {
			if !matchesAny(d, items) {
				out = append(out, d)
			}
		}
	case '^':
		out = append(append(out, items...), defaults...)
	default:
		out = items
	}
	var keep []string
	for _, a := range out {
		if slices.Contains(impl, a) && !slices.Contains(keep, a) {
			keep = append(keep, a)
		}
	}
	return keep
}

func matchesAny(s string, pats []string) bool {
	for _, p := range pats {
		if ok, _ := path.Match(p, s); ok {
			return true
		}
	}
	return false
}

// closeOnDone closes c when ctx ends; the returned func stops the watch.
// The func returns once the watch has ended, so that ctx ending after it
// returned never closes c (a kept connection, keep.go).
func closeOnDone(ctx context.Context, c interface{ Close() error }) func() {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-ctx.Done():
			c.Close()
		case <-done:
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-exited }) }
}

func runSession(ctx context.Context, client *ssh.Client, t Target, script []byte, pw *BecomePassword) (*Output, error) {
	sess, err := client.NewSession()
	if err != nil {
		if ctx.Err() != nil {
			return nil, classify(ctx.Err(), "session")
		}
		return nil, classify(err, "session")
	}
	defer sess.Close()
	cut := func() { sess.Close(); client.Close() }
	stdout := &limitedBuffer{max: MaxOutput, cut: cut}
	stderr := &limitedBuffer{max: 1 << 20, cut: cut}
	sess.Stdout, sess.Stderr = stdout, stderr
	if t.Coalesce {
		script = coalesce(script)
	}
	cmd, stdin := remoteInput(t.Become, pw, script) // become.go: the password goes to sudo's stdin only
	err = runWithInput(sess, cmd, stdin)
	if stdout.overflowed() || stderr.overflowed() {
		return nil, tooMuch()
	}
	if ctx.Err() != nil {
		return nil, classify(ctx.Err(), t.step())
	}
	out := &Output{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	var ee *ssh.ExitError
	var em *ssh.ExitMissingError
	switch {
	case errors.As(err, &ee):
		out.ExitCode = ee.ExitStatus()
	case errors.As(err, &em):
		return nil, NoExitStatus(t.Step, err)
	case err != nil:
		return nil, classify(err, t.step())
	}
	return out, checkExit(t, out)
}

// runWithInput runs cmd with stdin written straight to the channel. With
// Session.Stdin set, x/crypto/ssh copies it through an io.Pipe and
// io.Copy's 32 KB buffer, one goroutine more and 32 KB more per host;
// stdin here is a bytes.Reader (or a MultiReader of them), which writes
// itself. The write ends when the script is sent or the channel closes
// (when Run's deferred Close runs at the latest).
func runWithInput(sess *ssh.Session, cmd string, stdin io.Reader) error {
	w, err := sess.StdinPipe()
	if err != nil {
		return err
	}
	if err := sess.Start(cmd); err != nil {
		return err
	}
	go func() {
		// In small writes: x/crypto's cipher keeps a buffer the size of
		// the largest packet it sealed for the connection's life, and a
		// kept connection (kaudit serve) would hold 32 KB for it.
		_, _ = io.CopyBuffer(w, struct{ io.Reader }{stdin}, make([]byte, stdinChunk))
		_ = w.Close() // EOF: /bin/sh -s has the whole script
	}()
	return sess.Wait()
}

// stdinChunk is the largest write of a script to a session's stdin.
const stdinChunk = 2 << 10
