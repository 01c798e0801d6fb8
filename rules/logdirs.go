package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// The log directory rules judge facts.Kafka.LogDirs, one verdict per host:
// the worst directory decides, and every directory is named in the evidence.
const (
	RuleLogDirFilesystem = "log-dir-filesystem"
	RuleLogDirNoatime    = "log-dir-noatime"
	RuleLogDirRootDevice = "log-dir-root-device"
)

// fsClass is what a filesystem type means for a Kafka log.
type fsClass int

const (
	fsGood   fsClass = iota // local XFS or ext4
	fsOther                 // overlay, btrfs, zfs…: not what Kafka documents
	fsForbid                // network, memory or user-space: data at risk
)

// classify sorts a mountinfo filesystem type (its subtype included:
// fuse.sshfs) and says what it is.
func classify(fstype string) (fsClass, string) {
	base, _, _ := strings.Cut(fstype, ".")
	switch base {
	case "xfs":
		return fsGood, "XFS, the filesystem Kafka's documentation recommends"
	case "ext4":
		return fsGood, "ext4, which Kafka's documentation supports (XFS is preferred)"
	case "nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "9p", "afs":
		return fsForbid, "a network filesystem, which Kafka's log does not support"
	case "tmpfs", "ramfs":
		return fsForbid, fstype + " (memory): the log is lost at every reboot"
	case "fuse", "fuseblk":
		return fsForbid, "a FUSE (user-space) filesystem"
	case "overlay":
		return fsOther, "an overlay (a container's writable layer?): its upper filesystem is not visible here"
	}
	return fsOther, fstype + ", not a filesystem Kafka documents (XFS or ext4)"
}

// logDirs returns the broker's log directories, or the finding to give
// when they are not known.
func (c *evalCtx) logDirs() ([]facts.LogDir, *Finding) {
	if c.f.Kafka == nil {
		fd := c.noKafkaFinding()
		return nil, &fd
	}
	if len(c.f.Kafka.LogDirs) == 0 {
		fd := unknown(c.notGathered(facts.SecLogDirs, "the broker's log directories"))
		return nil, &fd
	}
	return c.f.Kafka.LogDirs, nil
}

// unreached is why a directory's mount is not known, "" when it is.
func unreached(d facts.LogDir) string {
	switch {
	case !d.Exists:
		return d.Path + ": does not exist or is not reachable by the audit user"
	case d.Mount == "":
		return d.Path + ": its mount was not found in /proc/self/mountinfo"
	}
	return ""
}

func mountDesc(d facts.LogDir) string {
	return fmt.Sprintf("%s on %s (%s %s, dev %s)", d.Path, d.Mount, d.FSType, d.Source, d.Device)
}

func evalLogDirFilesystem(c *evalCtx) Finding {
	dirs, fd := c.logDirs()
	if fd != nil {
		return *fd
	}
	var bad, other, unk, ev []string
	for _, d := range dirs {
		if why := unreached(d); why != "" {
			unk = append(unk, why)
			continue
		}
		ev = append(ev, mountDesc(d))
		switch cl, what := classify(d.FSType); cl {
		case fsForbid:
			bad = append(bad, d.Path+" is on "+what)
		case fsOther:
			other = append(other, d.Path+" is on "+what)
		}
	}
	f := Finding{Observed: strings.Join(ev, "; "), Expected: "local xfs or ext4", Evidence: ev}
	switch {
	case len(bad) > 0:
		f.Status, f.Reason = Fail, strings.Join(append(bad, other...), "; ")
		f.Fix = &Fix{Summary: "move the log directory to a local XFS or ext4 filesystem", Manual: moveManual(dirs, bad), Restart: true}
	case len(unk) > 0:
		f.Status, f.Reason = Unknown, strings.Join(unk, "; ")
	case len(other) > 0:
		f.Status, f.Severity, f.Reason = Warn, c.warning(), strings.Join(other, "; ")
	default:
		f.Status, f.Reason = Pass, "every log directory is on XFS or ext4"
	}
	return f
}

