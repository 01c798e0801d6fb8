package apply

import (
	"cmp"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/internal/safe"
	"github.com/kaudit/kaudit/nicpersist"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/sysctld"
)

// The scripts print one result line per step on stdout:
//
//	<marker> TAB <step> TAB ok|fail TAB <detail>
//
// and nothing else on stdout (command errors go to stderr). The marker is
// random per run of a script, so nothing a host prints by accident can be
// read as a result. A file's content never appears in a result line,
// except in the read step (base64, kept in memory only).

var (
	reSHA  = regexp.MustCompile(`^[0-9a-f]{64}$`)
	reMode = regexp.MustCompile(`^0[0-7]{3}$`)
)

// NewMarker returns a random marker for result lines and here-doc delimiters.
func NewMarker() string { return remote.NewMarker(remote.StepPrefix) }

// checkPath validates a file path kaudit may write: absolute, the shared
// remote-path alphabet (internal/safe), no "." or ".." component, no trailing slash.
func checkPath(p string) error {
	if !safe.RemotePath(p) || p == "/" || strings.HasSuffix(p, "/") || strings.Contains(p, "//") {
		return fmt.Errorf("path %q: want an absolute path of letters, digits and %s", p, safe.PathExtra)
	}
	for _, c := range strings.Split(p[1:], "/") {
		if c == "." || c == ".." || strings.HasPrefix(c, "-") {
			return fmt.Errorf("path %q: component %q is not allowed", p, c)
		}
	}
	return nil
}

// CheckPropertiesPath validates a server.properties path: a writable path
// (checkPath) whose name ends in ".properties". The path comes from the
// broker's command line on the host, so kaudit refuses to edit anything
// that is not plainly a properties file.
func CheckPropertiesPath(p string) error {
	if err := checkPath(p); err != nil {
		return err
	}
	if !strings.HasSuffix(path.Base(p), ".properties") || path.Base(p) == ".properties" {
		return fmt.Errorf("path %q: kaudit edits only files named *.properties", p)
	}
	return nil
}

// CheckSysctlKey validates a sysctl key for /proc/sys: sysctld's alphabet,
// non-empty dot-separated components.
func CheckSysctlKey(k string) error {
	if !sysctld.ValidKey(k) {
		return fmt.Errorf("sysctl key %q: want [a-z0-9_.]", k)
	}
	for _, c := range strings.Split(k, ".") {
		if c == "" {
			return fmt.Errorf("sysctl key %q: empty component", k)
		}
	}
	return nil
}

// CheckSysctlValue validates a (folded) sysctl value.
func CheckSysctlValue(k, v string) error {
	if !sysctld.ValidValue(v) || sysctld.Fold(v) != v {
		return fmt.Errorf("sysctl %s: value %q: want [A-Za-z0-9 _.:-], single spaces", k, v)
	}
	return nil
}

func procPath(key string) string { return "/proc/sys/" + strings.ReplaceAll(key, ".", "/") }

func q(s string) string { return remote.Quote(s) }

// SHA256 returns the hex SHA-256 of b, as sha256sum prints it.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// The scripts are static POSIX sh files (sh/*.sh, embedded) that read
// their work as data: Go renders only a header of single-quoted variable
// assignments, M (the marker) first, some of them records — lines of
// tab-separated fields, each field validated here and never empty ("-":
// none) — and the .sh file loops over them. A script is
//
//	header, remote.SayFunc, sh/lib.sh, sh/<script>.sh
//
// and each .sh file documents its variables, its records and its steps at
// its top.
var (
	//go:embed sh/lib.sh
	libSh string
	//go:embed sh/read.sh
	readSh string
	//go:embed sh/apply.sh
	applySh string
	//go:embed sh/rollback.sh
	rollbackSh string
	//go:embed sh/manifest.sh
	manifestSh string
	//go:embed sh/release.sh
	releaseSh string
)

// KaudirDir is kaudit's directory on a host: the lock (KaudirDir/lock),
// the lease of the run changing the host (KaudirDir/lease) and the runs'
// backups (remediate.HostRunsDir).
const KaudirDir = "/var/lib/kaudit"

var (
	reOperator = regexp.MustCompile(`^[A-Za-z0-9@._-]{1,128}$`)
	reDigits   = regexp.MustCompile(`^[0-9]{1,20}$`)
)

