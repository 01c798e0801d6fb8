package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/located"
)

// identity is one parsed identity file. pub is known even for an encrypted
// key (OpenSSH's format stores it in clear, else the .pub beside it), so the
// agent can be asked for it and IdentitiesOnly can pick it.
type identity struct {
	path      string
	signer    ssh.Signer    // nil while encrypted and not unlocked
	pub       ssh.PublicKey // nil when unknown
	encrypted bool
	err       error
}

// loadIdentity parses an identity file once per scan. A default key that
// does not exist is simply not offered; a named one that does not exist is
// skipped with a warning, as ssh does.
func (c *SSH) loadIdentity(path string, explicit bool) *identity {
	c.mu.Lock()
	id, ok := c.ids[path]
	c.mu.Unlock()
	if ok {
		return id
	}
	id = &identity{path: path}
	data, err := os.ReadFile(path)
	switch {
	case err != nil && !explicit && errors.Is(err, os.ErrNotExist):
	case err != nil:
		c.warnOnce("id:"+path, fmt.Sprintf("identity file %s not accessible (%v): not offered", path, located.PathCause(err)))
	default:
		id.parse(data)
	}
	c.mu.Lock()
	if prev, ok := c.ids[path]; ok {
		id = prev
	} else {
		c.ids[path] = id
	}
	c.mu.Unlock()
	return id
}

func (id *identity) parse(data []byte) {
	s, err := ssh.ParsePrivateKey(data)
	var pm *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &pm):
		id.encrypted, id.pub = true, pm.PublicKey
		if id.pub == nil {
			id.pub = readPub(id.path + ".pub")
		}
	case err != nil:
		id.err = fmt.Errorf("identity file %s: %v", id.path, err)
	default:
		id.signer, id.pub = s, s.PublicKey()
	}
}

// unlock decrypts an encrypted identity with pass; false on a wrong one.
func (id *identity) unlock(pass []byte) bool {
	data, err := os.ReadFile(id.path)
	if err != nil {
		return false
	}
	s, err := ssh.ParsePrivateKeyWithPassphrase(data, pass)
	if err != nil {
		return false
	}
	id.signer, id.pub = s, s.PublicKey()
	return true
}

func readPub(path string) ssh.PublicKey {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	k, _, _, _, err := ssh.ParseAuthorizedKey(data)
	if err != nil {
		return nil
	}
	return k
}

// agentFor connects to the agent at sock once per scan; nil when sock is
// empty or unreachable (warned once).
func (c *SSH) agentFor(sock string) agent.ExtendedAgent {
	if sock == "" {
		return nil
	}
	c.mu.Lock()
	ag, ok := c.agents[sock]
	c.mu.Unlock()
	if ok {
		return ag
	}
	conn, err := net.DialTimeout("unix", sock, 2*time.Second)
	if err != nil {
		c.warnOnce("agent:"+sock, fmt.Sprintf("ssh-agent at %s not reachable (%v); using identity files only", sock, err))
	} else {
		ag = agent.NewClient(conn)
	}
	c.mu.Lock()
	if prev, ok := c.agents[sock]; ok {
		c.mu.Unlock()
		if conn != nil {
			conn.Close()
		}
		return prev
	}
	c.agents[sock] = ag
	c.mu.Unlock()
	return ag
}

// authMethods offers keys in OpenSSH's order (sshconnect2.c
// pubkey_prepare): the configured identities the agent holds, then the
// agent's other keys unless IdentitiesOnly, then the configured identities
// from their files. A certificate goes right before its key.
func (c *SSH) authMethods(ep endpoint) ([]ssh.AuthMethod, error) {
	var ids []*identity
	usable := false
	for _, f := range ep.ids {
		id := c.loadIdentity(f, ep.idsExplicit)
		if id.err != nil {
			return nil, newErr(facts.KindAuth, id.err, "%v", id.err)
		}
		if id.pub != nil {
			ids = append(ids, id)
		}
		usable = usable || id.signer != nil
	}
	certs := c.certificates(ep)
	ag := c.agentFor(ep.agent)
	if ag == nil && !usable {
		return nil, newErr(facts.KindAuth, nil, "%s", located.WithHint(fmt.Sprintf("no credentials for %s: no ssh-agent (SSH_AUTH_SOCK, IdentityAgent) and no readable unencrypted identity file", ep.label), "set identity_files in the inventory or IdentityFile in ssh_config"))
	}
	return []ssh.AuthMethod{ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
		var held []ssh.Signer
		if ag != nil {
			held, _ = ag.Signers() // an agent that stops answering leaves the files
		}
		return orderSigners(ids, certs, held, ep.idOnly), nil
	})}, nil
}

