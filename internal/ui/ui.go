// Package ui is kaudit's terminal: whether a stream is one, a progress bar
// shown only there, and a yes/no question asked only there. Nothing here
// decides what to do with an answer; the CLI does.
package ui

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jedib0t/go-pretty/v6/progress"
	"golang.org/x/term"
)

// IsTerminal reports whether w is a file open on a terminal.
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Ask writes question and " [y/N] " to prompt and reads one line of in:
// yes for "y" or "yes" (any case). asked is false, and nothing is
// written, when in is not a terminal.
func Ask(in io.Reader, prompt io.Writer, question string) (yes, asked bool) {
	if !IsTerminal(in) {
		return false, false
	}
	fmt.Fprintf(prompt, "%s [y/N] ", question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", true
}

// Progress is a progress bar on a terminal, and nothing otherwise.
type Progress struct {
	mu      sync.Mutex
	pw      progress.Writer
	tracker *progress.Tracker
}

// NewProgress starts a bar of total steps labelled message on w when w is
// a terminal (and total > 0); Finish stops it.
func NewProgress(w io.Writer, total int, message string) *Progress {
	p := &Progress{}
	if !IsTerminal(w) || total == 0 {
		return p
	}
	pw := progress.NewWriter()
	pw.SetOutputWriter(w)
	pw.SetAutoStop(false)
	pw.SetTrackerLength(30)
	pw.SetUpdateFrequency(100 * time.Millisecond)
	pw.SetStyle(progress.StyleDefault)
	pw.Style().Visibility.ETA = true
	pw.Style().Visibility.Value = true
	p.tracker = &progress.Tracker{Message: message, Total: int64(total), Units: progress.UnitsDefault}
	pw.AppendTracker(p.tracker)
	go pw.Render()
	p.pw = pw
	return p
}

// Step advances the bar by one; safe for concurrent use.
func (p *Progress) Step() {
	if p.tracker == nil {
		return
	}
	p.mu.Lock()
	p.tracker.Increment(1)
	p.mu.Unlock()
}

// Finish draws the last frame and stops the bar.
func (p *Progress) Finish() {
	if p.pw == nil {
		return
	}
	p.tracker.MarkAsDone()
	time.Sleep(150 * time.Millisecond) // let the last frame render
	p.pw.Stop()
	for p.pw.IsRenderInProgress() {
		time.Sleep(10 * time.Millisecond)
	}
}
