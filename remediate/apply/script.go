package apply

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/internal/safe"
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

const prelude = `set -u
set -f
umask 077
LC_ALL=C
export LC_ALL
` + remote.SayFunc + `sha() { s=$(sha256sum < "$1") || return 1; printf '%s\n' "${s%% *}"; }
`

// ApplyOwner is the file in RunDir that names the apply script's shell
// while it runs: "<pid> <start time>" (field 22 of /proc/<pid>/stat, so a
// reused PID is not mistaken for it). The script removes it when it
// finishes; a script that dies on the way (its connection is gone and it
// is killed by SIGPIPE at its next result line) leaves it behind, and the
// start time tells that it is gone.
const ApplyOwner = "apply.owner"

// pstart prints the start time of process $1, or fails when there is no
// such process.
const pstart = `pstart() { s=$(cat /proc/"$1"/stat 2>/dev/null) || return 1; s=${s##*) }; set -- $s; [ $# -ge 20 ] || return 1; printf '%s\n' "${20}"; }
`

// ReadParams is what the read step reads: files (their existence,
// SHA-256 and content) and running sysctl values.
type ReadParams struct {
	Marker  string
	Files   []string
	Sysctls []string
	NICs    []NICRead
}

// NICRead is one NIC setting to read: Kind remediate.KindNICRing or
// KindNICOffload, Target "eth0 rx" / "eth0 gro".
type NICRead struct {
	Kind, Target string
}

// ReadScript renders the read step: for each file "file <i> ok
// absent" or "file <i> ok present <sha256> <mode:owner:group> <base64>",
// for each sysctl "sysctl <i> ok <value>", then "done ok". A file that
// exists but is not a regular file, or is a symbolic link, fails the step.
func ReadScript(p ReadParams) ([]byte, error) {
	if !remote.ValidMarker(p.Marker) {
		return nil, fmt.Errorf("apply: bad marker %q", p.Marker)
	}
	var b strings.Builder
	b.WriteString("M=" + q(p.Marker) + "\n")
	b.WriteString(prelude)
	b.WriteString(`for c in sha256sum base64 tr cat; do command -v "$c" >/dev/null 2>&1 || fail tools "$c not found on the host"; done` + "\n")
	for i, f := range p.Files {
		if err := checkPath(f); err != nil {
			return nil, err
		}
		step := "file-" + strconv.Itoa(i)
		fmt.Fprintf(&b, "f=%s\n", q(f))
		fmt.Fprintf(&b, `if [ -L "$f" ]; then fail %s "$f is a symbolic link: kaudit edits only regular files"
elif [ -f "$f" ]; then
  s=$(sha "$f") || fail %s "cannot read $f"
  a=$(stat -c '%%a:%%U:%%G' "$f" 2>/dev/null) || a=-
  c=$(base64 < "$f" | tr -d '\n') || fail %s "cannot read $f"
  printf '%%s\t%%s\tok\tpresent\t%%s\t%%s\t%%s\n' "$M" %s "$s" "$a" "$c"
elif [ -e "$f" ]; then fail %s "$f is not a regular file"
elif [ -d %s ]; then say %s ok absent
else fail %s "directory %s does not exist"
fi
`, step, step, step, step, step, q(path.Dir(f)), step, step, path.Dir(f))
	}
	for i, k := range p.Sysctls {
		if err := CheckSysctlKey(k); err != nil {
			return nil, err
		}
		step := "sysctl-" + strconv.Itoa(i)
		fmt.Fprintf(&b, "v=$(cat %s) || fail %s %s\n", q(procPath(k)), step, q("cannot read "+k))
		fmt.Fprintf(&b, "say %s ok \"$(printf '%%s' \"$v\" | tr '\\t\\n' '  ')\"\n", step)
	}
	if len(p.NICs) > 0 {
		b.WriteString(`E=$(command -v ethtool) || fail tools "ethtool not found on the host"` + "\n")
		b.WriteString(`say ethtool ok "$E"` + "\n")
	}
	for i, n := range p.NICs {
		iface, setting, err := nicTarget(n.Kind, n.Target)
		if err != nil {
			return nil, err
		}
		step := "nic-" + strconv.Itoa(i)
		fmt.Fprintf(&b, "v=$(%s)\n", nicGet(n.Kind, iface, setting))
		fmt.Fprintf(&b, "[ -n \"$v\" ] || fail %s %s\n", step, q("cannot read "+n.Target+" with ethtool"))
		fmt.Fprintf(&b, "say %s ok \"$v\"\n", step)
	}
	b.WriteString("say done ok -\n")
	return []byte(b.String()), nil
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
	Kind   string // "" or remediate.KindSysctl: Key is a sysctl; KindNICRing, KindNICOffload: Key is "eth0 rx"
	Key    string
	Before string // folded value when read
	To     string // folded
}

