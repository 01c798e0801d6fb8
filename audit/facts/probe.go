package facts

import "time"

// ProbeState is what happened to the SYN-cookie window-scale probe on one
// host (audit/probe). ProbeOK: it finished and Cases hold every case. A
// probe that stopped part way (timeout, error, host-changed) keeps in Cases
// every handshake it measured before it stopped; Reason says why it stopped.
// needs-root, not-per-netns, no-python, unsupported and unproven never ran.
type ProbeState string

// Probe states (Probe.State).
const (
	ProbeOK           ProbeState = "ok"            // ran; Cases hold what the kernel did
	ProbeNeedsRoot    ProbeState = "needs-root"    // not root and no become: sudo
	ProbeNotPerNetns  ProbeState = "not-per-netns" // tcp_syncookies is (or may be) host-wide on this kernel: not run
	ProbeNoPython     ProbeState = "no-python"     // neither python3 nor /usr/libexec/platform-python
	ProbeUnsupported  ProbeState = "unsupported"   // the host cannot run it (no unshare, sysctl absent in the new namespace, …)
	ProbeTimeout      ProbeState = "timeout"       // did not finish within its budget; killed
	ProbeHostChanged  ProbeState = "host-changed"  // the host namespace's tcp_syncookies moved: restored, aborted
	ProbeError        ProbeState = "error"         // anything else (output not understood, transport error)
	ProbeInconclusive ProbeState = "inconclusive"  // ran, but no connection went through the SYN-cookie path
	ProbeUnproven     ProbeState = "unproven"      // not run: a host the cluster alone named, not proven its broker (discover.Standing)
)

// Probe is the outcome of the behavioural test of Linux commit 909172a: in a
// throw-away network namespace with tcp_syncookies=2, the window scale the
// client believes (tcpi_snd_wscale) against the one the accepted socket
// uses (tcpi_rcv_wscale), per SO_RCVBUF.
type Probe struct {
	State  ProbeState `json:"state"`
	Reason string     `json:"reason,omitempty"` // why it did not run or finish; what it saw otherwise
	// Release is the kernel the probe ran on (/proc/sys/kernel/osrelease,
	// checked against the gathered one before anything runs).
	Release string `json:"release,omitempty"`
	Arch    string `json:"arch,omitempty"`
	Python  string `json:"python,omitempty"` // version and path of the interpreter used
	// PerNetns says how kaudit decided, before writing anything, that
	// tcp_syncookies is per network namespace on this kernel.
	PerNetns   string `json:"per_netns,omitempty"`
	NetnsHost  string `json:"netns_host,omitempty"`  // /proc/self/ns/net before unshare, e.g. net:[4026531833]
	NetnsProbe string `json:"netns_probe,omitempty"` // and after: must differ
	// Host namespace's tcp_syncookies before, during (re-read through a
	// descriptor opened in that namespace) and after the probe.
	HostSyncookiesBefore string      `json:"host_syncookies_before,omitempty"`
	HostSyncookiesDuring string      `json:"host_syncookies_during,omitempty"`
	HostSyncookiesAfter  string      `json:"host_syncookies_after,omitempty"`
	RmemMax              int         `json:"rmem_max,omitempty"`
	Cases                []ProbeCase `json:"cases,omitempty"`
	DurationMS           int64       `json:"duration_ms"`         // wall time kaudit spent, SSH session included
	ScriptBytes          int         `json:"script_bytes"`        // bytes sent to the host (the script on stdin)
	RemoteMS             int64       `json:"remote_ms,omitempty"` // time inside the probe itself
	// Unshare says how the network namespace was made: "unshare(1)",
	// "os.unshare" or "ctypes".
	Unshare string `json:"unshare,omitempty"`
	// BootID is the boot it ran on (Kernel.BootID when it ran), HostKey the
	// host key of its session: with Release, what a recorded probe is
	// matched by.
	BootID  string `json:"boot_id,omitempty"`
	HostKey string `json:"host_key,omitempty"`
	// At is when it ran (UTC). Recorded says it did not run in this
	// kaudit run but was read back from kaudit's own records
	// (audit/probe.Records) for the same boot of the same host.
	At       time.Time `json:"at,omitzero"`
	Recorded bool      `json:"recorded,omitempty"`
	// AgeS is, for a recorded probe, how old it was (seconds) when this
	// gather read it back.
	AgeS int64 `json:"age_s,omitempty"`
}

// ProbeCase is one listener / client pair of the probe: its handshake
// (the window-scale pair, which decides the verdict) and then a transfer
// that confirms it. The host prints the two as they happen, so a probe cut
// short keeps the handshakes it measured: Bytes is 0 when the probe
// stopped before this case's transfer ended (the payload is at least 1).
type ProbeCase struct {
	RcvBuf          int `json:"rcvbuf"`           // SO_RCVBUF set on the listener before listen()
	Effective       int `json:"rcvbuf_effective"` // what getsockopt returned (the kernel doubles it)
	ClientSndWscale int `json:"client_snd_wscale"`
	ClientRcvWscale int `json:"client_rcv_wscale"`
	ServerSndWscale int `json:"server_snd_wscale"`
	ServerRcvWscale int `json:"server_rcv_wscale"`
	CookiesSent     int `json:"cookies_sent"`       // SyncookiesSent delta in the probe's namespace
	CookiesRecv     int `json:"cookies_recv"`       // SyncookiesRecv delta: 1 = the connection was completed by a cookie
	Bytes           int `json:"bytes"`              // payload sent client -> listener; 0 = transfer not measured
	Flowed          int `json:"flowed"`             // bytes the listener side received
	MS              int `json:"ms"`                 // time the payload took (or until the transfer's limit)
	LimitMS         int `json:"limit_ms,omitempty"` // the transfer's own share of the budget
}