func orderSigners(ids []*identity, certs []*ssh.Certificate, held []ssh.Signer, only bool) []ssh.Signer {
	var out []ssh.Signer
	seen := map[string]bool{}
	add := func(s ssh.Signer) {
		if k := string(s.PublicKey().Marshal()); !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	withCerts := func(base ssh.Signer) {
		want := base.PublicKey().Marshal()
		for _, h := range held { // certificates the agent holds for this key
			if cert, ok := h.PublicKey().(*ssh.Certificate); ok && bytes.Equal(cert.Key.Marshal(), want) {
				add(h)
			}
		}
		for _, cert := range certs {
			if bytes.Equal(cert.Key.Marshal(), want) {
				if cs, err := ssh.NewCertSigner(cert, base); err == nil {
					add(cs)
				}
			}
		}
		add(base)
	}
	inAgent := map[*identity]bool{}
	var others []ssh.Signer
	for _, h := range held {
		if _, isCert := h.PublicKey().(*ssh.Certificate); isCert {
			continue
		}
		matched := false
		for _, id := range ids {
			if bytes.Equal(h.PublicKey().Marshal(), id.pub.Marshal()) {
				inAgent[id], matched = true, true
			}
		}
		if matched {
			withCerts(h)
		} else if !only {
			others = append(others, h)
		}
	}
	for _, h := range others {
		withCerts(h)
	}
	for _, id := range ids {
		if !inAgent[id] && id.signer != nil {
			withCerts(id.signer)
		}
	}
	return out
}

// certificates reads KEY-cert.pub beside each identity file and every
// CertificateFile; unreadable ones are skipped (a named one with a warning).
func (c *SSH) certificates(ep endpoint) []*ssh.Certificate {
	var out []*ssh.Certificate
	load := func(path string, named bool) {
		k := readPub(path)
		cert, ok := k.(*ssh.Certificate)
		if !ok {
			if named {
				c.warnOnce("cert:"+path, fmt.Sprintf("CertificateFile %s is not a readable OpenSSH certificate: not offered", path))
			}
			return
		}
		out = append(out, cert)
	}
	for _, f := range ep.ids {
		if _, err := os.Stat(f + "-cert.pub"); err == nil {
			load(f+"-cert.pub", false)
		}
	}
	for _, f := range ep.certs {
		load(f, true)
	}
	return out
}

// Prepare asks, once and before the fan-out, for the passphrase of each
// encrypted identity file a target may use whose key no agent holds. It
// does nothing without a Passphrase func (no terminal) or under BatchMode:
// such keys are then skipped with a warning.
func (c *SSH) Prepare(ctx context.Context, targets []Target) {
	for _, t := range targets {
		if t.Local {
			continue
		}
		eps, err := c.route(t)
		if err != nil {
			continue // reported by Run for that host
		}
		for _, ep := range eps {
			if ctx.Err() != nil {
				return
			}
			for _, f := range ep.ids {
				c.unlockOnce(ep, c.loadIdentity(f, ep.idsExplicit))
			}
		}
	}
}

// maxPassphraseTries is how often a wrong passphrase is asked again (ssh: 3).
const maxPassphraseTries = 3

func (c *SSH) unlockOnce(ep endpoint, id *identity) {
	if !id.encrypted || id.signer != nil || id.pub == nil {
		return
	}
	c.mu.Lock()
	asked := c.asked[id.path]
	c.asked[id.path] = true
	c.mu.Unlock()
	if asked {
		return
	}
	if ag := c.agentFor(ep.agent); ag != nil {
		if keys, err := ag.List(); err == nil {
			for _, k := range keys {
				if bytes.Equal(k.Marshal(), id.pub.Marshal()) {
					return // the agent signs with it: no passphrase needed
				}
			}
		}
	}
	if c.Passphrase == nil || ep.batch {
		c.warnOnce("enc:"+id.path, fmt.Sprintf("identity file %s is passphrase-protected and no terminal to ask on: load it into ssh-agent (ssh-add %s)", id.path, id.path))
		return
	}
	for i := 0; i < maxPassphraseTries; i++ {
		pass, err := c.Passphrase(fmt.Sprintf("Enter passphrase for key '%s': ", id.path))
		if err != nil || len(pass) == 0 {
			break
		}
		ok := id.unlock(pass)
		for j := range pass {
			pass[j] = 0
		}
		if ok {
			return
		}
		c.warnOnce(fmt.Sprintf("badpass:%s:%d", id.path, i), fmt.Sprintf("wrong passphrase for %s", id.path))
	}
	c.warnOnce("enc:"+id.path, fmt.Sprintf("identity file %s stays locked: not offered (load it into ssh-agent: ssh-add %s)", id.path, id.path))
}