func moveManual(dirs []facts.LogDir, bad []string) string {
	return "stop the broker, copy " + strings.Join(bad, ", ") +
		" to a directory on a local XFS (or ext4) disk (cp -a, or let the broker re-replicate an empty directory from its followers), set log.dirs to it in server.properties, start the broker"
}

// atimeMode is how a mount's options treat access times.
func atimeMode(opts []string) string {
	for _, m := range []string{"noatime", "strictatime", "relatime"} {
		if slices.Contains(opts, m) {
			return m
		}
	}
	return "relatime" // the kernel's default since 2.6.30 (mount(8))
}

func evalLogDirNoatime(c *evalCtx) Finding {
	dirs, fd := c.logDirs()
	if fd != nil {
		return *fd
	}
	var strict, rel, unk, ev []string
	mounts := map[string]bool{}
	for _, d := range dirs {
		if why := unreached(d); why != "" {
			unk = append(unk, why)
			continue
		}
		if cl, _ := classify(d.FSType); cl == fsForbid {
			continue // tmpfs, NFS, FUSE…: log-dir-filesystem fails them already
		}
		m := atimeMode(d.Options)
		ev = append(ev, d.Path+" on "+d.Mount+": "+m)
		switch m {
		case "strictatime":
			strict, mounts[d.Mount] = append(strict, d.Mount), true
		case "relatime":
			rel, mounts[d.Mount] = append(rel, d.Mount), true
		}
	}
	f := Finding{Observed: strings.Join(ev, "; "), Expected: "noatime", Evidence: ev}
	switch {
	case len(strict) > 0:
		f.Status, f.Reason = Fail, "mounted strictatime (every read of a segment writes its access time): "+strings.Join(strict, ", ")
	case len(unk) > 0:
		f.Status, f.Reason = Unknown, strings.Join(unk, "; ")
		return f
	case len(rel) > 0:
		f.Status, f.Severity, f.Reason = Warn, c.warning(), "mounted relatime, not noatime (relatime writes a file's access time at most once a day): "+strings.Join(rel, ", ")
	case len(ev) == 0:
		return skip("every log directory is on a filesystem log-dir-filesystem fails (memory, network or FUSE): its atime is not judged")
	default:
		f.Status, f.Reason = Pass, "every log directory's mount is noatime"
		return f
	}
	f.Fix = &Fix{Summary: "mount the log directories noatime", Manual: noatimeManual(sortedKeys(mounts)), WhenWarn: true}
	return f
}

// noatimeManual is the exact change for each mount: its fstab entry and a
// remount now.
func noatimeManual(mounts []string) string {
	var parts []string
	for _, m := range mounts {
		parts = append(parts, fmt.Sprintf("in /etc/fstab add noatime to the options (fourth field) of the line for %s, then run: mount -o remount,noatime %s", m, shellWord(m)))
	}
	return strings.Join(parts, "; ")
}

// shellWord quotes a path for a command line shown to the user.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func evalLogDirRootDevice(c *evalCtx) Finding {
	dirs, fd := c.logDirs()
	if fd != nil {
		return *fd
	}
	var onRoot, unk, ev []string
	for _, d := range dirs {
		if why := unreached(d); why != "" {
			unk = append(unk, why)
			continue
		}
		ev = append(ev, mountDesc(d))
		if d.SameDeviceAsRoot {
			onRoot = append(onRoot, d.Path)
		}
	}
	f := Finding{Observed: strings.Join(ev, "; "), Expected: "a device other than the root filesystem's", Evidence: ev}
	switch {
	case len(onRoot) > 0:
		f.Status, f.Reason = Fail, "on the same device as / (the operating system's disk): "+strings.Join(onRoot, ", ")
		f.Fix = &Fix{Summary: "put the log directories on a dedicated disk", Manual: "mount a dedicated disk (XFS), stop the broker, move " + strings.Join(onRoot, ", ") + " there, update log.dirs in server.properties, start the broker", Restart: true}
	case len(unk) > 0:
		f.Status, f.Reason = Unknown, strings.Join(unk, "; ")
	default:
		f.Status, f.Reason = Pass, "no log directory is on the root filesystem's device"
	}
	return f
}