// Lease is who a run is, as its scripts write it in the host's lease
// (sh/lib.sh, lock_host), and how long they wait and hold.
type Lease struct {
	Operator string // user@hostname of kaudit's machine ([A-Za-z0-9@._-])
	PID      int    // kaudit's pid there
	PStart   string // its start time there (/proc/PID/stat field 22), "0": unknown
	TTL      int    // seconds the lease lasts from the read step
	LockWait int    // seconds a script waits for the host lock
	Takeover string // a run whose live lease may be taken over ("": none)
}

// lock adds the variables of the host lock and the lease of run runID.
// A zero Operator, PStart, TTL or LockWait is "unknown", "0", 300 s and
// 10 s.
func (h *header) lock(runID string, l Lease) {
	l.Operator, l.PStart = cmp.Or(l.Operator, "unknown"), cmp.Or(l.PStart, "0")
	l.TTL, l.LockWait = cmp.Or(l.TTL, 300), cmp.Or(l.LockWait, 10)
	switch {
	case !remediate.ValidRunID(runID):
		h.fail(fmt.Errorf("lease: bad run id %q", runID))
	case !reOperator.MatchString(l.Operator):
		h.fail(fmt.Errorf("lease: bad operator %q", l.Operator))
	case !reDigits.MatchString(l.PStart) || l.PID < 0:
		h.fail(fmt.Errorf("lease: bad process %d %q", l.PID, l.PStart))
	case l.TTL < 1 || l.TTL > 86400 || l.LockWait < 0 || l.LockWait > 3600:
		h.fail(fmt.Errorf("lease: bad ttl %d or lock wait %d", l.TTL, l.LockWait))
	case l.Takeover != "" && !remediate.ValidRunID(l.Takeover):
		h.fail(fmt.Errorf("lease: bad run id %q to take over", l.Takeover))
	}
	h.set("KDIR", KaudirDir)
	h.set("RUNS", remediate.HostRunsDir)
	h.set("RUNID", runID)
	h.set("OPERATOR", l.Operator)
	h.set("KPID", strconv.Itoa(l.PID))
	h.set("KPSTART", l.PStart)
	h.set("TTL", strconv.Itoa(l.TTL))
	h.set("LOCKWAIT", strconv.Itoa(l.LockWait))
	h.set("TAKEOVER", cmp.Or(l.Takeover, "-"))
}

func (h *header) fail(err error) {
	if h.err == nil {
		h.err = err
	}
}

// ReleaseScript renders the last step of run runID on a host
// (sh/release.sh): its lease removed when it still is the run's. Steps:
// lease (released or not-held), done.
func ReleaseScript(marker, runID string, l Lease) ([]byte, error) {
	if !remote.ValidMarker(marker) {
		return nil, fmt.Errorf("release: bad marker %q", marker)
	}
	var h header
	h.set("M", marker)
	h.lock(runID, l)
	return h.script(releaseSh)
}

// header is a script's variables, in order: NAME='VALUE' lines.
type header struct {
	b   strings.Builder
	err error
}

// set adds NAME='VALUE' (value quoted; any byte may be in it).
func (h *header) set(name, value string) {
	h.b.WriteString(name + "=" + q(value) + "\n")
}

// flag adds NAME='1' or NAME='0'.
func (h *header) flag(name string, on bool) {
	v := "0"
	if on {
		v = "1"
	}
	h.set(name, v)
}

// records renders lines of tab-separated fields for a records variable
// (records in sh/lib.sh). A field must not be empty nor hold a tab, a
// newline or a carriage return: the last check before a shell, on top of
// each value's own validation.
type records struct {
	b   strings.Builder
	err error
}

func (r *records) add(fields ...string) {
	for i, f := range fields {
		if f == "" || strings.ContainsAny(f, "\t\n\r") {
			if r.err == nil {
				r.err = fmt.Errorf("script data: field %d %q is empty or holds a tab or a newline", i+1, f)
			}
			return
		}
	}
	r.b.WriteString(strings.Join(fields, "\t") + "\n")
}

// data adds the records r as variable name.
func (h *header) data(name string, r *records) {
	if r.err != nil && h.err == nil {
		h.err = r.err
	}
	h.set(name, r.b.String())
}

// script is the header, say and fail, sh/lib.sh and body.
func (h *header) script(body string) ([]byte, error) {
	if h.err != nil {
		return nil, h.err
	}
	var b strings.Builder
	b.Grow(h.b.Len() + len(remote.SayFunc) + len(libSh) + len(body))
	b.WriteString(h.b.String())
	b.WriteString(remote.SayFunc)
	b.WriteString(libSh)
	b.WriteString(body)
	return []byte(b.String()), nil
}

