package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"time"
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
}

// Output is what a script printed.
type Output struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// MaxOutput caps what kaudit reads from one host; a host printing more is
// reported as a protocol error rather than exhausting memory.
const MaxOutput = 16 << 20

// Runner runs a script through /bin/sh on a target.
type Runner interface {
	Run(ctx context.Context, t Target, script []byte) (*Output, error)
}

// shellCommand is the remote command line: the script arrives on stdin, so
// nothing from the inventory is ever interpolated into a command line.
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
	if t.Become == "sudo" && (bytes.Contains(out.Stderr, []byte("password is required")) || bytes.Contains(out.Stderr, []byte("a terminal is required"))) {
		return newErr(KindAuth, nil, "become: sudo needs a password for %s (kaudit never types one): allow passwordless sudo for /bin/sh or remove become", t.User)
	}
	if len(stderr) > 300 {
		stderr = stderr[:300] + "…"
	}
	return newErr(KindProtocol, nil, "gather script exited %d: %s", out.ExitCode, stderr)
}

// limitedBuffer is a bytes.Buffer that fails once more than max bytes are written.
type limitedBuffer struct {
	buf bytes.Buffer
	max int
}

var errTooMuch = errors.New("output limit exceeded")

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if l.buf.Len()+len(p) > l.max {
		return 0, errTooMuch
	}
	return l.buf.Write(p)
}

var _ io.Writer = (*limitedBuffer)(nil)

func tooMuch(err error) error {
	if errors.Is(err, errTooMuch) {
		return newErr(KindProtocol, err, "host printed more than %d MiB: refusing to read further", MaxOutput>>20)
	}
	return err
}
