package probe

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/remote"
)

// The probe's output, inside its framed section, is one key=value line per
// fact, each printed and flushed as soon as it is known:
//
//	python=3.11.2 /usr/bin/python3
//	rmem_max=212992
//	host_syncookies_before=1
//	unshare=unshare(1)
//	netns_host=net:[4026531840]
//	netns_probe=net:[4026532210]
//	handshake=rcvbuf=102400 effective=204800 client_snd_wscale=1 client_rcv_wscale=7 server_snd_wscale=7 server_rcv_wscale=7 cookies_sent=1 cookies_recv=1
//	transfer=rcvbuf=102400 bytes=393216 flowed=14480 ms=1000 limit_ms=1000
//	… one handshake line, then its transfer line, per SO_RCVBUF case …
//	host_syncookies_during=1
//	elapsed_ms=2961
//	state=ok
//	exit=0                      (the wrapper: python's exit status)
//	host_syncookies_after=1     (the wrapper, after python ended)
//
// A handshake line is printed before its transfer starts, so a probe cut
// short (its budget, SIGALRM, timeout(1)'s SIGKILL, a cut session) keeps
// every window-scale pair it measured; a transfer line follows the
// handshake of the same SO_RCVBUF and no other.

// states the script may print; anything else is a protocol error.
var knownStates = map[facts.ProbeState]bool{
	facts.ProbeOK: true, facts.ProbeNeedsRoot: true, facts.ProbeNoPython: true,
	facts.ProbeUnsupported: true, facts.ProbeTimeout: true, facts.ProbeHostChanged: true,
	facts.ProbeError: true, "unshare-failed": true, "no-sysctl": true,
}

var knownUnshare = map[string]bool{"unshare(1)": true, "os.unshare": true, "ctypes": true}

// reKey is what a protocol line starts with; any other line (a shell's
// "Killed", a python traceback) is noise, kept for the reason.
var reKey = regexp.MustCompile(`^[a-z][a-z_]*=`)

// Fields of the two per-case lines: every one must be present exactly once.
var (
	handshakeFields = []string{"rcvbuf", "effective", "client_snd_wscale", "client_rcv_wscale",
		"server_snd_wscale", "server_rcv_wscale", "cookies_sent", "cookies_recv"}
	transferFields = []string{"rcvbuf", "bytes", "flowed", "ms", "limit_ms"}
)

