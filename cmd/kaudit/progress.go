package main

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/jedib0t/go-pretty/v6/progress"

	"github.com/kaudit/kaudit/audit"
)

// scanProgress shows a progress bar on a terminal and nothing otherwise.
type scanProgress struct {
	mu      sync.Mutex
	pw      progress.Writer
	tracker *progress.Tracker
}

func newProgress(stderr io.Writer, total int) *scanProgress {
	p := &scanProgress{}
	f, ok := stderr.(*os.File)
	if !ok || !isTerminal(f) || total == 0 {
		return p
	}
	pw := progress.NewWriter()
	pw.SetOutputWriter(stderr)
	pw.SetAutoStop(false)
	pw.SetTrackerLength(30)
	pw.SetUpdateFrequency(100 * time.Millisecond)
	pw.SetStyle(progress.StyleDefault)
	pw.Style().Visibility.ETA = true
	pw.Style().Visibility.Value = true
	p.tracker = &progress.Tracker{Message: "scanning hosts", Total: int64(total), Units: progress.UnitsDefault}
	pw.AppendTracker(p.tracker)
	go pw.Render()
	p.pw = pw
	return p
}

func (p *scanProgress) done(audit.Result) {
	if p.tracker == nil {
		return
	}
	p.mu.Lock()
	p.tracker.Increment(1)
	p.mu.Unlock()
}

func (p *scanProgress) finish() {
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
