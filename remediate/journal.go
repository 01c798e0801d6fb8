package remediate

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/atomicfile"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/rules"
)

// JournalVersion is the version of the journal's JSON shape.
const JournalVersion = 1

// HostRunsDir is where the applier keeps a run's backups on each host:
// HostRunsDir/<run id>/.
const HostRunsDir = "/var/lib/kaudit/runs"

// HostStatus is where a host is in a run, as the journal records it.
type HostStatus string

// Host statuses in a journal, in the order a host normally goes through them.
const (
	StatusPlanned    HostStatus = "planned"
	StatusApplied    HostStatus = "applied"     // changes made, not yet verified
	StatusVerified   HostStatus = "verified"    // re-gathered, every change reads back as planned
	StatusRolledBack HostStatus = "rolled-back" // restored from the backups
	StatusFailed     HostStatus = "failed"      // something failed and the rollback did too, or was not possible: see Error
	StatusUnchanged  HostStatus = "unchanged"   // nothing to do, or not reached (batch stopped)
)

// Journal is the local record of one "kaudit fix --apply" run: enough to
// verify it and to roll every host back without the network being the
// only copy (the same backups are kept on each host under HostRunsDir).
type Journal struct {
	Version    int           `json:"version"`
	RunID      string        `json:"run_id"`
	StartedAt  time.Time     `json:"started_at"`
	FinishedAt time.Time     `json:"finished_at,omitzero"`
	Hosts      []HostJournal `json:"hosts"`
	// Stopped is where a rollout's gate stopped the run (nil: it was
	// not stopped by one); kaudit fix --apply --resume RUN-ID goes on
	// from there, the hosts the run changed left as they are.
	Stopped *Stop `json:"stopped,omitempty"`
	// Resumed are the times the run was continued (--resume).
	Resumed []time.Time `json:"resumed,omitempty"`
}

// Stop is why and where a rollout stopped: the gate's reason and the
// hosts it would have changed next.
type Stop struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
	Next   []string  `json:"next"`
}

// Done reports whether the run left the host as a resume must not touch
// it again: verified, or anything but planned and never started.
func (h *HostJournal) Done() bool {
	switch h.Status {
	case StatusPlanned:
		return len(h.Backups)+len(h.Runtime) > 0
	case StatusUnchanged:
		return h.NoOp || len(h.Backups)+len(h.Runtime) > 0
	}
	return true
}

// HostJournal is one host's part of a run.
type HostJournal struct {
	Host    string         `json:"host"`
	Status  HostStatus     `json:"status"`
	Backups []Backup       `json:"backups,omitempty"`
	Runtime []RuntimeValue `json:"runtime,omitempty"`
	Changes []Change       `json:"changes"`
	Error   string         `json:"error,omitempty"`
	// NoOp: the host already was as planned when read, so nothing was
	// changed (Status unchanged) and that is no failure. Error then says so.
	NoOp bool `json:"no_op,omitempty"`
	// Residual is what the verify's re-gather says remains of the talk's
	// failure on the host (nil: the host did not reach verified).
	Residual *Residual `json:"residual,omitempty"`
	// Restart is the broker restart of --restart (nil: none asked or
	// needed).
	Restart *Restart `json:"restart,omitempty"`
}

// Residual is the SYN-cookie failure's state on a host after a verified
// run: kernel-synack-wscale evaluated again on the facts gathered after
// the change, with the probe's verdict for this boot when kaudit has one.
// Verified means the values read back; Residual says whether the risk is
// gone.
type Residual struct {
	Kernel rules.Status `json:"kernel"` // kernel-synack-wscale after the run
	Source rules.Source `json:"kernel_source,omitempty"`
	// KernelOpen: the kernel lacks commit 909172a or may (status not pass):
	// only a kernel upgrade closes it.
	KernelOpen bool `json:"kernel_open"`
	// CookiePathOpen: a connection can still be completed by a SYN cookie
	// with the wrong window scale (the rule still fails: cookies on and
	// SO_RCVBUF set, or unknown with cookies on).
	CookiePathOpen bool `json:"cookie_path_open"`
	// Syncookies is net.ipv4.tcp_syncookies as read after the run.
	Syncookies string `json:"syncookies,omitempty"`
	// RestartPending: the plan's backlog (or another Kafka) change is in
	// the file but reaches the broker only when it restarts.
	RestartPending bool   `json:"restart_pending,omitempty"`
	Reason         string `json:"reason"` // the rule's reason after the run
}

// ResidualOf is the Residual of facts gathered after a run, given the
// findings of the rules on them.
func ResidualOf(f *facts.Facts, findings []rules.Finding, restartPending bool) *Residual {
	r := &Residual{RestartPending: restartPending}
	if f != nil {
		r.Syncookies = f.Sysctl[rules.KeySyncookies]
	}
	for _, fd := range findings {
		if fd.Rule != rules.RuleKernelSynackWscale {
			continue
		}
		r.Kernel, r.Source, r.Reason = fd.Status, fd.Source, fd.Reason
		r.KernelOpen = fd.Status != rules.Pass && fd.Status != rules.Skip
		r.CookiePathOpen = r.KernelOpen && r.Syncookies != "0" && (fd.Status == rules.Fail || fd.Status == rules.Unknown)
	}
	return r
}