// ApplyParams is everything the apply script does on one host.
type ApplyParams struct {
	Marker  string
	RunID   string
	Delim   string // here-doc delimiter; NewMarker() when empty
	Runtime []RuntimeWrite
	Files   []FileWrite
}

// RunDir is the run's backup directory on a host.
func RunDir(runID string) string { return remediate.HostRunsDir + "/" + runID }

// BackupName is the name of file i's copy in RunDir.
func BackupName(i int) string { return "file-" + strconv.Itoa(i) }

// ApplyScript renders the apply step: create the run directory, check
// that every file and running value is still what the read step saw,
// back them all up (files with cp -p, checked by SHA-256; running values
// to sysctl-<i>), then set the running values, then replace the files
// (temporary file in the same directory, content checked by SHA-256,
// mv). It stops at the first failing step ("fail"): nothing is changed
// before the backups are complete, and what was changed is rolled back by
// the caller from the backups (RollbackScript).
//
// Steps: tools, rundir, check-file-<i>, check-sysctl-<i>, backup-file-<i>,
// backup-sysctl-<i>, sysctl-<i> (detail: the value read back), file-<i>
// (detail: SHA-256 written), done.
func ApplyScript(p ApplyParams) ([]byte, error) {
	nics, err := p.check()
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	p.writeHead(&b, nics)
	p.writeChecks(&b)
	p.writeBackups(&b)
	p.writeManifest(&b)
	p.writeRuntimeBackups(&b)
	p.writeRunning(&b)
	p.writeFiles(&b)
	fmt.Fprintf(&b, "rm -f \"$RUN\"/%s\n", ApplyOwner)
	b.WriteString("say done ok -\n")
	return []byte(b.String()), nil
}

