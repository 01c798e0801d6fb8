// Command peerplot turns bench/peers.sh's results.tsv into the markdown
// table (medians over rounds; every ratio is taken within one round, pair
// by pair, then the median of those ratios) and an SVG plot of client CPU
// per host against N.
//
//	peerplot -svg client-cpu.svg results.tsv > table.md
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
)

// run is one line of results.tsv.
type run struct {
	mode, tool            string
	n, round, ok, failed  int
	wall, user, sys, sshd float64
}

func (r run) clientMS() float64 { return (r.user + r.sys) * 1000 / float64(r.n) }
func (r run) sshdMS() float64   { return r.sshd * 1000 / float64(r.n) }

// key identifies a cell: one tool at one N in one key-exchange mode.
type key struct {
	mode string
	n    int
	tool string
}

func main() {
	svg := flag.String("svg", "", "write the plot to `FILE`")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: peerplot [-svg FILE] results.tsv")
		os.Exit(2)
	}
	runs, err := load(flag.Arg(0))
	if err != nil {
		fmt.Fprintf(os.Stderr, "peerplot: error: %v\n", err)
		os.Exit(1)
	}
	d := index(runs)
	writeTable(os.Stdout, d)
	writeTargets(os.Stdout, d)
	if *svg != "" {
		if err := os.WriteFile(*svg, []byte(plot(d)), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "peerplot: error: %v\n", err)
			os.Exit(1)
		}
	}
}

func load(path string) ([]run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.Comma = '\t'
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	var out []run
	for i, row := range rows {
		if i == 0 || len(row) != 10 {
			continue
		}
		num := func(j int) float64 { v, _ := strconv.ParseFloat(row[j], 64); return v }
		r := run{mode: row[0], tool: row[3], n: int(num(1)), round: int(num(2)), wall: num(4), user: num(5), sys: num(6),
			sshd: num(7), ok: int(num(8)), failed: int(num(9))}
		if r.n > 0 {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no runs", path)
	}
	return out, nil
}

// data holds the runs by cell and round.
type data struct {
	runs  map[key]map[int]run
	modes []string
	ns    []int
	tools []string
}

func index(runs []run) *data {
	d := &data{runs: map[key]map[int]run{}}
	for _, r := range runs {
		k := key{r.mode, r.n, r.tool}
		if d.runs[k] == nil {
			d.runs[k] = map[int]run{}
		}
		d.runs[k][r.round] = r
		if !slices.Contains(d.modes, r.mode) {
			d.modes = append(d.modes, r.mode)
		}
		if !slices.Contains(d.ns, r.n) {
			d.ns = append(d.ns, r.n)
		}
		if !slices.Contains(d.tools, r.tool) {
			d.tools = append(d.tools, r.tool)
		}
	}
	slices.Sort(d.ns)
	order := []string{"kaudit", "bareloop", "pssh", "pdsh", "clush", "ansible"}
	slices.SortStableFunc(d.tools, func(a, b string) int { return idx(order, a) - idx(order, b) })
	return d
}

func idx(list []string, s string) int {
	if i := slices.Index(list, s); i >= 0 {
		return i
	}
	return len(list)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// med is the median over rounds of f(run) for one cell.
func (d *data) med(k key, f func(run) float64) float64 {
	var v []float64
	for _, r := range d.runs[k] {
		v = append(v, f(r))
	}
	return median(v)
}

// ratio is the median over rounds of f(a)/f(b), a and b from the same round.
func (d *data) ratio(a, b key, f func(run) float64) (float64, bool) {
	var v []float64
	for round, ra := range d.runs[a] {
		if rb, ok := d.runs[b][round]; ok && f(rb) > 0 {
			v = append(v, f(ra)/f(rb))
		}
	}
	return median(v), len(v) > 0
}

func fmtRatio(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%.2f×", v)
}

func writeTable(w io.Writer, d *data) {
	fmt.Fprintln(w, "| kex | N | tool | client CPU ms/host | × bareloop | ÷ kaudit | sshd CPU ms/host | sshd × bareloop | wall s | failed |")
	fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, m := range d.modes {
		for _, n := range d.ns {
			for _, t := range d.tools {
				k := key{m, n, t}
				if d.runs[k] == nil {
					continue
				}
				bare, kd := key{m, n, "bareloop"}, key{m, n, "kaudit"}
				xb, okb := d.ratio(k, bare, run.clientMS)
				xk, okk := d.ratio(k, kd, run.clientMS)
				sb, oks := d.ratio(k, bare, run.sshdMS)
				fmt.Fprintf(w, "| %s | %d | %s | %.2f | %s | %s | %.2f | %s | %.1f | %.0f |\n", m, n, t,
					d.med(k, run.clientMS), fmtRatio(xb, okb), fmtRatio(xk, okk && t != "kaudit"),
					d.med(k, run.sshdMS), fmtRatio(sb, oks), d.med(k, func(r run) float64 { return r.wall }),
					d.max(k, func(r run) float64 { return float64(r.failed) }))
			}
		}
	}
	fmt.Fprintln(w)
}

func (d *data) max(k key, f func(run) float64) float64 {
	m := 0.0
	for _, r := range d.runs[k] {
		m = max(m, f(r))
	}
	return m
}

// target is one of issue 13's goals, checked at every N it can be.
type target struct {
	what   string
	a, b   string // tools: ratio a/b
	mode   string // "" = every mode
	sshd   bool
	atMost bool
	limit  float64
}

var targets = []target{
	{what: "kaudit client CPU ≤ 1.25× bareloop", a: "kaudit", b: "bareloop", atMost: true, limit: 1.25},
	{what: "pssh ≥ 30× kaudit's client CPU (OpenSSH default kex)", a: "pssh", b: "kaudit", mode: "default", limit: 30},
	{what: "pssh ≥ 15× kaudit's client CPU (equal kex)", a: "pssh", b: "kaudit", mode: "curve25519", limit: 15},
	{what: "ansible ≥ 100× kaudit's client CPU", a: "ansible", b: "kaudit", limit: 100},
	{what: "kaudit's sshd CPU (sshd + script) ≤ 2.5× bareloop's", a: "kaudit", b: "bareloop", sshd: true, atMost: true, limit: 2.5},
}

func writeTargets(w io.Writer, d *data) {
	fmt.Fprintln(w, "| target | kex | N | measured | met |")
	fmt.Fprintln(w, "|---|---|---:|---:|---|")
	for _, t := range targets {
		f := run.clientMS
		if t.sshd {
			f = run.sshdMS
		}
		for _, m := range d.modes {
			if t.mode != "" && t.mode != m {
				continue
			}
			for _, n := range d.ns {
				v, ok := d.ratio(key{m, n, t.a}, key{m, n, t.b}, f)
				if !ok {
					continue
				}
				met := v >= t.limit
				if t.atMost {
					met = v <= t.limit
				}
				fmt.Fprintf(w, "| %s | %s | %d | %.2f× | %s |\n", t.what, m, n, v, map[bool]string{true: "yes", false: "**no**"}[met])
			}
		}
	}
}