// valueFields are the HOW TARGET SETTING PROP fields of a running value
// (getv and setv in sh/lib.sh): sysctl /proc/sys/PATH - -; ring IFACE
// rx|tx RX:|TX:; offload IFACE FEATURE ETHTOOL-K-NAME; nm UUID SETTING
// NMCLI-PROPERTY. kind and key are validated (checkRuntime).
func valueFields(kind remediate.ChangeKind, key string) []string {
	if !isNIC(kind) {
		return []string{"sysctl", procPath(key), "-", "-"}
	}
	iface, setting, _ := nicTarget(kind, key)
	if conn, ok := remediate.NMConnectionOf(iface); ok {
		return []string{"nm", string(conn), setting, nicpersist.NMProperty(setting)}
	}
	if kind == remediate.KindNICRing {
		return []string{"ring", iface, setting, strings.ToUpper(setting) + ":"}
	}
	name, _ := facts.OffloadName(setting)
	return []string{"offload", iface, setting, name}
}

// ReadParams is what the read step reads: files (their existence,
// SHA-256 and content) and running sysctl values.
type ReadParams struct {
	Marker  string
	Files   []string
	Sysctls []string
	NICs    []NICRead
	// RunID and Lease: the read step of run RunID takes the host lock and
	// the run's lease first (refused while another run's is live), and
	// removes what runs that are gone left. Without a RunID it only reads.
	RunID string
	Lease Lease
}

// NICRead is one NIC setting to read: Kind remediate.KindNICRing or
// KindNICOffload, Target "eth0 rx" / "eth0 gro".
type NICRead struct {
	Kind   remediate.ChangeKind
	Target string
}

// ReadScript renders the read step (sh/read.sh): for each file "file <i>
// ok absent" or "file <i> ok present <sha256> <mode:owner:group>
// <base64>", for each sysctl "sysctl <i> ok <value>", for each NIC
// setting "nic <i> ok <value>" (after "ethtool ok <path>"), then "done
// ok". A file that exists but is not a regular file, or is a symbolic
// link, fails the step.
func ReadScript(p ReadParams) ([]byte, error) {
	if !remote.ValidMarker(p.Marker) {
		return nil, fmt.Errorf("apply: bad marker %q", p.Marker)
	}
	var files, values records
	for i, f := range p.Files {
		if err := checkPath(f); err != nil {
			return nil, err
		}
		files.add(strconv.Itoa(i), f)
	}
	for i, k := range p.Sysctls {
		if err := CheckSysctlKey(k); err != nil {
			return nil, err
		}
		values.add(append([]string{"sysctl-" + strconv.Itoa(i), k}, valueFields(remediate.KindSysctl, k)...)...)
	}
	for i, n := range p.NICs {
		if _, _, err := nicTarget(n.Kind, n.Target); err != nil {
			return nil, err
		}
		values.add(append([]string{"nic-" + strconv.Itoa(i), n.Target}, valueFields(n.Kind, n.Target)...)...)
	}
	var h header
	h.set("M", p.Marker)
	h.flag("LEASE", p.RunID != "")
	if p.RunID != "" {
		h.lock(p.RunID, p.Lease)
	}
	h.flag("ETHTOOL", len(p.NICs) > 0)
	h.data("FILES", &files)
	h.data("VALUES", &values)
	return h.script(readSh)
}

// FileWrite is one file the apply step replaces atomically.
type FileWrite struct {
	Path    string
	Existed bool   // false: the file is created (Mode applies)
	OldSHA  string // its SHA-256 when read (Existed)
	Content []byte // the new content
	Mode    string // octal mode of a created file, e.g. "0644"
}

// RuntimeWrite is one running sysctl the apply step sets.
type RuntimeWrite struct {
	Kind   remediate.ChangeKind // "" or remediate.KindSysctl: Key is a sysctl; KindNICRing, KindNICOffload: Key is "eth0 rx"
	Key    string
	Before string // folded value when read
	To     string // folded
}

// ApplyParams is everything the apply script does on one host.
type ApplyParams struct {
	Marker  string
	RunID   string
	Runtime []RuntimeWrite
	Files   []FileWrite
	// Units are the systemd services whose drop-in (remediate.DropInPath)
	// is among Files: their drop-in directory is created when missing,
	// and systemd reloads its units after the files are written.
	Units []string
	Lease Lease // the host lock; the lease must be the run's
}