// check validates every parameter of the apply script and reports
// whether it sets NIC values (and so needs ethtool).
func (p *ApplyParams) check() (nics bool, err error) {
	if !remote.ValidMarker(p.Marker) {
		return false, fmt.Errorf("apply: bad marker %q", p.Marker)
	}
	if p.Delim == "" {
		p.Delim = NewMarker()
	}
	if !remote.ValidMarker(p.Delim) {
		return false, fmt.Errorf("apply: bad here-doc delimiter %q", p.Delim)
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

// writeHead writes the variables, the prelude, the tools check and the
// run directory (with ApplyOwner).
func (p ApplyParams) writeHead(b *strings.Builder, nics bool) {
	b.WriteString("M=" + q(p.Marker) + "\n")
	b.WriteString("RUN=" + q(RunDir(p.RunID)) + "\n")
	b.WriteString(prelude)
	b.WriteString(`for c in sha256sum base64 cp mv rm mkdir chmod cat tr; do command -v "$c" >/dev/null 2>&1 || fail tools "$c not found on the host"; done` + "\n")
	if nics {
		b.WriteString(`E=$(command -v ethtool) || fail tools "ethtool not found on the host"` + "\n")
	}
	fmt.Fprintf(b, "mkdir -p %s || fail rundir \"cannot create %s\"\n", q(remediate.HostRunsDir), remediate.HostRunsDir)
	b.WriteString(`mkdir "$RUN" || fail rundir "cannot create $RUN (a run with this id exists already?)"` + "\n")
	// Name this shell, so that a restore does not run while it still can
	// change the host (see RollbackScript).
	b.WriteString(pstart)
	fmt.Fprintf(b, `st=$(pstart $$) && { printf '%%s %%s\n' "$$" "$st" > "$RUN"/%s || fail rundir "cannot write $RUN/%s"; }`+"\n", ApplyOwner, ApplyOwner)
	b.WriteString(`say rundir ok "$RUN"` + "\n")
}

// writeChecks writes step 1: every file and running value is still what
// the read step saw.
func (p ApplyParams) writeChecks(b *strings.Builder) {
	b.WriteString("# 1. nothing changed since the read step\n")
	for i, f := range p.Files {
		step := q("check-file-" + strconv.Itoa(i))
		fmt.Fprintf(b, "f=%s\n", q(f.Path))
		if f.Existed {
			fmt.Fprintf(b, `{ [ -f "$f" ] && [ ! -L "$f" ] && [ "$(sha "$f")" = %s ]; } || fail %s "$f changed since it was read: nothing changed, re-run"`+"\n", q(f.OldSHA), step)
		} else {
			fmt.Fprintf(b, `{ [ ! -e "$f" ] && [ ! -L "$f" ]; } || fail %s "$f appeared since it was read: nothing changed, re-run"`+"\n", step)
		}
		fmt.Fprintf(b, "say %s ok -\n", step)
	}
	for i, r := range p.Runtime {
		step := q("check-" + runtimeStep(r.Kind, i))
		b.WriteString(readRuntime(r.Kind, r.Key, step))
		fmt.Fprintf(b, "[ \"$v\" = %s ] || fail %s %s\n", q(r.Before), step, q(r.Key+" changed since it was read: nothing changed, re-run"))
		fmt.Fprintf(b, "say %s ok -\n", step)
	}
}

// writeBackups writes step 2: a checked copy of every file that exists.
func (p ApplyParams) writeBackups(b *strings.Builder) {
	b.WriteString("# 2. backups\n")
	for i, f := range p.Files {
		step := q("backup-file-" + strconv.Itoa(i))
		if !f.Existed {
			fmt.Fprintf(b, "say %s ok absent\n", step)
			continue
		}
		fmt.Fprintf(b, "f=%s; bk=\"$RUN\"/%s\n", q(f.Path), BackupName(i))
		fmt.Fprintf(b, `cp -p "$f" "$bk" || fail %s "cannot copy $f to $bk"`+"\n", step)
		fmt.Fprintf(b, `[ "$(sha "$bk")" = %s ] || fail %s "backup $bk does not match $f"`+"\n", q(f.OldSHA), step)
		fmt.Fprintf(b, "say %s ok \"$bk\"\n", step)
	}
}

// writeManifest writes the manifest beside the copies.
func (p ApplyParams) writeManifest(b *strings.Builder) {
	// A manifest beside the copies, so the host alone says what a run
	// changed (kaudit's own journal is the primary record).
	b.WriteString("{\n")
	for i, f := range p.Files {
		if f.Existed {
			fmt.Fprintf(b, "printf '%%s\\n' %s\n", q("file\t"+BackupName(i)+"\tpresent\t"+f.OldSHA+"\t"+f.Path))
		} else {
			fmt.Fprintf(b, "printf '%%s\\n' %s\n", q("file\t-\tabsent\t-\t"+f.Path))
		}
	}
	for i, r := range p.Runtime {
		fmt.Fprintf(b, "printf '%%s\\n' %s\n", q(runtimeKind(r.Kind)+"\t"+runtimeStep(r.Kind, i)+"\t"+r.Key+"\t"+r.Before+"\t"+r.To))
	}
	b.WriteString("} > \"$RUN\"/manifest || fail backup-manifest \"cannot write $RUN/manifest\"\n")
}

// writeRuntimeBackups writes each running value's backup.
func (p ApplyParams) writeRuntimeBackups(b *strings.Builder) {
	for i, r := range p.Runtime {
		name := runtimeStep(r.Kind, i)
		step := q("backup-" + name)
		fmt.Fprintf(b, "printf '%%s\\n' %s > \"$RUN\"/%s || fail %s \"cannot write $RUN/%s\"\n", q(r.Key+" = "+r.Before), name, step, name)
		fmt.Fprintf(b, "say %s ok -\n", step)
	}
}

// writeRunning writes step 3: set each running value and read it back.
func (p ApplyParams) writeRunning(b *strings.Builder) {
	b.WriteString("# 3. running values\n")
	for i, r := range p.Runtime {
		step := q(runtimeStep(r.Kind, i))
		fmt.Fprintf(b, "%s || fail %s %s\n", writeRuntime(r.Kind, r.Key, r.To), step, q("cannot set "+r.Key))
		b.WriteString(readRuntime(r.Kind, r.Key, step))
		fmt.Fprintf(b, "[ \"$v\" = %s ] || fail %s \"%s reads back $v\"\n", q(r.To), step, r.Key)
		fmt.Fprintf(b, "say %s ok \"$v\"\n", step)
	}
}

// writeFiles writes step 4: each file through a checked temporary file.
func (p ApplyParams) writeFiles(b *strings.Builder) {
	b.WriteString("# 4. files: temporary file in the same directory, checked, renamed\n")
	for i, f := range p.Files {
		step := q(fileStep(i))
		dir, base := path.Split(f.Path)
		tmp := dir + "." + base + ".kaudit-" + p.RunID
		sum := SHA256(f.Content)
		fmt.Fprintf(b, "f=%s; t=%s\n", q(f.Path), q(tmp))
		fmt.Fprintf(b, `rm -f "$t" || fail %s "cannot remove $t"`+"\n", step)
		if f.Existed {
			// cp -p first: the new file keeps the old one's mode and owner.
			fmt.Fprintf(b, `cp -p "$f" "$t" || { rm -f "$t"; fail %s "cannot create $t"; }`+"\n", step)
		} else {
			fmt.Fprintf(b, `( set -C; : > "$t" ) || { rm -f "$t"; fail %s "cannot create $t"; }`+"\n", step)
			fmt.Fprintf(b, `chmod %s "$t" || { rm -f "$t"; fail %s "cannot chmod $t"; }`+"\n", f.Mode, step)
		}
		fmt.Fprintf(b, "base64 -d > \"$t\" <<'%s' || { rm -f \"$t\"; fail %s \"cannot write $t\"; }\n", p.Delim, step)
		b.WriteString(wrap(base64.StdEncoding.EncodeToString(f.Content), 76))
		b.WriteString(p.Delim + "\n")
		fmt.Fprintf(b, `[ "$(sha "$t")" = %s ] || { rm -f "$t"; fail %s "$t does not hold what was sent"; }`+"\n", q(sum), step)
		fmt.Fprintf(b, `mv -f "$t" "$f" || { rm -f "$t"; fail %s "cannot rename $t to $f"; }`+"\n", step)
		fmt.Fprintf(b, "say %s ok %s\n", step, sum)
	}
}

func wrap(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + "\n")
		s = s[n:]
	}
	if s != "" {
		b.WriteString(s + "\n")
	}
	return b.String()
}

