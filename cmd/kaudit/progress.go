package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/internal/termui"
)

// scanProgress draws one progress line on stderr while hosts are
// audited: done/total, hosts failed so far, elapsed time and, once a few
// hosts have finished, an ETA (termui.Progress). Nothing is drawn when
// stderr is not a terminal or with --quiet. Own code rather than a
// library: go-pretty's progress (already a dependency) shows an ETA from
// the first tick and has no failure count; the line itself is pure and
// tested in termui.
type scanProgress struct {
	mu      sync.Mutex
	tty     *os.File
	state   termui.Progress
	started time.Time
	stop    chan struct{}
	stopped chan struct{}
}

// progressInterval is how often the line is redrawn.
const progressInterval = 200 * time.Millisecond

func newProgress(stderr io.Writer, total int, quiet bool) *scanProgress {
	p := &scanProgress{state: termui.Progress{Total: total}, started: time.Now()}
	if u, ok := stderr.(interface{ Unwrap() io.Writer }); ok {
		stderr = u.Unwrap() // the sanitizing writer: the bar draws on the terminal itself
	}
	f, ok := stderr.(*os.File)
	if quiet || !ok || !termui.IsTerminal(f) || total == 0 {
		return p
	}
	p.tty, p.stop, p.stopped = f, make(chan struct{}), make(chan struct{})
	go p.loop()
	return p
}

func (p *scanProgress) loop() {
	defer close(p.stopped)
	t := time.NewTicker(progressInterval)
	defer t.Stop()
	for {
		p.draw()
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
	}
}

// draw rewrites the line in place (\r, then clear to the end of line).
func (p *scanProgress) draw() {
	width := 80
	if w, _, err := term.GetSize(int(p.tty.Fd())); err == nil && w > 0 {
		width = w
	}
	p.mu.Lock()
	st := p.state
	p.mu.Unlock()
	st.Elapsed = time.Since(p.started)
	fmt.Fprintf(p.tty, "\r%s\x1b[K", st.Line(width-1))
}

// done counts one finished host.
func (p *scanProgress) done(res audit.Result) {
	p.mu.Lock()
	p.state.Done++
	if res.Err != nil {
		p.state.Failed++
	}
	p.mu.Unlock()
}

// finish draws the final state and ends its line.
func (p *scanProgress) finish() {
	if p.tty == nil {
		return
	}
	close(p.stop)
	<-p.stopped
	p.draw()
	fmt.Fprintln(p.tty)
}
