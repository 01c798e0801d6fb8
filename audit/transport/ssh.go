package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// DefaultConnectTimeout bounds TCP connect plus the SSH handshake when the
// target does not set one.
const DefaultConnectTimeout = 10 * time.Second

// SSH runs scripts over SSH. One SSH is shared by a whole scan: it caches
// parsed identity files, the ssh-agent connection and known_hosts databases.
type SSH struct {
	HostKeys *HostKeys
	// BecomePassword, when set (--ask-become-pass), is sent to sudo on
	// stdin for hosts with become: sudo instead of running sudo -n.
	BecomePassword *BecomePassword
	// Warn receives one-time warnings (an encrypted identity file skipped,
	// an unreachable agent). Never called with secret material.
	Warn func(string)

	mu      sync.Mutex
	signers map[string]signerResult
	agentC  agent.ExtendedAgent
	agentOK bool
	warned  map[string]bool
}

type signerResult struct {
	s   ssh.Signer
	err error
}

// NewSSH returns a runner with a fresh host-key verifier.
func NewSSH() *SSH {
	return &SSH{HostKeys: NewHostKeys(), signers: map[string]signerResult{}, warned: map[string]bool{}}
}

func (c *SSH) warnOnce(key, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.warned[key] || c.Warn == nil {
		c.warned[key] = true
		return
	}
	c.warned[key] = true
	c.Warn(msg)
}

// DefaultIdentityFiles are tried, like OpenSSH, when a host names none.
func DefaultIdentityFiles() []string {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	return []string{
		filepath.Join(home, ".ssh", "id_ed25519"),
		filepath.Join(home, ".ssh", "id_ecdsa"),
		filepath.Join(home, ".ssh", "id_rsa"),
	}
}

func (c *SSH) signer(path string, explicit bool) (ssh.Signer, error) {
	c.mu.Lock()
	r, ok := c.signers[path]
	c.mu.Unlock()
	if ok {
		return r.s, r.err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if !explicit && errors.Is(err, os.ErrNotExist) {
			err = nil // a default identity that does not exist is simply not offered
		}
		r = signerResult{err: err}
	} else {
		s, perr := ssh.ParsePrivateKey(data)
		var pm *ssh.PassphraseMissingError
		if errors.As(perr, &pm) {
			c.warnOnce("enc:"+path, fmt.Sprintf("identity file %s is passphrase-protected: kaudit never prompts; load it into ssh-agent (ssh-add %s)", path, path))
			perr = nil
		} else if perr != nil {
			perr = fmt.Errorf("identity file %s: %v", path, perr)
		}
		r = signerResult{s: s, err: perr}
	}
	c.mu.Lock()
	c.signers[path] = r
	c.mu.Unlock()
	return r.s, r.err
}

func (c *SSH) agentClient() agent.ExtendedAgent {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.agentOK {
		return c.agentC
	}
	c.agentOK = true
	sock := os.Getenv("SSH_AUTH_SOCK")
	if sock == "" {
		return nil
	}
	conn, err := net.DialTimeout("unix", sock, 2*time.Second)
	if err != nil {
		if c.Warn != nil {
			c.Warn(fmt.Sprintf("ssh-agent at SSH_AUTH_SOCK not reachable (%v); using identity files only", err))
		}
		return nil
	}
	c.agentC = agent.NewClient(conn)
	return c.agentC
}

func (c *SSH) authMethods(t Target) ([]ssh.AuthMethod, error) {
	var methods []ssh.AuthMethod
	var signers []ssh.Signer
	files, explicit := t.IdentityFiles, true
	if len(files) == 0 {
		files, explicit = DefaultIdentityFiles(), false
	}
	for _, f := range files {
		s, err := c.signer(f, explicit)
		if err != nil {
			return nil, newErr(KindAuth, err, "%v", err)
		}
		if s != nil {
			signers = append(signers, s)
		}
	}
	if t.UseAgent {
		if ag := c.agentClient(); ag != nil {
			methods = append(methods, ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
				as, err := ag.Signers()
				if err != nil {
					return signers, nil
				}
				return append(as, signers...), nil
			}))
			return methods, nil
		}
	}
	if len(signers) == 0 {
		return nil, newErr(KindAuth, nil, "no credentials: no ssh-agent (SSH_AUTH_SOCK) and no readable identity file (set identity_files in the inventory)")
	}
	return append(methods, ssh.PublicKeys(signers...)), nil
}