// RollbackParams is what a rollback restores on one host: the journal's
// backups and running values of one run.
type RollbackParams struct {
	Marker  string
	RunID   string
	Backups []remediate.Backup
	Runtime []remediate.RuntimeValue
	// Wait is how many seconds the script waits for the run's apply
	// script to end when it is still running on the host (its connection
	// was cut, or kaudit gave up on it, but sshd does not kill a session's
	// command): restoring beside it would let it change the host again
	// after the restore. When it is still running after Wait seconds the
	// script restores nothing and fails (step apply-running).
	Wait int
}

// RollbackScript renders the restore of one host from a run's backups.
// It is idempotent: a file whose SHA-256 already is the recorded one, a
// file that did not exist and does not, a running value already at its
// recorded value, is left alone ("unchanged"). Otherwise a file is
// restored from its copy in RunDir (the copy's SHA-256 checked first,
// then the restored file's), a file that did not exist is removed, a
// running value is written back. Unlike the apply script it goes on after
// a failing step, so that as much as possible is restored.
//
// Steps: apply-running (only when the run's apply script did not finish:
// detail the seconds waited for it to end), restore-file-<i>,
// restore-sysctl-<i> (detail "unchanged",
// "restored" or "removed"), done (detail: "ok" or "failed").
func RollbackScript(p RollbackParams) ([]byte, error) {
	if !remote.ValidMarker(p.Marker) {
		return nil, fmt.Errorf("rollback: bad marker %q", p.Marker)
	}
	if !remediate.ValidRunID(p.RunID) {
		return nil, fmt.Errorf("rollback: bad run id %q", p.RunID)
	}
	var b strings.Builder
	b.WriteString("M=" + q(p.Marker) + "\n")
	b.WriteString("RUN=" + q(RunDir(p.RunID)) + "\n")
	b.WriteString(prelude)
	b.WriteString("rc=ok\n")
	b.WriteString(`soft() { say "$1" fail "$2"; rc=failed; }` + "\n")
	b.WriteString(`for c in sha256sum cp mv rm cat tr; do command -v "$c" >/dev/null 2>&1 || fail tools "$c not found on the host"; done` + "\n")
	if p.Wait < 0 || p.Wait > 3600 {
		return nil, fmt.Errorf("rollback: bad wait %d", p.Wait)
	}
	// 0. the run's apply script must be gone (ApplyOwner).
	b.WriteString(pstart)
	fmt.Fprintf(&b, `if [ -f "$RUN"/%s ] && read -r ap ast < "$RUN"/%s; then
  case "$ap:$ast" in
  *[!0-9:]*|:*|*:) fail apply-running "$RUN/%s is not \"pid starttime\": nothing restored" ;;
  esac
  n=0
  while [ "$(pstart "$ap")" = "$ast" ]; do
    [ "$n" -lt %d ] || fail apply-running "the apply script of this run (pid $ap) is still running on the host: nothing restored"
    sleep 1
    n=$((n+1))
  done
  say apply-running ok "$n"
fi
`, ApplyOwner, ApplyOwner, ApplyOwner, p.Wait)
	for i, bk := range p.Backups {
		if err := p.writeRestoreFile(&b, i, bk); err != nil {
			return nil, err
		}
	}
	if err := p.writeRestoreRuntime(&b); err != nil {
		return nil, err
	}
	b.WriteString(`say done ok "$rc"` + "\n")
	return []byte(b.String()), nil
}

