package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

var colours = map[string]string{
	"kaudit": "#d62728", "bareloop": "#7f7f7f", "pssh": "#1f77b4",
	"pdsh": "#2ca02c", "clush": "#9467bd", "ansible": "#ff7f0e",
}

// The plot's size and margins.
const plotW, plotH, plotLeft, plotRight, plotTop, plotBottom = 720.0, 460.0, 70.0, 170.0, 30.0, 50.0

// axes maps N (log) and client CPU per host (log) to SVG coordinates.
type axes struct{ xlo, xhi, ylo, yhi float64 }

// newAxes spans the Ns and whole decades around every median client CPU.
func newAxes(d *data) axes {
	lo, hi := math.Inf(1), math.Inf(-1)
	for k := range d.runs {
		v := d.med(k, run.clientMS)
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0.1, 1
	}
	ylo, yhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if yhi == ylo {
		yhi++
	}
	xlo, xhi := math.Log10(float64(d.ns[0])), math.Log10(float64(d.ns[len(d.ns)-1]))
	if xhi == xlo {
		xlo, xhi = xlo-0.5, xhi+0.5
	}
	return axes{xlo, xhi, ylo, yhi}
}

func (a axes) px(n int) float64 {
	return plotLeft + (math.Log10(float64(n))-a.xlo)/(a.xhi-a.xlo)*(plotW-plotLeft-plotRight)
}

func (a axes) py(v float64) float64 {
	return plotTop + (a.yhi-math.Log10(v))/(a.yhi-a.ylo)*(plotH-plotTop-plotBottom)
}

// plot draws client CPU per host (log scale) against N (log scale), one
// line per tool and key-exchange mode (dashed: curve25519).
func plot(d *data) string {
	a := newAxes(d)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", plotW, plotH)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%.0f" y="18" font-size="14">client CPU per host (ms, log) vs hosts; dashed = curve25519-sha256 only</text>`+"\n", plotLeft)
	plotGrid(&b, d, a)
	row := 0
	for _, m := range d.modes {
		for _, t := range d.tools {
			if plotLine(&b, d, a, m, t, row) {
				row++
			}
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// plotGrid draws the decade lines, one line per N and the x axis label.
func plotGrid(b *strings.Builder, d *data, a axes) {
	const w, h, left, right, top, bottom = plotW, plotH, plotLeft, plotRight, plotTop, plotBottom
	for e := a.ylo; e <= a.yhi; e++ {
		y := a.py(math.Pow(10, e))
		fmt.Fprintf(b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.0f" y="%.1f" text-anchor="end">%g</text>`+"\n", left, w-right, y, y, left-6, y+4, math.Pow(10, e))
	}
	for _, n := range d.ns {
		x := a.px(n)
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="#ddd"/><text x="%.1f" y="%.0f" text-anchor="middle">%d</text>`+"\n", x, x, top, h-bottom, x, h-bottom+18, n)
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" text-anchor="middle">hosts (N)</text>`+"\n", (left+w-right)/2, h-12)
}

// plotLine draws tool t in mode m and its legend entry in legend row row;
// false when it has no point to draw.
func plotLine(b *strings.Builder, d *data, a axes, m, t string, row int) bool {
	const w, right, top = plotW, plotRight, plotTop
	var pts []string
	for _, n := range d.ns {
		if k := (key{m, n, t}); d.runs[k] != nil {
			if v := d.med(k, run.clientMS); v > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", a.px(n), a.py(v)))
			}
		}
	}
	if len(pts) == 0 {
		return false
	}
	dash := ""
	if m != d.modes[0] {
		dash = ` stroke-dasharray="6,4"`
	}
	c := colours[t]
	if c == "" {
		c = "black"
	}
	fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", c, dash, strings.Join(pts, " "))
	ly := top + 10 + float64(row)*18
	fmt.Fprintf(b, `<line x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f" stroke="%s" stroke-width="2"%s/><text x="%.0f" y="%.0f">%s</text>`+"\n",
		w-right+10, w-right+40, ly, ly, c, dash, w-right+46, ly+4, html.EscapeString(t+" ("+m+")"))
	return true
}