// RunDir is the run's backup directory on a host.
func RunDir(runID string) string { return remediate.HostRunsDir + "/" + runID }

// BackupName is the name of file i's copy in RunDir.
func BackupName(i int) string { return "file-" + strconv.Itoa(i) }

// ManifestVersion is the version the apply script writes on the first
// line of a run's manifest (sh/apply.sh documents the format).
const ManifestVersion = 2

// ApplyScript renders the apply step (sh/apply.sh): create the run
// directory, check that every file and running value is still what the
// read step saw, back them all up (files with cp -p, checked by SHA-256;
// the manifest; running values to sysctl-<i>), then set the running
// values, then replace the files (temporary file in the same directory,
// content checked by SHA-256, mv). Every file it writes, renames or
// removes reaches the disk with its directory before the step's ok line.
// It stops at the first failing step ("fail"): nothing is changed before
// the backups are complete and on the disk, and what was changed is
// rolled back by the caller from the backups (RollbackScript).
//
// Steps: tools, rundir, check-file-<i>, check-sysctl-<i>, backup-file-<i>,
// backup-manifest, backup-sysctl-<i>, sysctl-<i> (detail: the value read
// back), file-<i> (detail: SHA-256 written), done.
func ApplyScript(p ApplyParams) ([]byte, error) {
	nics, err := p.check()
	if err != nil {
		return nil, err
	}
	var files, values records
	for i, f := range p.Files {
		state, old, mode := wordAbsent, "-", f.Mode
		if f.Existed {
			state, old, mode = wordPresent, f.OldSHA, "-"
		}
		files.add(strconv.Itoa(i), f.Path, string(state), old, mode, SHA256(f.Content), cmp.Or(base64.StdEncoding.EncodeToString(f.Content), "-"))
	}
	for i, r := range p.Runtime {
		values.add(append(append([]string{runtimeStep(r.Kind, i), string(r.Kind.OrSysctl()), r.Key}, valueFields(r.Kind, r.Key)...), r.Before, r.To)...)
	}
	var h header
	h.set("M", p.Marker)
	h.lock(p.RunID, p.Lease)
	h.set("RUN", RunDir(p.RunID))
	h.flag("ETHTOOL", nics)
	var units records
	for _, u := range p.Units {
		units.add(u)
	}
	h.data("FILES", &files)
	h.data("VALUES", &values)
	h.data("UNITS", &units)
	return h.script(applySh)
}

// check validates every parameter of the apply script and reports
// whether it sets NIC values (and so needs ethtool).
func (p *ApplyParams) check() (nics bool, err error) {
	if !remote.ValidMarker(p.Marker) {
		return false, fmt.Errorf("apply: bad marker %q", p.Marker)
	}
	if !remediate.ValidRunID(p.RunID) {
		return false, fmt.Errorf("apply: bad run id %q", p.RunID)
	}
	for _, r := range p.Runtime {
		if err := checkRuntime(r.Kind, r.Key, r.Before, r.To); err != nil {
			return false, err
		}
		nics = nics || isNIC(r.Kind)
	}
	for _, u := range p.Units {
		if !safe.ServiceName(u) {
			return false, fmt.Errorf("apply: bad unit name %q", u)
		}
	}
	seen := map[string]bool{}
	for _, f := range p.Files {
		if err := checkPath(f.Path); err != nil {
			return false, err
		}
		if seen[f.Path] {
			return false, fmt.Errorf("apply: %s written twice", f.Path)
		}
		seen[f.Path] = true
		if f.Existed && !reSHA.MatchString(f.OldSHA) {
			return false, fmt.Errorf("apply: %s: bad sha256 %q", f.Path, f.OldSHA)
		}
		if !f.Existed && !reMode.MatchString(f.Mode) {
			return false, fmt.Errorf("apply: %s: bad mode %q", f.Path, f.Mode)
		}
	}
	return nics, nil
}

