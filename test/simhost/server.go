package simhost

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/kaudit/kaudit/internal/remote"
)

// Fault makes a host misbehave.
type Fault string

const (
	FaultNone         Fault = ""
	FaultNoBanner     Fault = "no-banner"     // accept TCP, never speak SSH
	FaultHang         Fault = "hang"          // authenticate, then never answer the script
	FaultAuthRefused  Fault = "auth-refused"  // reject every key
	FaultGarbage      Fault = "garbage"       // answer with text that is not kaudit's
	FaultTruncated    Fault = "truncated"     // stop in the middle of the output, exit 0
	FaultDrop         Fault = "drop"          // write half the output then cut the TCP connection
	FaultSudoPassword Fault = "sudo-password" // "sudo -n" fails with "a password is required"
	FaultBanner       Fault = "banner"        // a noisy login shell prints before the script (must still parse)
	FaultFlood        Fault = "flood"         // print without end (until the client cuts the session)
	FaultSlowAuth     Fault = "slow-auth"     // key exchange at once, then 30 s before answering authentication
)

// Server is one simulated host listening on 127.0.0.1.
type Server struct {
	Host    *Host
	Addr    string // 127.0.0.1:port
	HostKey ssh.PublicKey

	ln     net.Listener
	cfg    *ssh.ServerConfig
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
	// Sessions counts exec requests served, Forwards direct-tcpip
	// channels (ProxyJump) opened through this host (for tests).
	Sessions int
	Forwards int
	// Accepted counts TCP connections; MaxHandshakes is the most that were
	// between TCP accept and authenticated at once (sshd's MaxStartups).
	Accepted      int
	MaxHandshakes int
	handshaking   int
}

// NewHostKey returns a fresh ed25519 host key.
func NewHostKey() ssh.Signer {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		panic(err)
	}
	return s
}

// Serve starts h on 127.0.0.1:0, accepting the given client keys.
func Serve(h *Host, hostKey ssh.Signer, authorized ...ssh.PublicKey) (*Server, error) {
	return ServeOn("127.0.0.1:0", h, hostKey, authorized...)
}

// ServeOn starts h on addr, a loopback host:port (bench/simfleet spreads
// thousands of hosts over 127.x.y.z so they do not use up the ephemeral
// port range the client needs for its own connections).
func ServeOn(addr string, h *Host, hostKey ssh.Signer, authorized ...ssh.PublicKey) (*Server, error) {
	if ip := net.ParseIP(hostOnly(addr)); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("simhost: %s is not a loopback address: simulated hosts never listen beyond 127.0.0.0/8", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{Host: h, Addr: ln.Addr().String(), HostKey: hostKey.PublicKey(), ln: ln, conns: map[net.Conn]bool{}}
	s.cfg = &ssh.ServerConfig{
		PublicKeyCallback: func(c ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if h.Fault == FaultAuthRefused {
				return nil, errors.New("denied")
			}
			for i := 0; h.Fault == FaultSlowAuth && i < 600 && !s.isClosed(); i++ {
				time.Sleep(50 * time.Millisecond)
			}
			for _, a := range authorized {
				if string(a.Marshal()) == string(key.Marshal()) {
					return nil, nil
				}
			}
			return nil, errors.New("unknown key")
		},
		ServerVersion: "SSH-2.0-OpenSSH_8.9p1 kaudit-sim",
	}
	s.cfg.AddHostKey(hostKey)
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func hostOnly(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return h
}

// IP is the listening address without the port.
func (s *Server) IP() string { return hostOnly(s.Addr) }

// Port is the listening port.
func (s *Server) Port() int {
	_, p, _ := net.SplitHostPort(s.Addr)
	n, _ := strconv.Atoi(p)
	return n
}

// Close stops the listener and cuts every connection.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.wg.Wait()
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *Server) track(c net.Conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.closed {
			return false
		}
		s.conns[c] = true
	} else {
		delete(s.conns, c)
	}
	return true
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		if !s.track(c, true) {
			c.Close()
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.track(c, false)
			defer c.Close()
			s.handle(c)
		}()
	}
}

func (s *Server) handle(c net.Conn) {
	if s.Host.Fault == FaultNoBanner {
		_, _ = io.Copy(io.Discard, c) // hold the connection, say nothing
		return
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	s.mu.Lock()
	s.Accepted++
	s.handshaking++
	s.MaxHandshakes = max(s.MaxHandshakes, s.handshaking)
	s.mu.Unlock()
	sc, chans, reqs, err := ssh.NewServerConn(c, s.cfg)
	s.mu.Lock()
	s.handshaking--
	s.mu.Unlock()
	if err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() == "direct-tcpip" {
			go s.forward(nc) // acting as a ProxyJump host
			continue
		}
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		go s.session(c, ch, creqs)
	}
}

