package serve

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaudit/kaudit/report"
)

// lockedBuf is the loop's log, read by the test while Run writes it.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Run scans at once, hands each report to the server, scans again after a
// reload that worked and not after one that failed, and returns nil when
// ctx ends.
func TestLoopScansReloadsAndStops(t *testing.T) {
	srv := New(Options{})
	scans := make(chan struct{}, 10)
	refreshErr := make(chan error, 1)
	reload := make(chan struct{})
	var log lockedBuf
	var warnings []string
	var mu sync.Mutex
	l := Loop{
		Listen: "127.0.0.1:0", Hosts: 1, Interval: time.Hour, Reload: reload, WatchEvery: -1,
		Scan: func(ctx context.Context) (*report.Report, error) {
			scans <- struct{}{}
			r := fixture(t)
			report.Summarize(r)
			return r, nil
		},
		Refresh: func(context.Context) error { return <-refreshErr },
		Log:     &log,
		Warn:    func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() },
		Now:     time.Now,
	}
	bound := make(chan net.Addr, 1)
	l.Listening = func(a net.Addr) { bound <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, srv, l) }()
	<-bound
	waitScan := func(what string) {
		t.Helper()
		select {
		case <-scans:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no scan", what)
		}
	}
	waitScan("start")
	refreshErr <- errors.New("inventory.yaml:3: bad")
	reload <- struct{}{}
	refreshErr <- nil // the next reload works
	reload <- struct{}{}
	waitScan("reload")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(scans) != 0 {
		t.Errorf("%d more scans: a failed reload ran one", len(scans))
	}
	if r, _ := srv.Report(); r == nil {
		t.Error("no report served")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "reload failed, still scanning the previous inventory: inventory.yaml:3: bad") {
		t.Errorf("warnings %q", warnings)
	}
	if got := strings.Count(log.String(), "kaudit serve: scan done in"); got != 2 {
		t.Errorf("%d scans said done, want 2:\n%s", got, log.String())
	}
}

// A scan that could not run is counted as failed and nothing is served.
func TestLoopScanError(t *testing.T) {
	srv := New(Options{})
	var warned []string
	l := Loop{Log: &lockedBuf{}, Warn: func(s string) { warned = append(warned, s) },
		Scan: func(context.Context) (*report.Report, error) { return nil, errors.New("known_hosts: no key") }}
	l.scan(context.Background(), srv)
	if r, _ := srv.Report(); r != nil || srv.scans[Failed] != 1 {
		t.Errorf("report %v, failed scans %v", r, srv.scans[Failed])
	}
	if len(warned) != 1 || warned[0] != "scan could not run: known_hosts: no key" {
		t.Errorf("warned %q", warned)
	}
}