// RollbackParams is what a rollback restores on one host: the journal's
// backups and running values of one run.
type RollbackParams struct {
	Marker  string
	RunID   string
	Backups []remediate.Backup
	Runtime []remediate.RuntimeValue
	// Wait is how many seconds the script waits for the host lock, which
	// the run's apply script holds while it still runs on the host (its
	// connection was cut, or kaudit gave up on it, but sshd does not kill
	// a session's command): restoring beside it would let it change the
	// host again after the restore. When it still holds it after Wait
	// seconds the script restores nothing and fails (step apply-running).
	Wait int
	// Force restores a file or running value even when it changed since
	// the run (it no longer has Backup.Written / RuntimeValue.After);
	// without it such an item is left alone and reported "kept".
	Force bool
	// Lease: the host lock (its LockWait is Wait); the restore is refused
	// while another run's lease is live. Release: the run's lease is
	// removed at the end (kaudit rollback; the run's own restore leaves it
	// to its release step).
	Lease   Lease
	Release bool
}

// RollbackScript renders the restore of one host from a run's backups
// (sh/rollback.sh). It is idempotent: a file whose SHA-256 already is the
// recorded one, a file that did not exist and does not, a running value
// already at its recorded value, is left alone ("unchanged"). Otherwise a
// file is restored from its copy in RunDir (the copy's SHA-256 checked
// first — a missing or empty copy is refused as such —, then the restored
// file's), a file that did not exist is removed, a running value is
// written back — unless, without Force, it changed since the run: a file
// that no longer has the hash the run wrote (Backup.Written), a running
// value no longer at the value the run set (RuntimeValue.After) is left
// alone ("kept", with its current hash or value). What it restores or
// removes reaches the disk, with its directory, before the step's ok line.
// Unlike the apply script it goes on after a failing step, so that as
// much as possible is restored.
//
// Steps: lease, apply-running (fails only: the run's apply script still
// runs), manifest, restore-file-<i>, restore-sysctl-<i>, restore-nic-<i>
// (unchanged, restored, removed or "kept CURRENT"), done (ok or failed):
// the words of rollbackWords.
func RollbackScript(p RollbackParams) ([]byte, error) {
	if !remote.ValidMarker(p.Marker) {
		return nil, fmt.Errorf("rollback: bad marker %q", p.Marker)
	}
	if !remediate.ValidRunID(p.RunID) {
		return nil, fmt.Errorf("rollback: bad run id %q", p.RunID)
	}
	if p.Wait < 0 || p.Wait > 3600 {
		return nil, fmt.Errorf("rollback: bad wait %d", p.Wait)
	}
	var files, values records
	for i, bk := range p.Backups {
		f, err := p.restoreFile(i, bk)
		if err != nil {
			return nil, err
		}
		files.add(f...)
	}
	nics := false
	for i, r := range p.Runtime {
		if err := checkRuntime(r.Kind, r.Key, r.Before, r.After); err != nil {
			return nil, err
		}
		nics = nics || isNIC(r.Kind)
		values.add(append(append([]string{"restore-" + runtimeStep(r.Kind, i), r.Key}, valueFields(r.Kind, r.Key)...), r.Before, r.After)...)
	}
	var h header
	h.set("M", p.Marker)
	l := p.Lease
	l.LockWait, l.Takeover = max(p.Wait, 1), ""
	h.lock(p.RunID, l)
	h.set("RUN", RunDir(p.RunID))
	h.flag("FORCE", p.Force)
	h.flag("RELEASE", p.Release)
	h.flag("ETHTOOL", nics)
	h.data("FILES", &files)
	h.data("VALUES", &values)
	return h.script(rollbackSh)
}

// restoreFile is backup i's record: STEP PATH STATE WANT STORED WRITTEN
// (sh/rollback.sh).
func (p RollbackParams) restoreFile(i int, bk remediate.Backup) ([]string, error) {
	if err := checkPath(bk.Path); err != nil {
		return nil, err
	}
	step := "restore-file-" + strconv.Itoa(i)
	written := "-"
	if bk.Written != "" {
		if !reSHA.MatchString(bk.Written) {
			return nil, fmt.Errorf("rollback: %s: bad written sha256 %q", bk.Path, bk.Written)
		}
		written = bk.Written
	}
	if !bk.Existed {
		return []string{step, bk.Path, string(wordAbsent), "-", "-", written}, nil
	}
	if !reSHA.MatchString(bk.SHA256) {
		return nil, fmt.Errorf("rollback: %s: bad sha256 %q", bk.Path, bk.SHA256)
	}
	stored := cmp.Or(bk.Stored, RunDir(p.RunID)+"/"+BackupName(i))
	if err := checkPath(stored); err != nil || !strings.HasPrefix(stored, RunDir(p.RunID)+"/") {
		return nil, fmt.Errorf("rollback: %s: backup %q is not in %s", bk.Path, stored, RunDir(p.RunID))
	}
	return []string{step, bk.Path, string(wordPresent), bk.SHA256, stored, written}, nil
}

