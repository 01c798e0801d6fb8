package transport

import (
	"context"
	"errors"
	"net"

	"golang.org/x/crypto/ssh"
)

// errGotKey ends a key exchange once the host key is known.
var errGotKey = errors.New("host key fetched")

// FetchHostKey returns the host key t presents and the name it is recorded
// under in known_hosts (HostKeyAlias or [host]:port), reached like Run
// reaches it: through its jump hosts, whose own keys must already verify.
// It does not authenticate to t. For `kaudit trust`.
func (c *SSH) FetchHostKey(ctx context.Context, t Target) (ssh.PublicKey, string, error) {
	eps, err := c.route(t)
	if err != nil {
		return nil, "", err
	}
	ep := eps[len(eps)-1]
	var via *hop
	if len(eps) > 1 {
		if via, err = c.hopFor(ctx, eps[:len(eps)-1]); err != nil {
			return nil, "", err
		}
	}
	if via != nil {
		release, err := via.acquire(ctx)
		if err != nil {
			return nil, "", classify(err, "connect")
		}
		defer release()
	}
	cctx, cancel := context.WithTimeout(ctx, ep.timeout)
	defer cancel()
	var conn net.Conn
	if via == nil {
		var d net.Dialer
		conn, err = d.DialContext(cctx, "tcp", ep.addr)
	} else {
		conn, err = via.dial(cctx, ep.addr)
	}
	if err != nil {
		return nil, "", classify(err, "connect")
	}
	defer conn.Close()
	stop := closeOnDone(cctx, conn)
	defer stop()
	var key ssh.PublicKey
	cfg := &ssh.ClientConfig{
		User: ep.user,
		HostKeyCallback: func(_ string, _ net.Addr, k ssh.PublicKey) error {
			key = k
			return errGotKey
		},
		HostKeyAlgorithms: c.hostKeyAlgorithms(ep),
		ClientVersion:     "SSH-2.0-kaudit",
	}
	_, _, _, err = ssh.NewClientConn(conn, ep.hostKeyName, cfg)
	if key == nil {
		return nil, "", classify(firstErr(cctx.Err(), err), "handshake")
	}
	return key, ep.hostKeyName, nil
}
