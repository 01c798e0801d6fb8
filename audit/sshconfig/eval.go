package sshconfig

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Query names the host to evaluate and the values given before any file is
// read (the inventory's, like ssh's command-line options: they win, and
// Match user / %r / %p see them).
type Query struct {
	Host     string // the name as given to ssh: an alias or a host name
	HostName string // preset HostName ("" = from the files)
	User     string // preset User ("" = from the files, else the local user)
	Port     int    // preset Port (0 = from the files, else 22)
}

// maxDepth bounds nested Includes, as OpenSSH's READCONF_MAX_DEPTH.
const maxDepth = 16

// value is the first value obtained for a keyword and where it came from.
type value struct {
	args  []string
	where string
}

type state struct {
	c         *Config
	q         Query
	final     bool // the second pass that `Match final` asks for
	wantFinal bool
	hostname  string // %h after the first pass
	vals      map[string]value
	multi     map[string][]value
	ignore    string // IgnoreUnknown pattern list
}

// Resolve evaluates the configuration for one host.
func (c *Config) Resolve(q Query) (*Host, error) {
	st := &state{c: c, q: q, vals: map[string]value{}, multi: map[string][]value{}}
	if q.HostName != "" {
		st.vals["hostname"] = value{args: []string{q.HostName}, where: "inventory"}
	}
	if q.User != "" {
		st.vals["user"] = value{args: []string{q.User}, where: "inventory"}
	}
	if q.Port != 0 {
		st.vals["port"] = value{args: []string{strconv.Itoa(q.Port)}, where: "inventory"}
	}
	if err := st.pass(); err != nil {
		return nil, err
	}
	st.hostname = q.Host
	if v, ok := st.vals["hostname"]; ok {
		h, err := expandPercent(v.args[0], map[byte]string{'h': q.Host})
		if err != nil {
			return nil, fmt.Errorf("%s: HostName: %v", v.where, err)
		}
		st.hostname = strings.ToLower(h)
	}
	if st.wantFinal {
		st.final = true
		st.vals["hostname"] = value{args: []string{st.hostname}, where: "final pass"}
		if err := st.pass(); err != nil {
			return nil, err
		}
	}
	return st.result()
}

func (st *state) pass() error {
	for _, f := range st.c.files {
		if err := st.file(f, true, false, 0); err != nil {
			return err
		}
	}
	return nil
}

// file evaluates one file. active is the state inherited from the
// including line; never marks a file included from an inactive block,
// whose Host and Match lines then never apply.
func (st *state) file(f source, active, never bool, depth int) error {
	dirs, err := st.c.read(f)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		switch d.key {
		case "host":
			active = !never && matchHostLine(st.hostForHost(), d.args)
		case "match":
			m, err := st.match(d)
			if err != nil {
				return err
			}
			active = !never && m
		case "include":
			if err := st.include(f, d, active, never, depth); err != nil {
				return err
			}
		default:
			if active {
				st.set(d)
			}
		}
	}
	return nil
}

func (st *state) include(from source, d directive, active, never bool, depth int) error {
	if depth >= maxDepth {
		return fmt.Errorf("%s: Include nested more than %d deep (a loop?)", d.where(), maxDepth)
	}
	for _, pat := range d.args {
		switch {
		case strings.HasPrefix(pat, "~"):
			p, err := expandTilde(pat, st.c.opt.Home)
			if err != nil {
				return fmt.Errorf("%s: Include: %v", d.where(), err)
			}
			pat = p
		case !filepath.IsAbs(pat) && from.user:
			pat = filepath.Join(st.c.opt.Home, ".ssh", pat)
		case !filepath.IsAbs(pat):
			pat = filepath.Join(filepath.Dir(SystemFile), pat)
		}
		paths, err := filepath.Glob(pat)
		if err != nil {
			return fmt.Errorf("%s: Include %q: %v", d.where(), pat, err)
		}
		for _, p := range paths {
			if err := st.file(source{path: p, user: from.user}, active, never || !active, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// hostForHost is what Host patterns are matched against: the name given,
// or in the final pass the HostName.
func (st *state) hostForHost() string {
	if st.final {
		return st.hostname
	}
	return st.q.Host
}

// set records a value unless one was obtained already.
func (st *state) set(d directive) {
	if !known[d.key] {
		if st.ignore != "" && matchList(d.key, st.ignore, true) {
			return
		}
		st.c.warn("kw:"+d.where(), fmt.Sprintf("ssh_config %s: unknown keyword %q ignored", d.where(), d.key))
		return
	}
	v := value{args: d.args, where: d.where()}
	switch {
	case accumulating[d.key]:
		st.multi[d.key] = append(st.multi[d.key], v)
	case d.key == "ignoreunknown":
		if st.ignore == "" {
			st.ignore = strings.ToLower(strings.Join(d.args, ","))
		}
	case d.key == "proxycommand" || d.key == "proxyjump":
		// one of the two: whichever is obtained first
		_, pc := st.vals["proxycommand"]
		_, pj := st.vals["proxyjump"]
		if !pc && !pj {
			st.vals[d.key] = v
		}
	default:
		if _, ok := st.vals[d.key]; !ok {
			st.vals[d.key] = v
		}
	}
}
