package probe

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/remote"
)

// states the script may print; anything else is a protocol error.
var knownStates = map[string]bool{
	facts.ProbeOK: true, facts.ProbeNeedsRoot: true, facts.ProbeNoPython: true,
	facts.ProbeUnsupported: true, facts.ProbeTimeout: true, facts.ProbeHostChanged: true,
	facts.ProbeError: true, "unshare-failed": true, "no-sysctl": true,
}

// Parse reads the probe's output. It never fails: output that cannot be
// understood is a probe in state error whose Reason says why. Everything
// from the host is untrusted: only known keys are read, numbers strictly.
func Parse(out []byte, marker string) *facts.Probe {
	p := &facts.Probe{}
	secs, err := remote.Sections(out, marker, "probe")
	sec, ok := secs[Section]
	switch {
	case ok:
	case bytes.Contains(out, []byte(marker+" begin "+Section)):
		p.State, p.Reason = facts.ProbeError, "probe output truncated inside the probe section (session cut?)"
		return p
	default:
		p.State, p.Reason = facts.ProbeError, "probe output not understood: no probe section"
		if err != nil {
			p.Reason = "probe output not understood: " + err.Error()
		}
		return p
	}
	var noise []string
	exit := ""
	for _, line := range strings.Split(sec.Body, "\n") {
		k, v, found := strings.Cut(line, "=")
		if !found {
			if strings.TrimSpace(line) != "" {
				noise = append(noise, strings.TrimSpace(line))
			}
			continue
		}
		if k == "exit" {
			exit = v
			continue
		}
		if perr := setField(p, k, v); perr != nil {
			return &facts.Probe{State: facts.ProbeError, Reason: "probe output not understood: " + perr.Error()}
		}
	}
	finish(p, exit, noise, err)
	return p
}

// finish settles the state when the script did not print a final one.
func finish(p *facts.Probe, exit string, noise []string, splitErr error) {
	switch p.State {
	case "unshare-failed", "no-sysctl":
		p.State = facts.ProbeUnsupported
	case "":
		p.State = facts.ProbeError
		switch {
		case exit == "137" || exit == "124" || exit == "142":
			p.State = facts.ProbeTimeout
			p.Reason = "probe killed after its budget (exit " + exit + ": SIGKILL from timeout(1) or python's own SIGALRM); nothing stays: the namespace died with the process"
		case splitErr != nil:
			p.Reason = "probe output truncated: " + splitErr.Error()
		default:
			p.Reason = "probe ended without a verdict line (exit " + exit + ")"
		}
		if len(noise) > 0 {
			p.Reason += ": " + lastLines(noise, 2)
		}
	}
	if p.State == facts.ProbeOK && p.NetnsHost != "" && p.NetnsHost == p.NetnsProbe {
		p.State, p.Reason = facts.ProbeError, "probe reported the same network namespace before and after unshare"
	}
	if p.State == facts.ProbeOK && p.HostSyncookiesAfter != "" && p.HostSyncookiesAfter != p.HostSyncookiesBefore {
		p.State = facts.ProbeHostChanged
		p.Reason = fmt.Sprintf("the host namespace's tcp_syncookies read %s before and %s after the probe", p.HostSyncookiesBefore, p.HostSyncookiesAfter)
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

func setField(p *facts.Probe, k, v string) error {
	var err error
	switch k {
	case "state":
		if !knownStates[v] {
			return fmt.Errorf("unknown state %q", v)
		}
		p.State = v
	case "reason":
		p.Reason = v
	case "release":
		p.Release = v
	case "arch":
		p.Arch = v
	case "python":
		p.Python = v
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
	case "case":
		var c facts.ProbeCase
		c, err = parseCase(v)
		p.Cases = append(p.Cases, c)
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
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q is not a non-negative integer", k, v)
	}
	return n, nil
}

// parseCase reads "rcvbuf=N effective=N client_snd_wscale=N ...": every
// field must be present exactly once.
func parseCase(v string) (facts.ProbeCase, error) {
	var c facts.ProbeCase
	fields := map[string]*int{
		"rcvbuf": &c.RcvBuf, "effective": &c.Effective,
		"client_snd_wscale": &c.ClientSndWscale, "client_rcv_wscale": &c.ClientRcvWscale,
		"server_snd_wscale": &c.ServerSndWscale, "server_rcv_wscale": &c.ServerRcvWscale,
		"cookies_sent": &c.CookiesSent, "cookies_recv": &c.CookiesRecv,
		"bytes": &c.Bytes, "flowed": &c.Flowed, "ms": &c.MS,
	}
	seen := map[string]bool{}
	for _, kv := range strings.Fields(v) {
		k, val, _ := strings.Cut(kv, "=")
		dst, ok := fields[k]
		if !ok || seen[k] {
			return c, fmt.Errorf("case: unexpected or repeated field %q", k)
		}
		n, err := atoi("case "+k, val)
		if err != nil {
			return c, err
		}
		if strings.HasSuffix(k, "_wscale") && n > 14 {
			return c, fmt.Errorf("case: %s=%d above the TCP maximum of 14", k, n)
		}
		*dst, seen[k] = n, true
	}
	if len(seen) != len(fields) {
		return c, fmt.Errorf("case: %d of %d fields", len(seen), len(fields))
	}
	return c, nil
}
