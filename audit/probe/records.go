package probe

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/atomicfile"
	"github.com/kaudit/kaudit/internal/located"
)

// Records keeps the probe's verdicts on kaudit's side (never on the host),
// so that a later scan, fix, serve or what-if of the same boot of the same
// host decides the kernel's verdict as the probe proved it (a fix that
// planned on the version table a minute after a probe proved the bug on
// that very boot left the talk's failure in place).
//
// A record is used only for the host key it was made under, the kernel
// release and the boot id (/proc/sys/kernel/random/boot_id) it ran on: a
// reboot or another kernel makes it stale (Facts.EarlierProbe, chosen
// among the records of the same inventory name). One file per host key
// holds the last maxRecords probes under it (hosts cloned from one image
// share a key; their boot ids differ). Dir and its files must belong to
// the user kaudit runs as and be writable by no one else, or Records
// refuses them: a planted "fixed" would be a wrong "you are safe".
type Records struct {
	Dir string
	Now func() time.Time // nil: time.Now

	mu sync.Mutex // one read-modify-write of a file at a time
}

// record is one kept probe and the inventory name it was made for.
type record struct {
	Host  string       `json:"host"`
	Probe *facts.Probe `json:"probe"`
}

type recordFile struct {
	Records []record `json:"records"`
}

// maxRecord bounds what is read back from one record file, maxRecords
// how many probes one file keeps.
const (
	maxRecord  = 1 << 20
	maxRecords = 32
)

// Settle is called once per gathered host, after its probe (if any):
// a probe of this run that ran is recorded; otherwise the record of this
// host key, release and boot is read back into f.Probe (Recorded set),
// or the last one of this host on another boot or kernel into
// f.EarlierProbe. A nil Records does nothing. Its error is for a warning:
// the host's facts stay as gathered.
func (r *Records) Settle(host string, f *facts.Facts) error {
	if r == nil || f == nil || f.HostKey == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if f.Probe != nil && Ran(f.Probe) {
		return r.remember(host, f.Probe)
	}
	file, err := r.read(f.HostKey)
	if err != nil {
		return err
	}
	for _, rec := range file.Records {
		p := rec.Probe
		if p.Release == f.Kernel.Release && p.BootID != "" && p.BootID == f.Kernel.BootID {
			p.Recorded = true
			p.AgeS = max(int64(r.now().Sub(p.At)/time.Second), 0)
			f.Probe = p
			return nil
		}
	}
	for _, rec := range file.Records { // newest first
		if rec.Host == host {
			f.EarlierProbe = rec.Probe
			break
		}
	}
	return nil
}

// Ran reports whether a probe measured anything worth keeping: every state
// but those in which it never started, on a known boot of a known host.
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
	p.Release = cmp.Or(p.Release, f.Kernel.Release)
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

// remember puts p first in its host key's file, replacing an older probe
// of the same host and boot, keeping at most maxRecords.
func (r *Records) remember(host string, p *facts.Probe) error {
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		return fmt.Errorf("probe records: %v", err)
	}
	file, err := r.read(p.HostKey)
	if err != nil {
		return err
	}
	rec := *p
	rec.Recorded, rec.AgeS = false, 0
	keep := []record{{Host: host, Probe: &rec}}
	for _, o := range file.Records {
		if (o.Host != host || o.Probe.BootID != p.BootID) && len(keep) < maxRecords {
			keep = append(keep, o)
		}
	}
	return atomicfile.Write(r.path(p.HostKey), 0o600, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(recordFile{Records: keep})
	})
}

// read is the file of hostKey, empty when there is none.
func (r *Records) read(hostKey string) (recordFile, error) {
	var file recordFile
	if err := private(r.Dir, true); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return file, nil
		}
		return file, err
	}
	path := r.path(hostKey)
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return file, nil
	}
	if err != nil {
		return file, fmt.Errorf("probe records: %v", err)
	}
	defer fh.Close()
	if err := private(path, false); err != nil {
		return file, err
	}
	b, err := io.ReadAll(io.LimitReader(fh, maxRecord+1))
	if err != nil {
		return file, fmt.Errorf("probe records: %s: %v", path, err)
	}
	if len(b) > maxRecord {
		return file, located.Hint(fmt.Errorf("probe records: %s is larger than %d bytes: not a record of kaudit's", path, maxRecord), "remove it")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil || !validFile(file, hostKey) {
		return recordFile{}, located.Hint(fmt.Errorf("probe records: %s is not a probe record of kaudit's for this host key", path), "remove it; kaudit probe records a new one")
	}
	return file, nil
}

func validFile(file recordFile, hostKey string) bool {
	if len(file.Records) > maxRecords {
		return false
	}
	for _, rec := range file.Records {
		if rec.Probe == nil || rec.Probe.HostKey != hostKey || !Ran(rec.Probe) {
			return false
		}
	}
	return true
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