// Failed reports whether the host did not end as planned: restoring
// failed, it was rolled back, or it was left unchanged for a reason (its
// read or apply failed, or it was not started) other than already being
// as planned.
func (h *HostJournal) Failed() bool {
	switch h.Status {
	case StatusFailed, StatusRolledBack:
		return true
	case StatusVerified:
		// verified, but the restart of --restart failed, its fix is not
		// in force, or its watch saw the storm
		return h.Restart != nil && (h.Restart.Error != "" || h.Restart.Critical != "")
	case StatusUnchanged:
		return h.Error != "" && !h.NoOp
	}
	return false
}

// Backup records one file before the run touched it. The content stays
// on the host (server.properties can hold secrets): the journal keeps its
// hash, so a rollback can check it restores what was there.
type Backup struct {
	Path    string `json:"path"`             // the file on the host
	SHA256  string `json:"sha256,omitempty"` // hex; empty when !Existed
	Existed bool   `json:"existed"`          // false: the run created it, rollback removes it
	Mode    string `json:"mode,omitempty"`   // octal permission bits, e.g. "0644"
	Owner   string `json:"owner,omitempty"`  // "user:group"
	Stored  string `json:"stored,omitempty"` // the copy on the host, under HostRunsDir/<run id>/
	// Written is the SHA-256 of the file as kaudit left it, read back on
	// the host after writing ("" : not written). A rollback restores the
	// file only while it still has this hash: a later edit is kept.
	Written string `json:"written_sha256,omitempty"`
	// Changed says whether the run changed the file (see Changed).
	Changed Changed `json:"changed,omitempty"`
}

// Changed is whether a run changed one item (a file, a running value) on
// a host, as the apply script's results tell. Rollback touches only what
// the run may have changed (Owned), and only while it is still as the
// run left it (Backup.Written, RuntimeValue.After); a host none of whose
// items the run owns has nothing to roll back.
type Changed string

// What a run did to an item.
const (
	// ChangedUnknown: a journal of an older kaudit. Rollback treats the
	// item as ChangedMaybe.
	ChangedUnknown Changed = ""
	// ChangedNo: the run did not change the item: its apply script
	// stopped before the item's step (a check that failed "nothing
	// changed, re-run", a full disk, a lease another run holds) or never
	// ran. Rollback never touches it.
	ChangedNo Changed = "no"
	// ChangedMaybe: the apply script was at the item's step, or was cut
	// off before saying how far it got (the journal says maybe before
	// the script starts, so a kaudit killed meanwhile leaves this).
	ChangedMaybe Changed = "maybe"
	// ChangedYes: the script said it changed the item.
	ChangedYes Changed = "yes"
)

// Owned reports whether a rollback of the run may touch an item so
// recorded: anything but ChangedNo.
func (c Changed) Owned() bool { return c != ChangedNo }

// RuntimeValue records a running setting before and after the run.
type RuntimeValue struct {
	Kind    ChangeKind `json:"kind,omitempty"` // KindSysctl, KindNICRing, KindNICOffload ("" in old journals: KindSysctl)
	Key     string     `json:"key"`            // sysctl key or "eth0 rx"
	Before  string     `json:"before"`
	After   string     `json:"after"`
	Changed Changed    `json:"changed,omitempty"` // whether the run set it (see Changed)
}

// Owned returns the items of h the run may have changed (Changed.Owned),
// with the index each has in h.Backups and h.Runtime. A rollback of the
// run touches these and nothing else.
func (h *HostJournal) Owned() (backups []Backup, backupIdx []int, runtime []RuntimeValue, runtimeIdx []int) {
	for i, b := range h.Backups {
		if b.Changed.Owned() {
			backups, backupIdx = append(backups, b), append(backupIdx, i)
		}
	}
	for i, r := range h.Runtime {
		if r.Changed.Owned() {
			runtime, runtimeIdx = append(runtime, r), append(runtimeIdx, i)
		}
	}
	return backups, backupIdx, runtime, runtimeIdx
}

// Owns reports whether the run may have changed anything on the host:
// whether a rollback of it has anything to do there.
func (h *HostJournal) Owns() bool {
	b, _, r, _ := h.Owned()
	return len(b)+len(r) > 0
}

// ChangedAnything reports whether the run may have changed any host.
func (j *Journal) ChangedAnything() bool {
	for i := range j.Hosts {
		if j.Hosts[i].Owns() {
			return true
		}
	}
	return false
}

// SetChanged records what the apply script did to each item of h: files
// and values, in the order of h.Backups and h.Runtime.
func (h *HostJournal) SetChanged(files, values []Changed) {
	for i := range h.Backups {
		if i < len(files) {
			h.Backups[i].Changed = files[i]
		}
	}
	for i := range h.Runtime {
		if i < len(values) {
			h.Runtime[i].Changed = values[i]
		}
	}
}

