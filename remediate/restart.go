package remediate

import (
	"fmt"
	"strings"
	"time"
)

// Counters are a host's TcpExt counters a restart is watched by
// (/proc/net/netstat); -1: the kernel does not have it.
type Counters struct {
	SyncookiesSent       int64 `json:"syncookies_sent"`
	TCPReqQFullDoCookies int64 `json:"tcp_reqq_full_do_cookies"`
	ListenOverflows      int64 `json:"listen_overflows"`
	ListenDrops          int64 `json:"listen_drops"`
}

// Delta is after minus before, counter by counter (-1 where either is
// unknown).
func (c Counters) Delta(after Counters) Counters {
	d := func(a, b int64) int64 {
		if a < 0 || b < 0 {
			return -1
		}
		return b - a
	}
	return Counters{d(c.SyncookiesSent, after.SyncookiesSent), d(c.TCPReqQFullDoCookies, after.TCPReqQFullDoCookies),
		d(c.ListenOverflows, after.ListenOverflows), d(c.ListenDrops, after.ListenDrops)}
}

func (c Counters) String() string {
	n := func(v int64) string {
		if v < 0 {
			return "unknown"
		}
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("SyncookiesSent %s, TCPReqQFullDoCookies %s, ListenOverflows %s, ListenDrops %s",
		n(c.SyncookiesSent), n(c.TCPReqQFullDoCookies), n(c.ListenOverflows), n(c.ListenDrops))
}

// Restart is a broker restart kaudit made (fix --apply --restart,
// rollback --restart), or refused, as the journal keeps it.
type Restart struct {
	Unit string    `json:"unit,omitempty"`
	At   time.Time `json:"at,omitempty"` // when the restart was asked
	// Refused says why kaudit did not restart the broker and what to do
	// instead ("": it restarted it, or tried).
	Refused string    `json:"refused,omitempty"`
	OldPID  int       `json:"old_pid,omitempty"`
	NewPID  int       `json:"new_pid,omitempty"`
	Before  *Counters `json:"counters_before,omitempty"`
	// Backlog: the listener's Send-Q after the restart and the backlog
	// the fix asks for (min(socket.listen.backlog.size, somaxconn)).
	Backlog     int `json:"backlog,omitempty"`
	WantBacklog int `json:"want_backlog,omitempty"`
	// NoFile: the new process's open-files limit ("SOFT HARD") and the
	// one the fix asks for ("": not changed by the run).
	NoFile     string `json:"nofile,omitempty"`
	WantNoFile string `json:"want_nofile,omitempty"`
	InForce    bool   `json:"in_force"`
	Error      string `json:"error,omitempty"`
	// Watch: the counters read after the cluster was healthy again and
	// --watch passed, their deltas and the verdict.
	After    *Counters `json:"counters_after,omitempty"`
	Deltas   *Counters `json:"deltas,omitempty"`
	Critical string    `json:"critical,omitempty"`
}

// WatchVerdict judges a restart's watch: SYN cookies sent during it on a
// host whose kernel-synack-wscale is fail or unknown (kernelOpen) is
// critical: the connections completed by cookie in that window run with
// the wrong window scale. It returns "" when nothing is critical.
func WatchVerdict(host string, d Counters, kernelOpen bool) string {
	if !kernelOpen || (d.SyncookiesSent <= 0 && d.TCPReqQFullDoCookies <= 0) {
		return ""
	}
	return fmt.Sprintf("%s: %d SYN cookie(s) sent (TCPReqQFullDoCookies %d) while the restarted broker's clients reconnected, on a kernel without commit 909172a (kernel-synack-wscale fail or unknown): "+
		"the producers connected in that window run with the wrong window scale until they reconnect (hint: restart or reconnect those producers; turn SYN cookies off (net.ipv4.tcp_syncookies=0, kaudit fix plans it) or upgrade the kernel before restarting further brokers)",
		host, max(d.SyncookiesSent, 0), max(d.TCPReqQFullDoCookies, 0))
}

// CheckInForce checks a restart's outcome: the listener's Send-Q equals the
// wanted backlog, and the new open-files limit is the one planned (when
// the run changed it). It returns what is not in force.
func (r *Restart) CheckInForce() []string {
	var out []string
	if r.WantBacklog > 0 && r.Backlog != r.WantBacklog {
		out = append(out, fmt.Sprintf("the listener's backlog (ss Send-Q) is %d after the restart, want %d", r.Backlog, r.WantBacklog))
	}
	if r.WantNoFile != "" && r.NoFile != r.WantNoFile {
		out = append(out, fmt.Sprintf("the new process's open-files limit is %q, want %q", r.NoFile, r.WantNoFile))
	}
	r.InForce = len(out) == 0
	if !r.InForce {
		r.Error = "not in force after the restart: " + strings.Join(out, "; ")
	}
	return out
}

// RestartByHand is what a change that needs a broker restart asks of the
// user when kaudit did not restart the broker: kaudit restarts one only
// with fix --apply --restart (or rollback --restart) and --bootstrap.
const RestartByHand = "restart the broker when convenient, one broker of a cluster at a time once the cluster is healthy, or let kaudit do it: fix --apply --restart --bootstrap"
