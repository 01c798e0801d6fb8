package parse

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// Mount is one line of /proc/PID/mountinfo (Documentation/filesystems/proc.rst,
// "3.5 /proc/<pid>/mountinfo"), with the octal escapes of its path fields
// decoded (the kernel's show_mountinfo escapes space, tab, newline and
// backslash as \ooo: fs/proc_namespace.c, mangle).
type Mount struct {
	ID, Parent int
	Device     string // major:minor
	Root       string // the directory of the filesystem mounted here
	Point      string // the mount point
	Options    []string
	FSType     string // with its subtype: fuse.sshfs
	Source     string
	Super      []string // the superblock's options
}

// Mountinfo parses mountinfo lines; a line that does not have the format is
// an error naming its number (the gather output is untrusted).
func Mountinfo(text string) ([]Mount, error) {
	var out []Mount
	for i, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, err := mountinfoLine(line)
		if err != nil {
			return nil, fmt.Errorf("mountinfo line %d: %w", i+1, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func mountinfoLine(line string) (Mount, error) {
	f := strings.Fields(line)
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if len(f) < 10 || sep < 0 || len(f) < sep+4 {
		return Mount{}, fmt.Errorf("not a mountinfo line: %q", truncate(line, 80))
	}
	var m Mount
	var err1, err2 error
	m.ID, err1 = strconv.Atoi(f[0])
	m.Parent, err2 = strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || !isDevNumber(f[2]) {
		return Mount{}, fmt.Errorf("bad mount id, parent or major:minor in %q", truncate(line, 80))
	}
	m.Device = f[2]
	m.Root, m.Point = unescapeOctal(f[3]), unescapeOctal(f[4])
	m.Options = strings.Split(f[5], ",")
	m.FSType, m.Source = unescapeOctal(f[sep+1]), unescapeOctal(f[sep+2])
	m.Super = strings.Split(f[sep+3], ",")
	return m, nil
}

func isDevNumber(s string) bool {
	maj, min, ok := strings.Cut(s, ":")
	_, e1 := strconv.ParseUint(maj, 10, 32)
	_, e2 := strconv.ParseUint(min, 10, 32)
	return ok && e1 == nil && e2 == nil
}

// unescapeOctal decodes \ooo escapes (three octal digits); anything else
// is kept as it is.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// MountOf is the mount a path (absolute, symlinks resolved) is on: the
// last-listed mount whose mount point is the longest path-prefix of it (a
// later mount on the same point hides an earlier one). ok is false when
// none is (no "/" in the list).
func MountOf(mounts []Mount, path string) (Mount, bool) {
	best, found := Mount{}, false
	for _, m := range mounts {
		if !underPoint(path, m.Point) {
			continue
		}
		if !found || len(m.Point) >= len(best.Point) {
			best, found = m, true
		}
	}
	return best, found
}

// underPoint: path is point or below it, component by component
// (/data2 is not under /data).
func underPoint(path, point string) bool {
	if point == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == point || strings.HasPrefix(path, point+"/")
}

// LogDirs parses the gather's log-dirs section: for each directory a
// "dir=PATH" line, then "real=REALPATH" (absent when the directory does
// not exist or cannot be reached) and "segments=N"; then "mi=LINE" for
// the mountinfo lines of every mount point above some directory (always
// "/"). Each directory gets the mount it is on and whether its device is
// the device of "/".
func LogDirs(body string) ([]facts.LogDir, error) {
	var dirs []facts.LogDir
	var reals []string
	var mi []string
	for _, line := range strings.Split(body, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		n := len(dirs) - 1
		switch {
		case k == "dir":
			dirs = append(dirs, facts.LogDir{Path: v, Segments: -1})
			reals = append(reals, "")
		case k == "mi":
			mi = append(mi, v)
		case n < 0:
			return nil, fmt.Errorf("log-dirs: %q before any dir= line", truncate(line, 80))
		case k == "real":
			dirs[n].Exists, reals[n] = true, v
		case k == "segments":
			s, err := strconv.Atoi(v)
			if err != nil || s < -1 {
				return nil, fmt.Errorf("log-dirs: %s: segments %q is not a count", dirs[n].Path, v)
			}
			dirs[n].Segments = s
		}
	}
	mounts, err := Mountinfo(strings.Join(mi, "\n"))
	if err != nil {
		return nil, err
	}
	root, rootOK := MountOf(mounts, "/")
	for i := range dirs {
		m, ok := MountOf(mounts, reals[i])
		if !dirs[i].Exists || !ok {
			continue
		}
		d := &dirs[i]
		d.Mount, d.FSType, d.Source, d.Device = m.Point, m.FSType, m.Source, m.Device
		d.Options = append(append([]string{}, m.Options...), m.Super...)
		d.SameDeviceAsRoot = rootOK && sameDevice(m, root)
	}
	return dirs, nil
}

// sameDevice: both mounts are of one device: the same major:minor, or the
// same block device as source (btrfs gives each subvolume its own
// anonymous major:minor on one disk).
func sameDevice(a, b Mount) bool {
	return a.Device == b.Device || (strings.HasPrefix(a.Source, "/dev/") && a.Source == b.Source)
}
