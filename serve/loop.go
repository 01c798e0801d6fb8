package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"time"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/report"
)

// Loop is kaudit serve's scan loop: what it is given to listen on, when
// to scan, and the callbacks that scan and reload (the scanning is the
// caller's: pipeline.Serve's).
type Loop struct {
	Listen, WebConfigFile string
	// HealthListen, when set, serves /healthz and /readyz alone there,
	// plain HTTP without authentication (ServeHealth).
	HealthListen string
	Listening    func(net.Addr) // called with the address once it is bound (nil: not)
	Hosts        int            // the fleet's size, for the line that says where it listens

	Interval time.Duration // between the starts of two scans
	Jitter   float64       // each wait is Interval ± up to Jitter × Interval
	// Reload receives a value when the fleet is to be read again, then a
	// scan run; Changed is asked every WatchEvery (0: 5 s; < 0: never)
	// whether the files it was read from changed (nil: never).
	Reload     <-chan struct{}
	WatchEvery time.Duration
	Changed    func() bool

	// Scan runs one scan: a report to serve (its waivers applied), or an
	// error when it could not run. Refresh reads the fleet again (an
	// error keeps the previous one).
	Scan    func(ctx context.Context) (*report.Report, error)
	Refresh func(ctx context.Context) error

	Log  io.Writer    // the loop's lines ("kaudit serve: …") and the HTTP side's warnings
	Warn func(string) // a warning
	Now  func() time.Time
}

// Run serves srv over HTTP on l.Listen and scans: at once, or when the
// report srv holds from its state file is Interval old; then every
// Interval (± Jitter), one scan at a time, and again at once after a
// reload. ctx ending interrupts a scan in progress, which is not served,
// and stops the server; Run then returns nil.
func Run(ctx context.Context, srv *Server, l Loop) error {
	web, err := ReadWebConfig(l.WebConfigFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", l.Listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %v", l.Listen, err)
	}
	hl, err := listenHealth(l.HealthListen)
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(l.Log, "kaudit serve: listening on %s://%s/ (%d hosts, a scan every %v)\n", web.Scheme(), ln.Addr(), l.Hosts, l.Interval)
	if hl != nil {
		fmt.Fprintf(l.Log, "kaudit serve: /healthz and /readyz also on http://%s/ (no authentication, nothing else served)\n", hl.Addr())
	}
	if l.Listening != nil {
		l.Listening(ln.Addr())
	}
	hctx, stopHTTP := context.WithCancel(context.Background())
	httpDone := make(chan error, 1)
	logger := slog.New(slog.NewTextHandler(l.Log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	go func() { httpDone <- srv.Serve(hctx, ln, l.WebConfigFile, logger) }()
	defer func() {
		stopHTTP()
		<-httpDone
	}()
	if hl != nil {
		healthDone := make(chan error, 1)
		go func() { healthDone <- srv.ServeHealth(hctx, hl, logger) }()
		defer func() { stopHTTP(); <-healthDone }()
	}
	tick, stopTick := l.ticker()
	defer stopTick()
	timer := time.NewTimer(l.firstWait(srv))
	defer timer.Stop()
	for {
		reload := false
		select {
		case <-ctx.Done():
			return nil
		case err := <-httpDone:
			httpDone <- err // for the deferred wait
			return fmt.Errorf("serving %s: %v", ln.Addr(), err)
		case <-l.Reload:
			reload = true
		case <-tick:
			if !l.Changed() {
				continue
			}
			fmt.Fprintln(l.Log, "kaudit serve: the inventory, profile, waiver or broker map file changed")
			reload = true
		case <-timer.C:
		}
		if reload && !l.refresh(ctx, srv) {
			continue
		}
		l.scan(ctx, srv)
		if ctx.Err() != nil {
			return nil
		}
		timer.Stop()
		select {
		case <-timer.C:
		default:
		}
		timer.Reset(jittered(l.Interval, l.Jitter))
	}
}

// firstWait is how long until the first scan: at once, unless srv serves
// a report from its state file younger than Interval.
func (l Loop) firstWait(srv *Server) time.Duration {
	r, fromState := srv.Report()
	if r == nil || !fromState {
		return 0
	}
	due := r.StartedAt.Add(l.Interval).Sub(l.Now())
	if due <= 0 {
		return 0
	}
	fmt.Fprintf(l.Log, "kaudit serve: serving the report of %s from the state file; next scan in %v\n", r.StartedAt.UTC().Format(time.RFC3339), due.Truncate(time.Second))
	return due
}

// ticker is the channel that asks Changed (nil: never) and its stop.
func (l Loop) ticker() (<-chan time.Time, func()) {
	watch := l.WatchEvery
	if watch == 0 {
		watch = 5 * time.Second
	}
	if watch < 0 || l.Changed == nil {
		return nil, func() {}
	}
	t := time.NewTicker(watch)
	return t.C, t.Stop
}

// refresh reads the fleet again; false: it failed, the previous one is
// still scanned (no scan now).
func (l Loop) refresh(ctx context.Context, srv *Server) bool {
	err := l.Refresh(ctx)
	srv.SetReload(err == nil)
	if err != nil {
		l.Warn(fmt.Sprintf("reload failed, still scanning the previous inventory: %v", err))
	}
	return err == nil
}

// scan runs one scan and hands its report to srv.
func (l Loop) scan(ctx context.Context, srv *Server) {
	srv.ScanStarted()
	start := time.Now()
	r, err := l.Scan(ctx)
	switch {
	case err != nil:
		l.Warn(fmt.Sprintf("scan could not run: %v", err))
		_ = srv.ScanDone(nil, Failed)
	case r.Interrupted:
		fmt.Fprintf(l.Log, "kaudit serve: scan interrupted after %v: not served\n", time.Since(start).Truncate(time.Millisecond))
		_ = srv.ScanDone(r, Interrupted)
	default:
		l.sayServed(srv.ScanDone(r, Success), r, time.Since(start))
	}
}

// sayServed says how a finished scan was taken: served, served but not kept
// in the state file, or failed on kaudit's side (LocalFault).
func (l Loop) sayServed(err error, r *report.Report, took time.Duration) {
	var lf *LocalFault
	if errors.As(err, &lf) {
		l.Warn(fmt.Sprintf("scan failed after %v, the previous report is still served: %v", took.Truncate(time.Millisecond), located.WithHint(lf.Error(), "raise kaudit's open-file limit (ulimit -n, LimitNOFILE=), or free memory or disk on this machine")))
		return
	}
	s := r.Summary
	fmt.Fprintf(l.Log, "kaudit serve: scan done in %v: %d hosts, %d audited, %d not, fleet score %d\n",
		took.Truncate(time.Millisecond), s.Hosts, s.Audited, s.Unreachable, s.Score)
	if err != nil {
		l.Warn(fmt.Sprintf("the report is served but not kept for a restart: %v", err))
	}
}

func jittered(d time.Duration, jitter float64) time.Duration {
	if jitter <= 0 {
		return d
	}
	return d + time.Duration((rand.Float64()*2-1)*jitter*float64(d))
}