// InsecureError is a journal file or directory another user could
// write: refused, as OpenSSH refuses such a configuration file.
type InsecureError struct {
	Path string
	Why  string // "is writable by group or others (mode 0777)"
}

func (e *InsecureError) Error() string {
	return located.WithHint(fmt.Sprintf("journal %s %s: refused, since another user could have chosen what a rollback restores", e.Path, e.Why),
		"check that nobody changed it, then make it yours and private: chown $(id -u) PATH; chmod go-w PATH (or use another --journal-dir)")
}

// CheckPrivate refuses a journal file or directory writable by group or
// others, or owned by another user than the one running kaudit (an
// *InsecureError); a path that does not exist is os.ErrNotExist's error.
func CheckPrivate(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if m := fi.Mode().Perm(); m&0o022 != 0 {
		return &InsecureError{Path: path, Why: fmt.Sprintf("is writable by group or others (mode %04o)", m)}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return &InsecureError{Path: path, Why: fmt.Sprintf("is owned by uid %d, not by you (uid %d)", st.Uid, os.Geteuid())}
	}
	return nil
}

var runIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// ValidRunID reports whether id can name a run: it becomes a directory
// on every host, so only [A-Za-z0-9_-], no dots or slashes.
func ValidRunID(id string) bool { return runIDRE.MatchString(id) }

// NewRunID returns a run id: the UTC time and 8 random hex digits,
// e.g. 20240102T030405Z-1a2b3c4d. It sorts by time.
func NewRunID(now time.Time) string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Host returns the journal entry for host, nil when there is none.
func (j *Journal) Host(host string) *HostJournal {
	for i := range j.Hosts {
		if j.Hosts[i].Host == host {
			return &j.Hosts[i]
		}
	}
	return nil
}

// Save writes the journal to path atomically: a temporary file in the same
// directory, synced, then renamed over path. The file is private (0600).
func (j *Journal) Save(path string) error {
	if !ValidRunID(j.RunID) {
		return fmt.Errorf("journal %s: invalid run id %q", path, j.RunID)
	}
	j.Version = cmp.Or(j.Version, JournalVersion)
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return fmt.Errorf("journal %s: %w", path, err)
	}
	data = append(data, '\n')
	err = atomicfile.Write(path, 0o600, func(w io.Writer) error { _, err := w.Write(data); return err })
	if err != nil {
		return fmt.Errorf("journal %s: %w", path, err)
	}
	return nil
}

// LoadJournal reads a journal written by Save. The file and its
// directory must be private (CheckPrivate): a journal says what a
// rollback restores as root on every host.
func LoadJournal(path string) (*Journal, error) {
	if err := CheckPrivate(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if err := CheckPrivate(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	var j Journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if j.Version != JournalVersion {
		return nil, fmt.Errorf("journal %s: version %d, this kaudit reads version %d", path, j.Version, JournalVersion)
	}
	if !ValidRunID(j.RunID) {
		return nil, fmt.Errorf("journal %s: invalid run id %q", path, j.RunID)
	}
	return &j, nil
}

// Text says in one line what remains: the kernel, the cookie path, the
// restart.
func (r *Residual) Text() string {
	if !r.KernelOpen {
		return "kernel-synack-wscale " + string(r.Kernel) + " after the run: the failure is not possible here"
	}
	var b strings.Builder
	b.WriteString("the kernel still lacks commit 909172a or may (kernel-synack-wscale " + string(r.Kernel))
	if r.Source != "" && r.Source != rules.SourceNone {
		b.WriteString(", by " + string(r.Source))
	}
	b.WriteString("): only a kernel upgrade closes it; ")
	if r.CookiePathOpen {
		b.WriteString("the SYN-cookie path is still OPEN (tcp_syncookies=" + r.Syncookies + "): the failure remains possible")
	} else {
		b.WriteString("the SYN-cookie path is closed (tcp_syncookies=" + r.Syncookies + ")")
	}
	if r.RestartPending {
		b.WriteString("; the raised listen backlog is pending a broker restart")
	}
	return b.String()
}

// UnmarshalJSON reads a change as the journal holds it, also from a
// journal written before Change.Rules and Change.NM: its rules then are
// one string joined with "," under "rule", and its NetworkManager
// connection is "nm-uuid=<UUID>" in persist_match.
func (c *Change) UnmarshalJSON(b []byte) error {
	type plain Change // without this method
	var v struct {
		plain
		Rule string `json:"rule"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = Change(v.plain)
	if c.Rules == nil && v.Rule != "" {
		c.Rules = strings.Split(v.Rule, ",")
	}
	if uuid, ok := strings.CutPrefix(string(c.PersistMatch), legacyNMMatch); ok && c.NM == "" {
		c.NM, c.PersistMatch = NMConnection(uuid), ""
	}
	return nil
}