// checkRuntime validates one running value of any kind.
func checkRuntime(kind remediate.ChangeKind, key, before, to string) error {
	if isNIC(kind) {
		if _, _, err := nicTarget(kind, key); err != nil {
			return err
		}
		if err := checkNICValue(kind, key, before); err != nil {
			return fmt.Errorf("current value: %w", err)
		}
		return checkNICValue(kind, key, to)
	}
	if kind != "" && kind != remediate.KindSysctl {
		return fmt.Errorf("%s %s: unknown kind", kind, key)
	}
	if err := CheckSysctlKey(key); err != nil {
		return err
	}
	if err := CheckSysctlValue(key, before); err != nil {
		return fmt.Errorf("current value: %w", err)
	}
	return CheckSysctlValue(key, to)
}

// fileStep names the apply script's step that writes file i: file-<i>.
func fileStep(i int) string { return "file-" + strconv.Itoa(i) }

// StepKind is what one step of the apply script does.
type StepKind int

// Step kinds: only a StepChange step changes the host.
const (
	StepPrepare StepKind = iota // tools, run directory, checks, backups, manifest
	StepChange                  // sets a running value or replaces a file
)

// ChangeSteps are the names of the apply script's steps that change the
// host (a running value, a file), from the same names the script uses:
// a step not in it is a check or a backup before any change.
func (p ApplyParams) ChangeSteps() map[string]StepKind {
	steps := map[string]StepKind{}
	for i, r := range p.Runtime {
		steps[runtimeStep(r.Kind, i)] = StepChange
	}
	for i := range p.Files {
		steps[fileStep(i)] = StepChange
	}
	return steps
}

// Changed says, from the apply script's results, what it did to each
// file and running value of p (in their order): ChangedYes for an item
// whose step said ok; after a failing step (the script stops there),
// ChangedNo for an item whose step comes after it in the script — every
// item when the step is before the first change —, ChangedMaybe for the
// failing step's own item and for files (their ok lines come after all
// of them are renamed); without a failing step and without done (cut
// off), ChangedMaybe for every item not said ok. The script's order:
// the checks and backups, the running values in order, then the files.
func (p ApplyParams) Changed(rs remote.Results) (files, values []remediate.Changed) {
	files = make([]remediate.Changed, len(p.Files))
	values = make([]remediate.Changed, len(p.Runtime))
	ok := func(step string) bool { r := rs.Find(step); return r != nil && r.OK }
	f := rs.FirstFailure()
	failedValue := -1 // the running value whose step failed; len: a file step
	switch {
	case f == nil:
		failedValue = -2 // cut off, or done
	case p.ChangeSteps()[f.Step] != StepChange:
		failedValue = -1 // before the first change
	default:
		failedValue = len(p.Runtime)
		for i, r := range p.Runtime {
			if runtimeStep(r.Kind, i) == f.Step {
				failedValue = i
			}
		}
	}
	for i, r := range p.Runtime {
		switch {
		case ok(runtimeStep(r.Kind, i)):
			values[i] = remediate.ChangedYes
		case failedValue == -2 || i == failedValue:
			values[i] = remediate.ChangedMaybe
		default:
			values[i] = remediate.ChangedNo
		}
	}
	for i := range p.Files {
		switch {
		case ok(fileStep(i)):
			files[i] = remediate.ChangedYes
		case failedValue == -2 || failedValue == len(p.Runtime):
			files[i] = remediate.ChangedMaybe
		default:
			files[i] = remediate.ChangedNo
		}
	}
	return files, values
}

// runtimeStep names running value i: sysctl-<i> or nic-<i>.
func runtimeStep(kind remediate.ChangeKind, i int) string {
	if isNIC(kind) {
		return "nic-" + strconv.Itoa(i)
	}
	return "sysctl-" + strconv.Itoa(i)
}

//go:embed sh/runs.sh
var runsSh string

// RunsScript renders the listing of the runs a host holds (sh/runs.sh):
// its lease, and each run directory with the state of its manifest.
func RunsScript(marker string) ([]byte, error) {
	if !remote.ValidMarker(marker) {
		return nil, fmt.Errorf("runs: bad marker %q", marker)
	}
	var h header
	h.set("M", marker)
	h.set("KDIR", KaudirDir)
	h.set("RUNS", remediate.HostRunsDir)
	return h.script(runsSh)
}