// writeRestoreFile writes the restore of backup i: "unchanged" when the
// file already is as recorded, else removed (it did not exist) or
// restored from its checked copy in RunDir.
func (p RollbackParams) writeRestoreFile(b *strings.Builder, i int, bk remediate.Backup) error {
	if err := checkPath(bk.Path); err != nil {
		return err
	}
	step := q("restore-file-" + strconv.Itoa(i))
	fmt.Fprintf(b, "f=%s\n", q(bk.Path))
	if !bk.Existed {
		fmt.Fprintf(b, `if [ -e "$f" ] || [ -L "$f" ]; then rm -f "$f" && say %s ok removed || soft %s "cannot remove $f"; else say %s ok unchanged; fi`+"\n", step, step, step)
		return nil
	}
	if !reSHA.MatchString(bk.SHA256) {
		return fmt.Errorf("rollback: %s: bad sha256 %q", bk.Path, bk.SHA256)
	}
	stored := bk.Stored
	if stored == "" {
		stored = RunDir(p.RunID) + "/" + BackupName(i)
	}
	if err := checkPath(stored); err != nil || !strings.HasPrefix(stored, RunDir(p.RunID)+"/") {
		return fmt.Errorf("rollback: %s: backup %q is not in %s", bk.Path, stored, RunDir(p.RunID))
	}
	dir, base := path.Split(bk.Path)
	tmp := dir + "." + base + ".kaudit-restore-" + p.RunID
	fmt.Fprintf(b, "bk=%s; t=%s; want=%s\n", q(stored), q(tmp), q(bk.SHA256))
	fmt.Fprintf(b, `if [ -f "$f" ] && [ ! -L "$f" ] && [ "$(sha "$f")" = "$want" ]; then say %s ok unchanged
elif [ ! -f "$bk" ]; then soft %s "backup $bk is missing: $f not restored"
elif [ "$(sha "$bk")" != "$want" ]; then soft %s "backup $bk does not match the recorded sha256: $f not restored"
elif ! { rm -f "$t" && cp -p "$bk" "$t"; }; then rm -f "$t"; soft %s "cannot create $t"
elif [ "$(sha "$t")" != "$want" ]; then rm -f "$t"; soft %s "$t does not match the backup"
elif ! mv -f "$t" "$f"; then rm -f "$t"; soft %s "cannot rename $t to $f"
elif [ "$(sha "$f")" != "$want" ]; then soft %s "$f does not match the backup after restoring"
else say %s ok restored
fi
`, step, step, step, step, step, step, step, step)
	return nil
}