func hostPort(addr string, port int) string {
	if port == 0 {
		port = 22
	}
	return net.JoinHostPort(strings.Trim(addr, "[]"), strconv.Itoa(port))
}

// Run connects, runs the script once and closes the connection. The context
// bounds everything: when it ends the connection is closed, so no read can
// outlive it.
func (c *SSH) Run(ctx context.Context, t Target, script []byte) (*Output, error) {
	if t.Local {
		return Local{}.Run(ctx, t, script)
	}
	client, closeAll, err := c.dial(ctx, t)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	return runSession(ctx, client, t, script, c.BecomePassword)
}

// dial returns a connected client (through ProxyJump when set) and a func
// that closes everything it opened.
func (c *SSH) dial(ctx context.Context, t Target) (*ssh.Client, func(), error) {
	timeout := t.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	auth, err := c.authMethods(t)
	if err != nil {
		return nil, nil, err
	}
	addr := hostPort(t.Address, t.Port)
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}

	var conn net.Conn
	if t.ProxyJump != "" {
		jt, err := jumpTarget(t)
		if err != nil {
			return nil, nil, err
		}
		jc, jclose, err := c.dial(ctx, jt)
		if err != nil {
			return nil, nil, newErr(AsError(err).Kind, err, "proxy_jump %s: %s", t.ProxyJump, AsError(err).Msg)
		}
		closers = append(closers, jclose)
		conn, err = dialVia(ctx, jc, addr, timeout)
		if err != nil {
			closeAll()
			return nil, nil, classify(err, "connect")
		}
	} else {
		d := net.Dialer{Timeout: timeout}
		conn, err = d.DialContext(ctx, "tcp", addr)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, classify(ctx.Err(), "connect")
			}
			return nil, nil, classify(err, "connect")
		}
	}
	closers = append(closers, func() { conn.Close() })

	// Bound the handshake by the connect timeout and the host's deadline.
	hsDeadline := time.Now().Add(timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(hsDeadline) {
		hsDeadline = dl
	}
	_ = conn.SetDeadline(hsDeadline)
	stop := closeOnDone(ctx, conn)
	closers = append(closers, stop)

	hkName, hkPort := KnownHostsName(t)
	cfg := &ssh.ClientConfig{
		User:              t.User,
		Auth:              auth,
		HostKeyCallback:   c.HostKeys.Callback(hkName, hkPort, KnownHostsFiles{User: t.KnownHosts}, t.HostKeyPolicy),
		HostKeyAlgorithms: c.HostKeys.Algorithms(hkName, hkPort, KnownHostsFiles{User: t.KnownHosts}),
		Timeout:           timeout,
		ClientVersion:     "SSH-2.0-kaudit",
	}
	sconn, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		closeAll()
		if ctx.Err() != nil {
			return nil, nil, classify(ctx.Err(), "handshake")
		}
		return nil, nil, classify(err, "handshake")
	}
	_ = conn.SetDeadline(time.Time{})
	client := ssh.NewClient(sconn, chans, reqs)
	closers = append(closers, func() { client.Close() })
	return client, closeAll, nil
}

func jumpTarget(t Target) (Target, error) {
	spec := t.ProxyJump
	jt := t
	jt.ProxyJump, jt.Become, jt.Port = "", "", 22
	if i := strings.LastIndex(spec, "@"); i >= 0 {
		jt.User, spec = spec[:i], spec[i+1:]
	}
	host, port := spec, ""
	if h, p, err := net.SplitHostPort(spec); err == nil {
		host, port = h, p
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return Target{}, newErr(KindUnreachable, nil, "proxy_jump %q: bad port", t.ProxyJump)
		}
		jt.Port = n
	}
	jt.Address, jt.Name = host, host
	return jt, nil
}

func dialVia(ctx context.Context, jc *ssh.Client, addr string, timeout time.Duration) (net.Conn, error) {
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := jc.Dial("tcp", addr)
		ch <- res{c, err}
	}()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-time.After(timeout):
		go func() {
			if r := <-ch; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, fmt.Errorf("dial %s through jump host: %w", addr, os.ErrDeadlineExceeded)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// closeOnDone closes c when ctx ends; the returned func stops the watch.
func closeOnDone(ctx context.Context, c interface{ Close() error }) func() {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			c.Close()
		case <-done:
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
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
	cmd, stdin := remoteInput(t.Become, pw, script) // become.go: the password goes to sudo's stdin only
	sess.Stdin = stdin
	err = sess.Run(cmd)
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