type execMsg struct{ Command string }

func (s *Server) session(raw net.Conn, ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	for req := range reqs {
		if req.Type != "exec" {
			if req.WantReply {
				_ = req.Reply(req.Type == "env", nil)
			}
			continue
		}
		var m execMsg
		if err := ssh.Unmarshal(req.Payload, &m); err != nil {
			_ = req.Reply(false, nil)
			return
		}
		_ = req.Reply(true, nil)
		s.mu.Lock()
		s.Sessions++
		s.mu.Unlock()
		script, _ := io.ReadAll(io.LimitReader(ch, 1<<20))
		code := s.exec(raw, ch, m.Command, script)
		if code < 0 {
			return
		}
		_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(code)}))
		return
	}
}

// exec writes the reply; a negative code means "no exit status" (connection cut).
func (s *Server) exec(raw net.Conn, ch ssh.Channel, cmd string, script []byte) int {
	h := s.Host
	if strings.HasPrefix(cmd, "sudo ") && h.Fault == FaultSudoPassword {
		fmt.Fprintln(ch.Stderr(), "sudo: a password is required")
		return 1
	}
	if !strings.HasSuffix(cmd, "/bin/sh -s") {
		fmt.Fprintf(ch.Stderr(), "sim: unsupported command %q\n", cmd)
		return 127
	}
	marker, ok := remote.ScriptMarker(script)
	if !ok {
		fmt.Fprintln(ch.Stderr(), "sim: no marker in script")
		return 2
	}
	if out, ok := h.probeOutput(marker, script); ok {
		_, _ = io.WriteString(ch, out)
		return 0
	}
	sysctls, _ := remote.ScriptVar(script, "SYSCTLS")
	files, _ := remote.ScriptVar(script, "FILES")
	out := h.RenderFiles(marker, sysctls, files)
	switch h.Fault {
	case FaultHang:
		// Never answer: hold the session until the client gives up.
		buf := make([]byte, 1)
		_, _ = raw.Read(buf)
		return -1
	case FaultGarbage:
		_, _ = io.WriteString(ch, "Welcome!\nThis is not the output you are looking for.\n\x00\x01\x02 ok\n")
		return 0
	case FaultTruncated:
		_, _ = io.WriteString(ch, out[:len(out)/2])
		return 0
	case FaultDrop:
		_, _ = io.WriteString(ch, out[:len(out)/2])
		time.Sleep(20 * time.Millisecond)
		raw.Close()
		return -1
	case FaultFlood:
		chunk := []byte(strings.Repeat("x", 64<<10) + "\n")
		for i := 0; i < 4096; i++ { // at most 256 MiB, then give up
			if _, err := ch.Write(chunk); err != nil {
				return -1
			}
		}
		return 0
	case FaultBanner:
		_, _ = io.WriteString(ch, "*** Authorized use only ***\nLast login: Mon Nov 23 10:00:00 2026\n")
	}
	_, _ = io.WriteString(ch, out)
	return 0
}

// forward serves a direct-tcpip channel (ssh -J) to 127.0.0.1 only: the
// simulated fleet never reaches beyond loopback.
func (s *Server) forward(nc ssh.NewChannel) {
	var req struct {
		Host     string
		Port     uint32
		OrigHost string
		OrigPort uint32
	}
	if err := ssh.Unmarshal(nc.ExtraData(), &req); err != nil || req.Host != "127.0.0.1" {
		_ = nc.Reject(ssh.Prohibited, "simhost forwards to 127.0.0.1 only")
		return
	}
	s.mu.Lock()
	s.Forwards++
	s.mu.Unlock()
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(req.Host, strconv.Itoa(int(req.Port))), 5*time.Second)
	if err != nil {
		_ = nc.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	ch, reqs, err := nc.Accept()
	if err != nil {
		conn.Close()
		return
	}
	go ssh.DiscardRequests(reqs)
	go func() { _, _ = io.Copy(ch, conn); ch.CloseWrite() }()
	_, _ = io.Copy(conn, ch)
	conn.Close()
	ch.Close()
}

// SessionCount is Sessions, read under the server's lock (safe while serving).
func (s *Server) SessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Sessions
}

// AcceptedCount is Accepted, read under the server's lock (safe while serving).
func (s *Server) AcceptedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Accepted
}
