package discover

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaudit/kaudit/internal/located"
)

// ErrorKind says which step of reaching the cluster failed.
type ErrorKind string

// The ways reaching a cluster fails, each with what to check.
const (
	Unreachable ErrorKind = "unreachable"
	TLSFailed   ErrorKind = "tls"
	AuthFailed  ErrorKind = "auth"
	NotKafka    ErrorKind = "not-kafka"
	Failed      ErrorKind = "failed"
)

// Error is a failure to reach the cluster, with what to check.
type Error struct {
	Kind      ErrorKind
	Bootstrap string
	Hint      string
	Err       error
}

func (e *Error) Error() string {
	return located.WithHint(fmt.Sprintf("bootstrap %s: %v", e.Bootstrap, e.Err), e.Hint)
}

func (e *Error) Unwrap() error { return e.Err }

func explain(o Options, err error) error {
	e := &Error{Kind: Failed, Bootstrap: strings.Join(o.Bootstrap, ","), Err: err, Hint: "check the bootstrap address and the client settings"}
	var (
		recErr  tls.RecordHeaderError
		certErr *tls.CertificateVerificationError
		unk     x509.UnknownAuthorityError
		host    x509.HostnameError
		opErr   *net.OpError
		eof     *kgo.ErrFirstReadEOF
	)
	reply := foreignReply(err)
	switch {
	case errors.As(err, &eof) && o.TLS == nil && strings.Contains(eof.Error(), "requires TLS"):
		e.Kind, e.Hint = TLSFailed, "the broker closed the connection at the first request: if this listener is SSL or SASL_SSL, give --tls-ca"
	case errors.As(err, &eof) && o.SASL == nil && strings.Contains(eof.Error(), "SASL is required"):
		e.Kind, e.Hint = AuthFailed, "the broker closed the connection after the first request: if this listener is SASL_PLAINTEXT or SASL_SSL, give --sasl-mechanism, --sasl-user and --sasl-password-file"
	case o.TLS != nil && (errors.As(err, &eof) && strings.Contains(eof.Error(), "after a dial") || errors.Is(err, syscall.ECONNRESET)):
		e.Kind, e.Hint = TLSFailed, "the broker closed the connection at the TLS handshake: is this listener PLAINTEXT or SASL_PLAINTEXT? drop --tls-ca"
	case strings.Contains(err.Error(), "appear to be a tls alert record"):
		e.Kind, e.Hint = TLSFailed, "this listener speaks TLS: give --tls-ca (security.protocol SSL or SASL_SSL)"
	case reply != "":
		e.Kind, e.Hint = NotKafka, fmt.Sprintf("the port answered %s, which is not Kafka: is this the broker's client listener (not its SSH, HTTP or JMX port)?", reply)
	case o.SASL != nil && errors.Is(err, kerr.IllegalSaslState):
		e.Kind, e.Hint = AuthFailed, "this listener does not speak SASL: it answered the SASL handshake with ILLEGAL_SASL_STATE, as a PLAINTEXT or SSL listener does; the password was never tried. Drop --sasl-mechanism, --sasl-user and the password flags (security.protocol PLAINTEXT or SSL), or give the SASL listener's port"
	case errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, kerr.UnsupportedSaslMechanism):
		e.Kind, e.Hint = AuthFailed, "authentication failed: check the SASL mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), the user name and the password file or variable"
	case o.SASL != nil && o.TLS == nil && errors.Is(err, io.EOF):
		e.Kind, e.Hint = AuthFailed, "the broker closed the connection during SASL authentication: check the user name, the password and the mechanism (and that the listener is SASL_PLAINTEXT, not SSL)"
	case o.SASL != nil && o.TLS != nil && errors.Is(err, io.EOF) && tlsHandshakes(o):
		e.Kind, e.Hint = AuthFailed, "the broker closed the connection during SASL authentication (the TLS handshake succeeds): check the user name, the password and the mechanism"
	case errors.As(err, &certErr), errors.As(err, &unk), errors.As(err, &host):
		e.Kind, e.Hint = TLSFailed, "the broker's TLS certificate was not accepted: check the CA file (--tls-ca) and the server name (--tls-server-name) against the certificate's names"
	case errors.As(err, &recErr), strings.Contains(err.Error(), "tls:"):
		e.Kind, e.Hint = TLSFailed, "the TLS handshake failed: is this listener TLS (SSL or SASL_SSL)? check the client certificate and key"
	case o.TLS != nil && (errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "EOF")):
		e.Kind, e.Hint = TLSFailed, "no TLS handshake within the timeout: is this listener PLAINTEXT? check security.protocol"
	case o.TLS == nil && errors.Is(err, syscall.ECONNRESET):
		e.Kind, e.Hint = TLSFailed, "the broker reset the connection at kaudit's first request, as a TLS listener does to a plaintext client: if this listener is SSL or SASL_SSL, give --tls-ca; else check that this port is the broker's Kafka listener"
	case errors.As(err, &opErr), errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Hint = Unreachable, "no broker answered: check the address and port, the firewall, and that the listener is the one clients use"
	}
	return e
}

// largeSize matches franz-go's error for a reply whose first four bytes,
// read as a Kafka size, exceed the read limit.
var largeSize = regexp.MustCompile(`invalid large response size (\d+) >`)

// foreignReply returns the first four bytes a non-Kafka server sent, quoted,
// when franz-go read them as an impossible response size and they are
// printable ASCII ("SSH-" from sshd, "HTTP" from a web server), or "".
func foreignReply(err error) string {
	m := largeSize.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	n, perr := strconv.ParseUint(m[1], 10, 32)
	if perr != nil {
		return ""
	}
	b := []byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return ""
		}
	}
	return strconv.Quote(string(b))
}

// tlsHandshakes reports whether the first bootstrap server completes a
// TLS handshake with o's settings (within 3 s): a connection closed after
// it, under SASL_SSL, was closed by the SASL authentication.
func tlsHandshakes(o Options) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	addr := o.Bootstrap[0]
	dial := o.Dialer
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	raw, err := dial(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer raw.Close()
	cfg := o.TLS.Clone()
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			cfg.ServerName = host
		}
	}
	return tls.Client(raw, cfg).HandshakeContext(ctx) == nil
}
