package parse

import (
	"regexp"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

var (
	rePermString = regexp.MustCompile(`^[-dlcbps][-rwxsStT]{9}$`)
	reSysctlKey  = regexp.MustCompile(`^[a-z0-9_]+(\.[a-z0-9_-]+)+$`)
	// reContainer is "KIND FILE" of a container line, KIND a word such as
	// systemd's container types (docker, podman, lxc, systemd-nspawn) and
	// FILE one of the files the gather reads.
	reContainer = regexp.MustCompile(`^([a-z0-9][a-z0-9_.-]{0,31}) (/run/systemd/container|/run/\.containerenv|/\.dockerenv|/var/run/secrets/kubernetes\.io)$`)
)

// Feasibility parses the gather script's feasibility section: "mode KEY
// PERMS", "netns-self LINK", "netns-init LINK", "dir yes|no|absent|notdir
// PERMS|- PATH", "mount ro|rw FSTYPE MOUNTPOINT" (as /proc/mounts escapes
// it), "selinux 0|1", "tool chcon", "container KIND FILE" (the first one
// counts). Lines it does not know are ignored;
// a malformed permission string is dropped (the entry stays unknown). Each
// directory's mount is the longest mount point that contains it, the last
// such line winning (a later mount hides an earlier one).
func Feasibility(body string) *facts.Feasibility {
	f := &facts.Feasibility{SysctlModes: map[string]string{}, Dirs: map[string]facts.Dir{}}
	var self, init string
	var mounts [][3]string // ro|rw, type, point
	for _, line := range strings.Split(body, "\n") {
		word, rest, _ := strings.Cut(strings.TrimRight(line, "\r"), " ")
		switch word {
		case "mode":
			if k, perm, ok := strings.Cut(rest, " "); ok && reSysctlKey.MatchString(k) && rePermString.MatchString(perm) {
				f.SysctlModes[k] = perm
			}
		case "netns-self":
			self = strings.TrimSpace(rest)
		case "netns-init":
			init = strings.TrimSpace(rest)
		case "dir":
			feasDir(f, rest)
		case "mount":
			if m := strings.SplitN(rest, " ", 3); len(m) == 3 && strings.HasPrefix(m[2], "/") {
				mounts = append(mounts, [3]string{m[0], m[1], unescapeMount(m[2])})
			}
		case "selinux":
			f.SELinux = map[string]string{"1": "enforcing", "0": "permissive"}[strings.TrimSpace(rest)]
		case "tool":
			f.Chcon = f.Chcon || strings.TrimSpace(rest) == "chcon"
		case "container":
			if m := reContainer.FindStringSubmatch(strings.TrimSpace(rest)); m != nil && f.Container == "" {
				f.Container = m[1] + " (" + m[2] + ")"
			}
		}
	}
	if m := mountOf(mounts, "/proc/sys"); m != nil && m[0] == "ro" {
		f.ProcSysReadOnly = true
	}
	switch {
	case self == "" || init == "":
	case self == init:
		f.NetNS = facts.NetNSSameAsInit
	default:
		f.NetNS = facts.NetNSOther
	}
	for p, d := range f.Dirs {
		if m := mountOf(mounts, p); m != nil {
			d.ReadOnly, d.FSType, d.Mount = m[0] == "ro", m[1], m[2]
			f.Dirs[p] = d
		}
	}
	return f
}

// feasDir reads one "dir STATE PERMS PATH" line.
func feasDir(f *facts.Feasibility, rest string) {
	parts := strings.SplitN(rest, " ", 3)
	if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") {
		return
	}
	d := facts.Dir{}
	switch parts[0] {
	case "yes", "no":
		d.Exists, d.Writable = true, parts[0] == "yes"
		if rePermString.MatchString(parts[1]) {
			d.Mode = parts[1]
		}
	case "absent", "notdir":
	default:
		return
	}
	f.Dirs[parts[2]] = d
}

// mountOf is the mount holding path p: the longest mount point that is p
// or a parent of it, the last line winning among equal ones.
func mountOf(mounts [][3]string, p string) *[3]string {
	var best *[3]string
	for i := range mounts {
		mp := mounts[i][2]
		if mp != "/" && p != mp && !strings.HasPrefix(p, strings.TrimSuffix(mp, "/")+"/") {
			continue
		}
		if best == nil || len(mp) >= len(best[2]) {
			best = &mounts[i]
		}
	}
	return best
}

// unescapeMount undoes /proc/mounts' octal escapes (\040 space, \011 tab,
// \012 newline, \134 backslash).
func unescapeMount(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}
