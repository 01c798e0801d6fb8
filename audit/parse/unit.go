package parse

import (
	"fmt"
	"github.com/kaudit/kaudit/internal/safe"
	"strconv"
	"strings"
)

// CgroupService is the service /proc/PID/cgroup places a process in.
type CgroupService struct {
	// Cgroup is the path read: the unified hierarchy's ("0::PATH") when
	// present, else the v1 systemd hierarchy's ("N:name=systemd:PATH").
	Cgroup string
	// Unit is the system service the path names; empty when the process
	// is not in one, and then Why says where it is instead.
	Unit string
	Why  string
}

// ParseCgroup reads /proc/PID/cgroup (cgroups(7), "/proc/pid/cgroup"):
// one "ID:CONTROLLERS:PATH" line per hierarchy. systemd puts a system
// service's processes under its unit's cgroup (".../kafka.service", under
// any slice); a user's session or user manager (user.slice), a scope (a
// container started by docker or podman with the systemd driver, a login
// session) or a path with no service (a container's own namespace "/",
// docker's cgroupfs "/docker/ID", kubepods) is not a system service.
func ParseCgroup(text string) (CgroupService, error) {
	var v2, v1 string
	found2, found1 := false, false
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		id, rest, ok := strings.Cut(line, ":")
		ctrl, path, ok2 := strings.Cut(rest, ":")
		if !ok || !ok2 {
			return CgroupService{}, fmt.Errorf("cgroup line %q: want ID:CONTROLLERS:PATH", line)
		}
		switch {
		case id == "0" && ctrl == "":
			v2, found2 = path, true
		case ctrl == "name=systemd":
			v1, found1 = path, true
		}
	}
	if !found2 && !found1 {
		return CgroupService{}, fmt.Errorf("no unified (0::) or name=systemd line in /proc/PID/cgroup")
	}
	if !found1 {
		return serviceOf(v2), nil
	}
	s1 := serviceOf(v1)
	if !found2 || v2 == "/" {
		return s1, nil // cgroup v1, or hybrid with an empty unified tree
	}
	// Hybrid: systemd tracks the process on both; a runtime that moved it
	// on one only (docker's cgroupfs driver) makes them disagree.
	if s2 := serviceOf(v2); s2.Unit != s1.Unit {
		s1.Unit = ""
		s1.Why = fmt.Sprintf("the cgroup hierarchies disagree (name=systemd %s, unified %s): a container, not a service", v1, v2)
	}
	return s1, nil
}

// serviceOf walks a cgroup path from the root: the first .service
// component is the unit, unless a user slice or a scope comes first.
func serviceOf(path string) CgroupService {
	c := CgroupService{Cgroup: path}
	for _, comp := range strings.Split(strings.Trim(path, "/"), "/") {
		switch {
		case comp == "user.slice":
			c.Why = "a user's session (user.slice), not a system service"
			return c
		case strings.HasSuffix(comp, ".scope"):
			c.Why = "a scope (" + comp + ": a container or a login session), not a service"
			return c
		case strings.HasSuffix(comp, ".service"):
			if !safe.ServiceName(comp) {
				c.Why = fmt.Sprintf("unit name %q is not one kaudit accepts", comp)
				return c
			}
			c.Unit = comp
			return c
		}
	}
	c.Why = "no systemd service in the cgroup path (a container, or started outside systemd)"
	return c
}

// UnitShow is what `systemctl show -p LimitNOFILE -p LimitNOFILESoft
// -p FragmentPath -p DropInPaths UNIT` prints.
type UnitShow struct {
	// NoFileHard and NoFileSoft are LimitNOFILE (hard) and LimitNOFILESoft;
	// -1 for "infinity".
	NoFileHard, NoFileSoft int64
	FragmentPath           string
	DropIns                []string
}

// ParseUnitShow reads systemctl show's KEY=VALUE lines (systemctl(1),
// "show"); both limits must be present.
func ParseUnitShow(text string) (UnitShow, error) {
	var u UnitShow
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return u, fmt.Errorf("systemctl show line %q: want KEY=VALUE", line)
		}
		var err error
		switch k {
		case "LimitNOFILE":
			u.NoFileHard, err = rlimit(v)
		case "LimitNOFILESoft":
			u.NoFileSoft, err = rlimit(v)
		case "FragmentPath":
			u.FragmentPath = v
		case "DropInPaths":
			if f := strings.Fields(v); len(f) > 0 {
				u.DropIns = f
			}
		default:
			continue
		}
		if err != nil {
			return u, fmt.Errorf("systemctl show %s: %w", k, err)
		}
		seen[k] = true
	}
	if !seen["LimitNOFILE"] || !seen["LimitNOFILESoft"] {
		return u, fmt.Errorf("systemctl show printed no LimitNOFILE/LimitNOFILESoft (systemd older than 230?)")
	}
	return u, nil
}

// rlimit reads a systemd rlimit value: a number or "infinity" (-1).
func rlimit(v string) (int64, error) {
	if v == "infinity" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a limit", v)
	}
	return n, nil
}
