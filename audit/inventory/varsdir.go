package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kaudit/kaudit/internal/located"
	"gopkg.in/yaml.v3"
)

// Ansible reads group_vars/ and host_vars/ beside the inventory: for a
// group or host NAME, the files NAME, NAME.yml, NAME.yaml and NAME.json,
// and every such file under a directory NAME/ (recursively, in name order,
// hidden files skipped). Each is a YAML (or JSON) mapping of variables.

// varsExts are the file name endings Ansible accepts in those directories.
var varsExts = []string{"", ".yml", ".yaml", ".json"}

// dirVars returns the variables of kind ("group_vars" or "host_vars") for
// name, as one layer per file in load order; nil when there are none or the
// inventory came from stdin.
func (p *parser) dirVars(kind, name string) []*settings {
	if p.dir == "" || p.stdin {
		return nil
	}
	entries := p.varsEntries(kind)
	base := filepath.Join(p.dir, kind, name)
	var files []string
	for _, ext := range varsExts {
		if d, ok := entries[name+ext]; ok && d.Type().IsRegular() {
			files = append(files, base+ext)
		}
	}
	if d, ok := entries[name]; ok && d.IsDir() {
		files = append(files, varsDirFiles(base)...)
	}
	var out []*settings
	for _, f := range files {
		out = append(out, p.varsFile(f, kind == "group_vars"))
	}
	return out
}

// varsEntries lists group_vars/ or host_vars/ once per parse (a stat per
// host would dominate loading 10,000 hosts). Symbolic links are followed.
func (p *parser) varsEntries(kind string) map[string]fs.DirEntry {
	if m, ok := p.varsDirs[kind]; ok {
		return m
	}
	m := map[string]fs.DirEntry{}
	dir := filepath.Join(p.dir, kind)
	list, _ := os.ReadDir(dir) // no such directory: no vars
	for _, d := range list {
		if d.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(dir, d.Name())); err == nil {
				d = fs.FileInfoToDirEntry(st)
			}
		}
		m[d.Name()] = d
	}
	if p.varsDirs == nil {
		p.varsDirs = map[string]map[string]fs.DirEntry{}
	}
	p.varsDirs[kind] = m
	return m
}

// warnAddresses warns when the mentions of host h in the inventory (one
// per group that lists it) give it different addresses: Ansible takes the
// last and so does kaudit, but two definitions of one name with two
// addresses are more often a copy-paste slip than a wish.
func (p *parser) warnAddresses(h *rawHost) {
	var first *settings
	for _, v := range h.vars {
		if !v.address.ok {
			continue
		}
		if first == nil {
			first = v
			continue
		}
		if v.address.v != first.address.v {
			p.c.warn(located.WithHint(fmt.Sprintf("%s: host %s is defined twice with different addresses: %s at %s, %s at %s; Ansible uses the last one (%s), and so does kaudit",
				first.addressAt, h.name, first.address.v, first.addressAt, v.address.v, v.addressAt, v.address.v), "remove or correct one of the two"))
			first = v
		}
	}
}

// varsDirFiles lists the vars files under dir, in Ansible's order.
func varsDirFiles(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") && path != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(d.Name())
		if d.Type().IsRegular() && (ext == "" || ext == ".yml" || ext == ".yaml" || ext == ".json") {
			out = append(out, path)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// varsFile reads one vars file; its problems are reported under its own
// name (and line).
func (p *parser) varsFile(path string, isGroup bool) *settings {
	sub := &parser{c: collector{file: path}, dir: p.dir, lenient: true}
	defer p.c.absorb(&sub.c)
	s := &settings{}
	data, err := readLimited(path)
	if err != nil {
		sub.c.add(0, "", "check the file's permissions", "cannot read vars file: %v", err)
		return s
	}
	if bytes.HasPrefix(data, []byte("$ANSIBLE_VAULT;")) {
		sub.c.add(1, "", "kaudit never decrypts vaults; pipe ansible-inventory -i INVENTORY --list into kaudit scan - instead", "vars file is encrypted with ansible-vault")
		return s
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		sub.c.keep(located.YAMLSyntax(path, data, err, ""))
		return s
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return s
	}
	_, _ = sub.ansibleVars(doc.Content[0], "", s, isGroup) // ansible_group_priority belongs in the inventory
	return s
}

// readLimited reads a file of at most maxSize bytes.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, located.PathCause(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err == nil && len(data) > maxSize {
		err = errors.New("larger than 16 MiB")
	}
	return data, err
}

// resolveAnsible merges each host's layers in Ansible's precedence order:
// inventory group vars (by group depth, priority, name), group_vars/ files
// in the same group order, the host's own inventory vars, host_vars/ files.
func (p *parser) resolveAnsible(hosts hostTable, g *graph) []Host {
	groupFiles := map[string][]*settings{}
	for _, grp := range g.order {
		groupFiles[grp] = p.dirVars("group_vars", grp)
	}
	out := make([]Host, 0, len(hosts.list))
	for _, h := range hosts.list {
		s := &settings{}
		groups := g.groupsOf(h.name)
		for _, grp := range groups {
			s.overlay(g.vars[grp])
		}
		for _, grp := range groups {
			for _, v := range groupFiles[grp] {
				s.overlay(v)
			}
		}
		p.warnAddresses(h)
		for _, v := range h.vars {
			s.overlay(v)
		}
		for _, v := range p.dirVars("host_vars", h.name) {
			s.overlay(v)
		}
		out = append(out, p.host(h.name, h.source, s, groups))
	}
	return out
}
