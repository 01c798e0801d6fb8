package inventory

import (
	"slices"
	"sort"
	"strings"
)

// ref is where a group is named as another group's child.
type ref struct {
	line  int
	field string
}

// graph holds the groups of an inventory: children edges, direct host
// members, vars. Both formats build one, then share cycle detection,
// depth (for precedence) and membership.
type graph struct {
	order    []string // groups in first-seen order
	line     map[string]int
	children map[string][]string
	edgeRef  map[[2]string]ref
	broken   map[[2]string]bool // edges closing a cycle, ignored after reporting
	direct   map[string][]string
	hostIn   map[string][]string // host -> groups listing it directly, in first-listed order
	vars     map[string]*settings
	priority map[string]int
	depthOf  map[string]int
}

func newGraph() *graph {
	return &graph{
		line: map[string]int{}, children: map[string][]string{}, edgeRef: map[[2]string]ref{},
		broken: map[[2]string]bool{}, direct: map[string][]string{}, hostIn: map[string][]string{}, vars: map[string]*settings{},
		priority: map[string]int{},
	}
}

func (g *graph) add(name string, line int) {
	if _, ok := g.line[name]; !ok {
		g.line[name] = line
		g.order = append(g.order, name)
	}
}

func (g *graph) has(name string) bool { _, ok := g.line[name]; return ok }

func (g *graph) addChild(parent, child string, r ref) {
	e := [2]string{parent, child}
	if _, ok := g.edgeRef[e]; ok {
		return
	}
	g.edgeRef[e] = r
	g.children[parent] = append(g.children[parent], child)
}

func (g *graph) addHost(group, host string) {
	if slices.Contains(g.hostIn[host], group) {
		return
	}
	g.direct[group] = append(g.direct[group], host)
	g.hostIn[host] = append(g.hostIn[host], group)
}

func (g *graph) addVars(group string, s *settings) {
	if g.vars[group] == nil {
		g.vars[group] = &settings{}
	}
	g.vars[group].overlay(s)
}

// findCycles reports every edge that closes a cycle and marks it broken so
// that the later walks terminate.
func (g *graph) findCycles(p *parser) {
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(string)
	visit = func(n string) {
		state[n] = active
		stack = append(stack, n)
		for _, c := range g.children[n] {
			e := [2]string{n, c}
			switch state[c] {
			case active:
				i := len(stack) - 1
				for stack[i] != c {
					i--
				}
				path := append(append([]string{}, stack[i:]...), c)
				r := g.edgeRef[e]
				const hint = "a group cannot be its own ancestor; remove one of these children entries"
				if n == c {
					p.c.add(r.line, r.field, hint, "group %q lists itself as a child", c)
				} else {
					p.c.add(r.line, r.field, hint, "group %q contains itself: %s", c, strings.Join(path, " -> "))
				}
				g.broken[e] = true
			case unseen:
				visit(c)
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
	}
	for _, n := range g.order {
		if state[n] == unseen {
			visit(n)
		}
	}
}

// parents returns the groups that list n as a child (cycle edges excluded).
func (g *graph) parents(n string) []string {
	var out []string
	for _, p := range g.order {
		for _, c := range g.children[p] {
			if c == n && !g.broken[[2]string{p, c}] {
				out = append(out, p)
			}
		}
	}
	return out
}

// depth is the longest chain of parents above a group (a root is 0), as
// Ansible counts it for variable precedence.
func (g *graph) depth(n string) int {
	if g.depthOf == nil {
		g.depthOf = map[string]int{}
	}
	if d, ok := g.depthOf[n]; ok {
		return d
	}
	g.depthOf[n] = 0 // guards against cycles that slipped through
	d := 0
	for _, p := range g.parents(n) {
		if pd := g.depth(p) + 1; pd > d {
			d = pd
		}
	}
	g.depthOf[n] = d
	return d
}

// ancestors returns n and every group above it.
func (g *graph) ancestors(n string, into map[string]bool) {
	if into[n] {
		return
	}
	into[n] = true
	for _, p := range g.parents(n) {
		g.ancestors(p, into)
	}
}

// groupsOf returns every group a host belongs to, directly or through
// children, in precedence order: lower depth first, then
// ansible_group_priority, then name.
func (g *graph) groupsOf(host string) []string {
	set := map[string]bool{}
	for _, grp := range g.hostIn[host] {
		g.ancestors(grp, set)
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if da, db := g.depth(a), g.depth(b); da != db {
			return da < db
		}
		if pa, pb := g.priority[a], g.priority[b]; pa != pb {
			return pa < pb
		}
		return a < b
	})
	return out
}

// members maps every group to its hosts (transitively), in host order.
func (g *graph) members(hosts []Host) map[string][]string {
	out := make(map[string][]string, len(g.order))
	for _, n := range g.order {
		out[n] = []string{}
	}
	for _, h := range hosts {
		for _, grp := range h.Groups {
			out[grp] = append(out[grp], h.Name)
		}
	}
	return out
}