// Parse reads the probe's output. It never fails: output that cannot be
// understood is a probe in state error whose Reason says why. Everything
// from the host is untrusted: only known keys are read, numbers strictly.
// Every complete line before a fault is kept: a probe cut short or
// truncated still carries the handshakes it printed (state timeout or
// error), and the rules judge them.
func Parse(out []byte, marker string) *facts.Probe {
	p := &facts.Probe{}
	body, complete, found := section(out, marker)
	if !found {
		p.State, p.Reason = facts.ProbeError, "probe output not understood: no probe section"
		if _, err := remote.Sections(out, marker, "probe"); err != nil {
			p.Reason = "probe output not understood: " + err.Error()
		}
		return p
	}
	var noise []string
	exit := ""
	seen := map[string]bool{}
	for i, line := range strings.Split(body, "\n") {
		if !reKey.MatchString(line) {
			if s := strings.TrimSpace(line); s != "" {
				noise = append(noise, s)
			}
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		if err := setField(p, k, v, seen); err != nil {
			p.State = facts.ProbeError
			p.Reason = fmt.Sprintf("probe output not understood at line %d: %v%s", i+1, err, measured(p))
			return p
		}
		if k == "exit" {
			exit = v
		}
	}
	finish(p, exit, noise, complete)
	return p
}

// section returns the body of the probe's section: the lines between its
// begin and end markers, or, when the end never came (the session was cut),
// every complete line after the begin marker (a last line without its
// newline is dropped: it may be cut in the middle).
func section(out []byte, marker string) (body string, complete, found bool) {
	begin := []byte(marker + " begin " + Section + "\n")
	var rest []byte
	switch i := bytes.Index(out, begin); {
	case i < 0:
		return "", false, false
	case i > 0 && out[i-1] != '\n':
		return "", false, false
	default:
		rest = out[i+len(begin):]
	}
	end := []byte("\n" + marker + " end " + Section)
	if j := bytes.Index(rest, end); j >= 0 {
		return string(rest[:j]), true, true
	}
	if j := bytes.LastIndexByte(rest, '\n'); j >= 0 {
		return string(rest[:j]), false, true
	}
	return "", false, true
}

// measured says what a probe that stopped had measured, for its reason.
func measured(p *facts.Probe) string {
	if len(p.Cases) == 0 {
		return ""
	}
	s := fmt.Sprintf(" (kept: %d handshake(s)", len(p.Cases))
	if c := p.Cases[len(p.Cases)-1]; c.Bytes == 0 {
		s += fmt.Sprintf(", the transfer with SO_RCVBUF %d not finished", c.RcvBuf)
	}
	return s + ")"
}

// finish settles the state from what the output as a whole shows.
func finish(p *facts.Probe, exit string, noise []string, complete bool) {
	stated := p.State
	switch {
	case !complete:
		p.State = facts.ProbeError
		p.Reason = "probe output truncated (session cut?)"
		if stated != "" {
			p.Reason += " after state " + string(stated)
		}
		p.Reason += measured(p)
		return
	case stated == "unshare-failed" || stated == "no-sysctl":
		p.State = facts.ProbeUnsupported
	case stated == "":
		p.State = facts.ProbeError
		switch exit {
		case "137", "124", "142":
			p.State = facts.ProbeTimeout
			p.Reason = "probe killed after its budget (exit " + exit + ": SIGKILL from timeout(1) or SIGALRM); nothing stays: the namespace died with the process"
		default:
			p.Reason = "probe ended without a verdict line (exit " + exit + ")"
		}
		p.Reason += measured(p)
		if len(noise) > 0 {
			p.Reason += ": " + lastLines(noise, 2)
		}
	case stated == facts.ProbeOK:
		switch {
		case len(p.Cases) == 0:
			p.State, p.Reason = facts.ProbeError, "probe reported ok without a single case"
		case p.Cases[len(p.Cases)-1].Bytes == 0:
			p.State, p.Reason = facts.ProbeError, fmt.Sprintf("probe reported ok without the transfer of SO_RCVBUF %d", p.Cases[len(p.Cases)-1].RcvBuf)
		case p.NetnsHost != "" && p.NetnsHost == p.NetnsProbe:
			p.State, p.Reason = facts.ProbeError, "probe reported the same network namespace before and after unshare"
		case p.HostSyncookiesAfter != "" && p.HostSyncookiesAfter != p.HostSyncookiesBefore:
			p.State = facts.ProbeHostChanged
			p.Reason = fmt.Sprintf("the host namespace's tcp_syncookies read %s before and %s after the probe", p.HostSyncookiesBefore, p.HostSyncookiesAfter)
		}
	default:
		if p.Reason == "" {
			p.Reason = "probe stopped in state " + string(stated)
		}
		p.Reason += measured(p)
	}
}

func lastLines(lines []string, n int) string {
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	s := strings.Join(lines, " | ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func setField(p *facts.Probe, k, v string, seen map[string]bool) error {
	switch k {
	case "handshake", "transfer":
		if seen["state"] {
			return fmt.Errorf("%s line after the state line", k)
		}
	default:
		if seen[k] {
			return fmt.Errorf("key %q repeated", k)
		}
		seen[k] = true
	}
	var err error
	switch k {
	case "state":
		if !knownStates[facts.ProbeState(v)] {
			return fmt.Errorf("unknown state %q", v)
		}
		p.State = facts.ProbeState(v)
	case "reason":
		p.Reason = v
	case "release":
		p.Release = v
	case "arch":
		p.Arch = v
	case "python":
		p.Python = v
	case "unshare":
		if !knownUnshare[v] {
			return fmt.Errorf("unshare=%q is not a known way", v)
		}
		p.Unshare = v
	case "netns_host":
		p.NetnsHost = v
	case "netns_probe":
		p.NetnsProbe = v
	case "host_syncookies_before":
		p.HostSyncookiesBefore, err = sysctlValue(v)
	case "host_syncookies_during":
		p.HostSyncookiesDuring, err = sysctlValue(v)
	case "host_syncookies_after":
		p.HostSyncookiesAfter, err = sysctlValue(v)
	case "host_syncookies_changed":
		_, err = sysctlValue(v)
	case "rmem_max":
		p.RmemMax, err = atoi(k, v)
	case "elapsed_ms":
		var n int
		n, err = atoi(k, v)
		p.RemoteMS = int64(n)
	case "exit":
		_, err = atoi(k, v)
	case "handshake":
		err = addHandshake(p, v)
	case "transfer":
		err = addTransfer(p, v)
	default:
		return fmt.Errorf("unknown key %q", k)
	}
	return err
}

func sysctlValue(v string) (string, error) {
	if _, err := strconv.Atoi(v); err != nil {
		return "", fmt.Errorf("tcp_syncookies value %q is not a number", v)
	}
	return v, nil
}

func atoi(k, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || (v != "0" && v[0] == '0') || v[0] == '+' {
		return 0, fmt.Errorf("%s=%q is not a non-negative integer", k, v)
	}
	return n, nil
}

// fields reads "k=N k=N ...": exactly the names given, each once, each a
// non-negative decimal number.
func fields(line, v string, names []string) (map[string]int, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	got := map[string]int{}
	for _, kv := range strings.Fields(v) {
		k, val, _ := strings.Cut(kv, "=")
		if !want[k] {
			return nil, fmt.Errorf("%s: unexpected field %q", line, k)
		}
		if _, dup := got[k]; dup {
			return nil, fmt.Errorf("%s: repeated field %q", line, k)
		}
		n, err := atoi(line+" "+k, val)
		if err != nil {
			return nil, err
		}
		got[k] = n
	}
	if len(got) != len(names) {
		return nil, fmt.Errorf("%s: %d of %d fields", line, len(got), len(names))
	}
	return got, nil
}

// addHandshake starts a case: the window-scale pair of one connection.
func addHandshake(p *facts.Probe, v string) error {
	f, err := fields("handshake", v, handshakeFields)
	if err != nil {
		return err
	}
	for _, k := range []string{"client_snd_wscale", "client_rcv_wscale", "server_snd_wscale", "server_rcv_wscale"} {
		if f[k] > 14 {
			return fmt.Errorf("handshake: %s=%d above the TCP maximum of 14", k, f[k])
		}
	}
	if n := len(p.Cases); n > 0 && p.Cases[n-1].Bytes == 0 {
		return fmt.Errorf("handshake of SO_RCVBUF %d before the transfer of SO_RCVBUF %d", f["rcvbuf"], p.Cases[n-1].RcvBuf)
	}
	if f["rcvbuf"] < 1 {
		return fmt.Errorf("handshake: rcvbuf=0")
	}
	p.Cases = append(p.Cases, facts.ProbeCase{
		RcvBuf: f["rcvbuf"], Effective: f["effective"],
		ClientSndWscale: f["client_snd_wscale"], ClientRcvWscale: f["client_rcv_wscale"],
		ServerSndWscale: f["server_snd_wscale"], ServerRcvWscale: f["server_rcv_wscale"],
		CookiesSent: f["cookies_sent"], CookiesRecv: f["cookies_recv"],
	})
	return nil
}

// addTransfer completes the last case: its transfer line must follow its
// handshake, once.
func addTransfer(p *facts.Probe, v string) error {
	f, err := fields("transfer", v, transferFields)
	if err != nil {
		return err
	}
	n := len(p.Cases)
	switch {
	case n == 0:
		return fmt.Errorf("transfer of SO_RCVBUF %d without its handshake", f["rcvbuf"])
	case p.Cases[n-1].RcvBuf != f["rcvbuf"] || p.Cases[n-1].Bytes != 0:
		return fmt.Errorf("transfer of SO_RCVBUF %d does not follow its handshake (last: SO_RCVBUF %d)", f["rcvbuf"], p.Cases[n-1].RcvBuf)
	case f["bytes"] < 1 || f["flowed"] > f["bytes"]:
		return fmt.Errorf("transfer: flowed=%d of bytes=%d", f["flowed"], f["bytes"])
	}
	c := &p.Cases[n-1]
	c.Bytes, c.Flowed, c.MS, c.LimitMS = f["bytes"], f["flowed"], f["ms"], f["limit_ms"]
	return nil
}
