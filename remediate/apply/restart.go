package apply

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/internal/safe"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/rules"
)

//go:embed sh/restart.sh
var restartSh string

// RestartParams is what the restart script (sh/restart.sh) does: with
// CountersOnly it only reads the TcpExt counters (the watch); else it
// restarts Unit and waits, at most Wait seconds, for the old process to
// be gone and the new MainPID to listen on Port.
type RestartParams struct {
	Marker       string
	Unit         string
	Port         int
	Wait         int // seconds (--restart-timeout)
	CountersOnly bool
	RunID        string
	Lease        Lease
}

// RestartScript renders the restart script; every value is validated
// and quoted.
func RestartScript(p RestartParams) ([]byte, error) {
	switch {
	case !remote.ValidMarker(p.Marker):
		return nil, fmt.Errorf("restart: bad marker %q", p.Marker)
	case !safe.ServiceName(p.Unit):
		return nil, fmt.Errorf("restart: %q is not a systemd service name", p.Unit)
	case p.Port < 1 || p.Port > 65535:
		return nil, fmt.Errorf("restart: bad port %d", p.Port)
	case p.Wait < 1 || p.Wait > 86400:
		return nil, fmt.Errorf("restart: bad wait %d s", p.Wait)
	}
	var h header
	h.set("M", p.Marker)
	mode := "restart"
	if p.CountersOnly {
		mode = "counters"
	}
	h.set("MODE", mode)
	h.set("UNIT", p.Unit)
	h.set("PORT", strconv.Itoa(p.Port))
	h.set("WAIT", strconv.Itoa(p.Wait))
	if !p.CountersOnly {
		h.lock(p.RunID, p.Lease)
	}
	return h.script(restartSh)
}

// RestartDecision says whether kaudit restarts host h's broker after its
// verified changes (changes), and when not, why: "" restart through
// unit; refused non-empty: the manual step instead. need is false when
// no change needs a restart.
func RestartDecision(f *facts.Facts, changes []remediate.Change) (need bool, unit, refused string) {
	for _, c := range changes {
		need = need || c.RestartRequired
	}
	switch {
	case !need:
		return false, "", ""
	case f == nil || f.Kafka == nil || f.Kafka.PID == 0:
		return true, "", "no running broker was found: restart it by hand once it runs, so the changes take effect"
	case f.Kafka.Unit == nil || !safe.ServiceName(f.Kafka.Unit.Name):
		return true, "", fmt.Sprintf("the broker (pid %d) is not a systemd service (a container, a shell): kaudit restarts only through systemd; restart it by hand where it is started, one broker at a time once the cluster is healthy (0 under-replicated partitions)", f.Kafka.PID)
	}
	return true, f.Kafka.Unit.Name, ""
}

// restartWants are what the restart must put in force, from the facts
// gathered after the verify: the backlog min(socket.listen.backlog.size,
// somaxconn) (0: unknown, not checked) and the open-files limit of a
// drop-in change ("SOFT HARD"; "": not changed).
func restartWants(after *facts.Facts, changes []remediate.Change) (backlog int, nofile string) {
	if after != nil && after.Kafka != nil {
		req, ok := rules.RequestedBacklog(after.Kafka)
		som, err := strconv.Atoi(strings.TrimSpace(after.Sysctl["net.core.somaxconn"]))
		if ok && err == nil {
			backlog = rules.EffectiveBacklog(req, som)
		}
	}
	for _, c := range changes {
		if c.Kind == remediate.KindUnitDropIn {
			soft, hard, ok := strings.Cut(c.To, ":")
			if !ok {
				hard = soft
			}
			nofile = soft + " " + hard
		}
	}
	return backlog, nofile
}

// parseCounters reads the counters step's detail: four numbers, "-"
// for one the kernel lacks (-1).
func parseCounters(r *remote.Result) (remediate.Counters, error) {
	if r == nil || !r.OK || len(r.Detail) != 1 {
		return remediate.Counters{}, fmt.Errorf("the counters were not read (%s)", r.Text())
	}
	f := strings.Fields(r.Detail[0])
	if len(f) != 4 {
		return remediate.Counters{}, fmt.Errorf("counters %q: want 4 fields", r.Detail[0])
	}
	v := make([]int64, 4)
	for i, s := range f {
		if s == "-" {
			v[i] = -1
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return remediate.Counters{}, fmt.Errorf("counter %q: want a number", s)
		}
		v[i] = n
	}
	return remediate.Counters{SyncookiesSent: v[0], TCPReqQFullDoCookies: v[1], ListenOverflows: v[2], ListenDrops: v[3]}, nil
}

// parseRestart fills r from the restart script's results; the error is
// the first step that failed, or what is missing.
func parseRestart(rs remote.Results, r *remediate.Restart) error {
	if c, err := parseCounters(rs.Find("counters")); err == nil {
		r.Before = &c
	}
	num := func(step string) int {
		if x := rs.Find(step); x != nil && x.OK {
			n, _ := strconv.Atoi(x.Text())
			return n
		}
		return 0
	}
	r.OldPID, r.NewPID, r.Backlog = num("oldpid"), num("newpid"), num("listen")
	if x := rs.Find("nofile"); x != nil && x.OK && x.Text() != "-" {
		r.NoFile = normLimits(x.Text())
	}
	if f := rs.FirstFailure(); f != nil {
		return fmt.Errorf("restart step %s failed: %s", f.Step, f.Text())
	}
	if rs.Find("done") == nil || r.Before == nil || r.NewPID == 0 {
		return fmt.Errorf("the restart script did not finish")
	}
	return nil
}

// normLimits writes "unlimited" as systemd and the drop-in do: infinity.
func normLimits(s string) string {
	return strings.ReplaceAll(s, "unlimited", "infinity")
}