// writeRestoreRuntime writes the restore of each running value.
func (p RollbackParams) writeRestoreRuntime(b *strings.Builder) error {
	for _, r := range p.Runtime {
		if err := checkRuntime(r.Kind, r.Key, r.Before, r.Before); err != nil {
			return err
		}
		if isNIC(r.Kind) {
			b.WriteString(`E=$(command -v ethtool) || fail tools "ethtool not found on the host"` + "\n")
			break
		}
	}
	for i, r := range p.Runtime {
		step := q("restore-" + runtimeStep(r.Kind, i))
		fmt.Fprintf(b, "want=%s\n", q(r.Before))
		b.WriteString(readRuntimeQuiet(r.Kind, r.Key))
		fmt.Fprintf(b, "if [ \"$v\" = \"$want\" ]; then say %s ok unchanged\n", step)
		fmt.Fprintf(b, "elif ! %s; then soft %s %s\n", writeRuntime(r.Kind, r.Key, r.Before), step, q("cannot set "+r.Key))
		b.WriteString("else ")
		b.WriteString(readRuntimeQuiet(r.Kind, r.Key))
		fmt.Fprintf(b, "  if [ \"$v\" = \"$want\" ]; then say %s ok restored; else soft %s \"%s reads back $v after restoring\"; fi\nfi\n", step, step, r.Key)
	}
	return nil
}

// checkRuntime validates one running value of any kind.
func checkRuntime(kind, key, before, to string) error {
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

func runtimeKind(kind string) string {
	if kind == "" {
		return remediate.KindSysctl
	}
	return kind
}

// fileStep names the apply script's step that writes file i: file-<i>.
func fileStep(i int) string { return "file-" + strconv.Itoa(i) }

// reChangeStep matches the apply script's steps that change the host:
// runtimeStep's and fileStep's names, exactly.
var reChangeStep = regexp.MustCompile(`^(sysctl|nic|file)-[0-9]+$`)

// changesHost reports whether apply-script step changes the host (a
// running value or a file), as opposed to the checks and backups before.
func changesHost(step string) bool { return reChangeStep.MatchString(step) }

// runtimeStep names running value i: sysctl-<i> or nic-<i>.
func runtimeStep(kind string, i int) string {
	if isNIC(kind) {
		return "nic-" + strconv.Itoa(i)
	}
	return "sysctl-" + strconv.Itoa(i)
}

// readRuntime sets v to the current value (folded), failing step when it
// cannot be read. The key is validated.
func readRuntime(kind, key, step string) string {
	if isNIC(kind) {
		iface, setting, _ := nicTarget(kind, key)
		return fmt.Sprintf("v=$(%s)\n[ -n \"$v\" ] || fail %s %s\n", nicGet(kind, iface, setting), step, q("cannot read "+key+" with ethtool"))
	}
	return fmt.Sprintf("v=$(cat %s) || fail %s %s\nv=$(printf '%%s' \"$v\" | tr '\\t\\n' '  '); v=$(echo $v)\n", q(procPath(key)), step, q("cannot read "+key))
}

// readRuntimeQuiet sets v to the current value, empty when unreadable.
func readRuntimeQuiet(kind, key string) string {
	if isNIC(kind) {
		iface, setting, _ := nicTarget(kind, key)
		return fmt.Sprintf("v=$(%s)\n", nicGet(kind, iface, setting))
	}
	return fmt.Sprintf("v=$(cat %s 2>/dev/null | tr '\\t\\n' '  '); v=$(echo $v)\n", q(procPath(key)))
}

// writeRuntime is the command that sets a running value.
func writeRuntime(kind, key, v string) string {
	if isNIC(kind) {
		iface, setting, _ := nicTarget(kind, key)
		return nicSet(kind, iface, setting, v) + " >/dev/null"
	}
	return fmt.Sprintf("printf '%%s\\n' %s > %s", q(v), q(procPath(key)))
}
