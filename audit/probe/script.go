package probe

import (
	_ "embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kaudit/kaudit/internal/remote"
)

//go:embed probe.sh
var wrapper string

//go:embed probe.py
var pythonSource string

// Section is the name of the one framed section the probe prints.
const Section = "probe"

// Limits of what Script accepts.
const (
	MinBudget  = 500 * time.Millisecond
	MaxBudget  = 30 * time.Second
	MaxPayload = 8 << 20
)

// defaultPythons are tried in order: Debian/Ubuntu/current RHEL, then the
// interpreter RHEL 8 ships for system tools even without python3 installed.
var defaultPythons = []string{"python3", "/usr/libexec/platform-python"}

// Params are the per-host inputs of the probe script.
type Params struct {
	Marker  string // section marker; remote.NewMarker(remote.SectionPrefix) when empty
	Release string // the gathered kernel release: the script refuses to run on another
	// Budget bounds the probe on the host: python stops itself after it,
	// timeout(1) kills it one second later.
	Budget  time.Duration
	Payload int      // bytes sent client -> listener per case
	RcvBufs []string // SO_RCVBUF per case: a number of bytes or "max" (the host's rmem_max)
	Pythons []string // interpreters to try; defaultPythons when empty
}

var (
	reMarker  = regexp.MustCompile(`^[A-Za-z0-9_-]{8,64}$`)
	reRelease = regexp.MustCompile(`^[A-Za-z0-9._+~-]{1,128}$`)
	rePython  = regexp.MustCompile(`^(/[A-Za-z0-9._-]+)+$|^[A-Za-z0-9._-]+$`)
)

// Script renders the probe for one host. Every value is validated here:
// this is the last line before a remote shell.
func Script(p Params) ([]byte, error) {
	if p.Marker == "" {
		p.Marker = remote.NewMarker(remote.SectionPrefix)
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	pythons := p.Pythons
	if len(pythons) == 0 {
		pythons = defaultPythons
	}
	var b strings.Builder
	b.Grow(len(wrapper) + len(pythonSource) + 512)
	fmt.Fprintf(&b, "M=%s\nREL=%s\nBUDGET_MS=%d\nKILL_S=%d\nPAYLOAD=%d\nRCVBUFS=%s\nPYTHONS=%s\nPY=%s\n",
		remote.Quote(p.Marker), remote.Quote(p.Release), p.Budget.Milliseconds(), int(p.Budget.Seconds())+2,
		p.Payload, remote.Quote(strings.Join(p.RcvBufs, " ")), remote.Quote(strings.Join(pythons, " ")),
		remote.Quote(pythonSource))
	b.WriteString(wrapper)
	return []byte(b.String()), nil
}

func (p Params) validate() error {
	switch {
	case !reMarker.MatchString(p.Marker):
		return fmt.Errorf("probe: bad marker %q", p.Marker)
	case !reRelease.MatchString(p.Release):
		return fmt.Errorf("probe: kernel release %q is not a plain release string", p.Release)
	case p.Budget < MinBudget || p.Budget > MaxBudget:
		return fmt.Errorf("probe: budget %s outside %s-%s", p.Budget, MinBudget, MaxBudget)
	case p.Payload < 1 || p.Payload > MaxPayload:
		return fmt.Errorf("probe: payload %d bytes outside 1-%d", p.Payload, MaxPayload)
	case len(p.RcvBufs) == 0:
		return fmt.Errorf("probe: no SO_RCVBUF case")
	}
	for _, r := range p.RcvBufs {
		if n, err := strconv.Atoi(r); r != "max" && (err != nil || n < 1 || n > 1<<30) {
			return fmt.Errorf("probe: SO_RCVBUF %q is neither a byte count (1-%d) nor \"max\"", r, 1<<30)
		}
	}
	for _, py := range p.Pythons {
		if !rePython.MatchString(py) {
			return fmt.Errorf("probe: python %q is not a plain command name or absolute path", py)
		}
	}
	return nil
}
