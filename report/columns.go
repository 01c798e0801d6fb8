package report

import (
	"strings"

	"github.com/kaudit/kaudit/internal/termui"
)

// A grid is a borderless terminal table fitted to a width: columns are
// separated by spaces (three when there is room, down to one), and when
// the rows are still too wide the shrinkable columns give way, widest
// first, down to their minimum, by wrapping onto more lines or by
// truncation with "…". Cells are laid out as plain text and coloured
// afterwards, line by line, so colour never changes the layout.
type grid struct {
	cols []column
	rows [][]cell
}

type column struct {
	head  string
	short string // header used when the grid is tight ("" = head)
	right bool   // numbers are right-aligned
	min   int    // narrowest the column may become; 0: it never shrinks
	wrap  bool   // a shrunk cell wraps onto more lines; else it is truncated
}

// cell is a cell's text (already made safe) and how to colour it.
type cell struct {
	text  string
	paint func(string) string
}

func plain(s string) cell { return cell{text: s} }

func (g *grid) add(cells ...cell) { g.rows = append(g.rows, cells) }

// widths fits the columns into width (0: no limit) and returns each
// column's width, the gap between columns, and whether the short headers
// are used. Shrinking takes one column
// at a time down by one, choosing the column that makes the fewest more
// rows wrap (a row that already wraps may wrap further at no cost), the
// widest among equals.
func (g *grid) widths(width int) ([]int, int, bool) {
	ws := g.natural(false)
	gaps := len(ws) - 1
	if width <= 0 {
		return ws, 2, false
	}
	for _, gap := range []int{3, 2} {
		if sum(ws)+gap*gaps <= width {
			return ws, gap, false
		}
	}
	ws = g.natural(true)
	for i, c := range g.cols { // a 1 MB cell is not shrunk a column at a time: no shrinkable column starts wider than 8 grids (a bound real tables stay under, so their layout is what the greedy below makes of their natural widths)
		if c.min > 0 && ws[i] > 8*width {
			ws[i] = max(c.min, 8*width)
		}
	}
	cw := g.cellWidths()
	for sum(ws)+gaps > width {
		best, bestCost := -1, 0
		for i, c := range g.cols {
			if c.min == 0 || ws[i] <= c.min {
				continue
			}
			cost := newWraps(cw, ws, i)
			if best < 0 || cost < bestCost || cost == bestCost && ws[i] > ws[best] {
				best, bestCost = i, cost
			}
		}
		if best < 0 {
			break // nothing left to shrink: wider than asked
		}
		ws[best]--
	}
	return ws, 1, true
}

// natural is each column's width when nothing is shrunk.
func (g *grid) natural(short bool) []int {
	ws := make([]int, len(g.cols))
	for i := range g.cols {
		ws[i] = termui.StringWidth(g.head(i, short))
		for _, row := range g.rows {
			ws[i] = max(ws[i], termui.StringWidth(row[i].text))
		}
	}
	return ws
}

// cellWidths is each cell's width, measured once.
func (g *grid) cellWidths() [][]int {
	cw := make([][]int, len(g.rows))
	for r, row := range g.rows {
		cw[r] = make([]int, len(row))
		for i, c := range row {
			cw[r][i] = termui.StringWidth(c.text)
		}
	}
	return cw
}

// newWraps counts the rows (their cells' widths cw) that do not wrap at
// ws but would if column i were one narrower.
func newWraps(cw [][]int, ws []int, i int) int {
	n := 0
	for _, row := range cw {
		if row[i] <= ws[i]-1 {
			continue
		}
		wraps := false
		for j, w := range row {
			wraps = wraps || w > ws[j]
		}
		if !wraps {
			n++
		}
	}
	return n
}

// head is column i's header, its short form when the grid is tight.
func (g *grid) head(i int, short bool) string {
	if short && g.cols[i].short != "" {
		return g.cols[i].short
	}
	return g.cols[i].head
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// render lays the grid out at width, header first.
func (g *grid) render(width int, p palette) string {
	ws, gap, short := g.widths(width)
	head := make([]cell, len(g.cols))
	for i := range g.cols {
		head[i] = cell{text: g.head(i, short), paint: p.bold}
	}
	var b strings.Builder
	for _, row := range append([][]cell{head}, g.rows...) {
		g.renderRow(&b, row, ws, gap)
	}
	return b.String()
}

func (g *grid) renderRow(b *strings.Builder, row []cell, ws []int, gap int) {
	lines := make([][]string, len(row))
	height := 1
	for i, c := range row {
		switch {
		case termui.StringWidth(c.text) <= ws[i]:
			lines[i] = []string{c.text}
		case g.cols[i].wrap:
			lines[i] = termui.Wrap(c.text, ws[i], 0)
		default:
			lines[i] = []string{termui.Truncate(c.text, ws[i])}
		}
		if len(lines[i]) > height {
			height = len(lines[i])
		}
	}
	sep := strings.Repeat(" ", gap)
	for l := 0; l < height; l++ {
		var line strings.Builder
		for i, c := range row {
			s := ""
			if l < len(lines[i]) {
				s = lines[i][l]
			}
			pad := strings.Repeat(" ", max(0, ws[i]-termui.StringWidth(s)))
			if c.paint != nil && s != "" {
				s = c.paint(s)
			}
			if i > 0 {
				line.WriteString(sep)
			}
			if g.cols[i].right {
				line.WriteString(pad + s)
			} else {
				line.WriteString(s + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}
