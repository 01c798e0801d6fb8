package probe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/atomicfile"
	"github.com/kaudit/kaudit/internal/located"
)

// Records keeps the probe's verdicts on kaudit's side (never on the host),
// one file per host key in Dir, so that a later scan, fix, serve or
// what-if of the same boot of the same host decides the kernel's verdict
// as the probe proved it (issue: a fix that planned on the version table a
// minute after a probe proved the bug on that very boot).
//
// A record is used only for the host key it was made under, the kernel
// release and the boot id (/proc/sys/kernel/random/boot_id) it ran on: a
// reboot or another kernel makes it stale (Facts.EarlierProbe). A record
// is the verdict of a host that might have been anyone's: Dir and its
// files must belong to the user kaudit runs as and be writable by no one
// else, or Records refuses them (a planted "fixed" would be a wrong "you
// are safe").
type Records struct {
	Dir string
	Now func() time.Time // nil: time.Now
}

// maxRecord bounds what is read back from one record file.
const maxRecord = 1 << 20

// Settle is called once per gathered host, after its probe (if any):
// a probe of this run that ran is recorded; otherwise the record of this
// host key is read back into f.Probe (same boot and kernel, Recorded set)
// or f.EarlierProbe (another boot or kernel). A nil Records does nothing.
// Its error is for a warning: the host's facts stay as gathered.
func (r *Records) Settle(f *facts.Facts) error {
	if r == nil || f == nil || f.HostKey == "" {
		return nil
	}
	if f.Probe != nil && Ran(f.Probe) {
		return r.remember(f.Probe)
	}
	rec, err := r.read(f.HostKey)
	if rec == nil || err != nil {
		return err
	}
	if rec.Release == f.Kernel.Release && rec.BootID != "" && rec.BootID == f.Kernel.BootID {
		rec.Recorded = true
		rec.AgeS = max(int64(r.now().Sub(rec.At)/time.Second), 0)
		f.Probe = rec
		return nil
	}
	f.EarlierProbe = rec
	return nil
}

// Ran reports whether a probe measured anything worth keeping: every state
// but those in which it never started.
func Ran(p *facts.Probe) bool {
	switch p.State {
	case facts.ProbeNeedsRoot, facts.ProbeNotPerNetns, facts.ProbeNoPython, facts.ProbeUnsupported, "":
		return false
	}
	return p.HostKey != "" && p.BootID != "" && p.Release != ""
}

// Stamp marks a probe of this run with what it is kept under: the boot
// and host key of the gather it followed, and the time.
func (r *Records) Stamp(p *facts.Probe, f *facts.Facts) {
	if p == nil || f == nil {
		return
	}
	p.BootID, p.HostKey = f.Kernel.BootID, f.HostKey
	if p.Release == "" {
		p.Release = f.Kernel.Release
	}
	p.At = r.now().UTC().Truncate(time.Second)
}

func (r *Records) now() time.Time {
	if r != nil && r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Records) path(hostKey string) string {
	sum := sha256.Sum256([]byte(hostKey))
	return filepath.Join(r.Dir, hex.EncodeToString(sum[:16])+".json")
}

func (r *Records) remember(p *facts.Probe) error {
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		return fmt.Errorf("probe records: %v", err)
	}
	if err := private(r.Dir, true); err != nil {
		return err
	}
	rec := *p
	rec.Recorded = false
	return atomicfile.Write(r.path(p.HostKey), 0o600, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rec)
	})
}

// read is the record of hostKey, nil when there is none.
func (r *Records) read(hostKey string) (*facts.Probe, error) {
	if err := private(r.Dir, true); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	path := r.path(hostKey)
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("probe records: %v", err)
	}
	defer fh.Close()
	if err := private(path, false); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(fh, maxRecord+1))
	if err != nil {
		return nil, fmt.Errorf("probe records: %s: %v", path, err)
	}
	if len(b) > maxRecord {
		return nil, located.Hint(fmt.Errorf("probe records: %s is larger than %d bytes: not a record of kaudit's", path, maxRecord), "remove it")
	}
	var p facts.Probe
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil || p.HostKey != hostKey || !Ran(&p) {
		return nil, located.Hint(fmt.Errorf("probe records: %s is not a probe record of this host", path), "remove it; kaudit probe records a new one")
	}
	return &p, nil
}

// private refuses a records directory or file that is not the running
// user's alone (as OpenSSH refuses such a config): a symlink, another
// owner, or write access for group or others.
func private(path string, dir bool) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	what := "file"
	if dir {
		what = "directory"
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return located.Hint(fmt.Errorf("probe records: %s %s is a symbolic link: refused", what, path), "give a real directory of your own")
	case dir != fi.IsDir():
		return fmt.Errorf("probe records: %s is not a %s", path, what)
	case ok && int(st.Uid) != os.Geteuid():
		return located.Hint(fmt.Errorf("probe records: %s %s belongs to uid %d, not to you (uid %d): refused", what, path, st.Uid, os.Geteuid()), "use a directory of your own, or remove it")
	case fi.Mode().Perm()&0o022 != 0:
		return located.Hint(fmt.Errorf("probe records: %s %s is writable by group or others (mode %04o): refused", what, path, fi.Mode().Perm()), "chmod go-w "+path)
	}
	return nil
}
