package termui

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// Bar draws one progress line on a terminal while a fan-out runs:
// done/total, hosts failed so far, elapsed time and, once a few hosts
// have finished, an ETA (Progress.Line). Nothing is drawn when the
// stream is not a terminal, when quiet, or for no hosts. Own code rather
// than a library: go-pretty's progress (already a dependency) shows an
// ETA from the first tick and has no failure count.
type Bar struct {
	mu      sync.Mutex
	tty     *os.File
	state   Progress
	started time.Time
	stop    chan struct{}
	stopped chan struct{}
}

// barInterval is how often the line is redrawn.
const barInterval = 200 * time.Millisecond

// StartBar starts the bar for total hosts on w. A w that wraps another
// writer (Unwrap, as termsafe's sanitizing writer does) is unwrapped
// first: the bar draws on the terminal itself. Call Finish when done.
func StartBar(w io.Writer, total int, quiet bool) *Bar {
	p := &Bar{state: Progress{Total: total}, started: time.Now()}
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	if quiet || !ok || !IsTerminal(f) || total == 0 {
		return p
	}
	p.tty, p.stop, p.stopped = f, make(chan struct{}), make(chan struct{})
	go p.loop()
	return p
}

func (p *Bar) loop() {
	defer close(p.stopped)
	t := time.NewTicker(barInterval)
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
func (p *Bar) draw() {
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

// Done counts one finished host, failed or not.
func (p *Bar) Done(failed bool) {
	p.mu.Lock()
	p.state.Done++
	if failed {
		p.state.Failed++
	}
	p.mu.Unlock()
}

// Finish draws the final state and ends its line.
func (p *Bar) Finish() {
	if p.tty == nil {
		return
	}
	close(p.stop)
	<-p.stopped
	p.draw()
	fmt.Fprintln(p.tty)
}
