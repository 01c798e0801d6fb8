package transport

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"sync"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
)

// Target is everything the transport needs to reach one host. It mirrors
// the inventory's connection settings without importing the inventory.
type Target struct {
	Name           string
	Address        string
	Port           int
	User           string
	IdentityFiles  []string // empty: OpenSSH defaults (~/.ssh/id_ed25519, id_ecdsa, id_rsa)
	UseAgent       bool
	KnownHosts     []string
	HostKeyPolicy  string // strict | accept-new | insecure
	ProxyJump      string // [user@]host[:port]
	Become         string // "" | "sudo"
	Local          bool   // connection: local
	ConnectTimeout time.Duration
	// Step names the script in error messages ("the apply script");
	// "" is DefaultStep, the audit's gather script.
	Step string
	// Coalesce holds the script's standard output on the host and sends
	// it in few large writes (coalesce.go): for a script whose result is
	// its output, not its exit status (the gather). SSH only: a local
	// pipe costs nothing per write.
	Coalesce bool

	// Given marks the settings above that the inventory set itself: they
	// win over ssh_config; the others are filled from it.
	Given Given
	// NoSSHConfig skips ssh_config for this host (inventory ssh_config: false).
	NoSSHConfig bool
}

// Given lists which connection settings of a Target the inventory set.
type Given struct {
	Address, Port, User, IdentityFiles, UseAgent, KnownHosts, HostKeyPolicy, ProxyJump, ConnectTimeout bool
}

// step is what errors call the script run: Step, or DefaultStep.
func (t Target) step() string { return cmp.Or(t.Step, DefaultStep) }

// Output is what a script printed.
type Output struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
	// HostKey is the SHA-256 fingerprint of the host key the session's
	// connection was verified with, "local" for a local run ("" when the
	// runner cannot say).
	HostKey string
}

// MaxOutput caps what kaudit reads from one host; a host printing more is
// reported as a protocol error rather than exhausting memory.
const MaxOutput = 16 << 20

// Runner runs a script through /bin/sh on a target.
type Runner interface {
	Run(ctx context.Context, t Target, script []byte) (*Output, error)
}

// Preparer is a Runner that wants every target before the fan-out (to ask
// for key passphrases once, on a terminal).
type Preparer interface {
	Prepare(ctx context.Context, targets []Target)
}

// shellCommand is the remote command line without a become password (see
// remoteInput for the one with): the script arrives on stdin, so nothing
// from the inventory is ever interpolated into a command line.
func shellCommand(become string) string {
	if become == "sudo" {
		// -n: never prompt; a password requirement fails at once instead of hanging.
		return "sudo -n -- /bin/sh -s"
	}
	return "/bin/sh -s"
}

// checkExit turns a non-zero exit from the wrapper (not from the script,
// which always exits 0) into a classified error.
func checkExit(t Target, out *Output) error {
	if out.ExitCode == 0 {
		return nil
	}
	stderr := string(bytes.TrimSpace(out.Stderr))
	if err := becomeFailure(t, out); err != nil {
		return err
	}
	if len(stderr) > 300 {
		stderr = stderr[:300] + "…"
	}
	return newErr(facts.KindProtocol, nil, "gather script exited %d: %s", out.ExitCode, stderr)
}

// limitedBuffer keeps at most max bytes. Past that it discards, records the
// overflow and calls cut once: merely refusing to read would leave the
// remote blocked on a full pipe until the host's deadline.
type limitedBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	over bool
	cut  func()
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.over {
		return len(p), nil
	}
	if l.buf.Len()+len(p) > l.max {
		l.over = true
		if l.cut != nil {
			go l.cut()
		}
		return len(p), nil
	}
	return l.buf.Write(p)
}

// ReadFrom reads r into the buffer's own spare room, through Write's
// bound. io.Copy uses it: x/crypto/ssh copies a session's stdout and
// stderr with io.Copy, which otherwise allocates a 32 KB buffer for each
// stream of each host (≈ 64 KB a host, 15 % of a scan's allocations).
func (l *limitedBuffer) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for {
		l.mu.Lock()
		if l.buf.Available() < 512 {
			l.buf.Grow(4096)
		}
		room := l.buf.AvailableBuffer()[:l.buf.Available()]
		l.mu.Unlock()
		n, err := r.Read(room) // only this goroutine writes while it runs
		if n > 0 {
			l.Write(room[:n]) // copies onto itself, or discards past max
			total += int64(n)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

func (l *limitedBuffer) overflowed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.over
}

func (l *limitedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Bytes()
}

var _ io.ReaderFrom = (*limitedBuffer)(nil)

func tooMuch() error {
	return newErr(facts.KindProtocol, nil, "host printed more than %d MiB: cut off (is the login shell printing in a loop, or is this not a broker?)", MaxOutput>>20)
}
