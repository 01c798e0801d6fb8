// Package serve is kaudit serve's exporter: the last report and the
// scans' counters kept in memory (and the report in a state directory),
// served over HTTP as Prometheus metrics, JSON, HTML and an index page.
// It never scans: Run's loop calls back the scan it is given
// (pipeline.Serve's), one at a time, and hands each report here
// (ScanDone); a scrape reads what was rendered when the report arrived
// and returns at once, during a scan too.
package serve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/atomicfile"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/report"
)

// StateFile is the name of the last report in the state directory: a
// JSON report, the schema of kaudit scan -f json.
const StateFile = "last-report.json"

// Results of a scan, the values of kaudit_scans_total's result label.
const (
	Success     = "success"     // every host was tried; the report is served
	Interrupted = "interrupted" // stopped before its end (SIGTERM, reload): not served
	Failed      = "error"       // could not run (inventory, known_hosts, profile): not served
)

var results = []string{Success, Interrupted, Failed}

// Waiver is a waiver's expiry, for kaudit_waiver_expiry_timestamp_seconds.
type Waiver struct {
	Rule    string
	Where   string    // FILE:LINE of the waiver
	Expires time.Time // midnight UTC after its last valid day
}

// Options configure a Server.
type Options struct {
	StateDir  string // "": the report is not kept between restarts
	HostRules bool   // per host × rule series (report.MetricOptions.HostRules)
	Version   string // kaudit_build_info's version
	Now       func() time.Time
	Limits    Limits // the HTTP side's connections and timeouts (defaults when zero)
	// MaxStateBytes bounds the state file LoadState reads (0: any size;
	// StateLimit gives one for a fleet).
	MaxStateBytes int64
	// SpoolDir is where the facts of the state file's report are spooled
	// (report.Spool; "" the system's temporary directory).
	SpoolDir string
}

// StateLimit is the largest state file a fleet of hosts may leave: a
// JSON report takes ≈ 32 KB a host with its facts (the simulated fleet);
// 256 KiB a host and 16 MiB more leave room for hosts with many
// connections, and refuse a file that is no report of this fleet before
// it is read (issue 34, row 10: 300 MB took 330 MB of RSS to read).
func StateLimit(hosts int) int64 { return 16<<20 + int64(hosts)*256<<10 }

// Server holds what is served. Its methods are safe for concurrent use.
type Server struct {
	o Options

	mu          sync.RWMutex
	cur         *published     // nil before the first report
	htmlMu      sync.Mutex     // one HTML render at a time
	releases    sync.WaitGroup // releases of replaced reports in progress
	scanning    bool
	scans       map[string]float64
	sshErrors   map[facts.ErrorKind]float64
	lastSuccess time.Time
	reloadOK    bool
	waivers     []Waiver
	lastAudited map[string]time.Time
	conns       *connLimiter // Serve's listener, nil before it
	// stateWriteErrors counts reports not written to the state file.
	stateWriteErrors float64
}

// published is a report as served: held once (its facts spooled to disk
// when the scan spooled them, report.Spool), its metrics rendered when it
// arrived; JSON and HTML are rendered from it per request, one render at
// a time for HTML (which reads every host's facts back at once), so a
// report is in memory once, not once per format, and a scrape never
// renders.
type published struct {
	r         *report.Report
	metrics   []byte
	fromState bool // loaded from the state directory at start-up, no scan since

	use    sync.RWMutex // read-held by each render of r, held by its release
	closed bool         // released: r can no longer be rendered (under use)
}

// New is a Server with no report yet.
func New(o Options) *Server {
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Server{o: o, scans: map[string]float64{}, sshErrors: map[facts.ErrorKind]float64{}, reloadOK: true, lastAudited: map[string]time.Time{}}
	for _, r := range results {
		s.scans[r] = 0
	}
	return s
}

// StatePath is the state file's path, "" without a state directory.
func (s *Server) StatePath() string {
	if s.o.StateDir == "" {
		return ""
	}
	return filepath.Join(s.o.StateDir, StateFile)
}

// LoadState serves the report a previous run left in the state directory,
// marked as loaded from it (kaudit_report_from_state, the index page,
// /readyz) until a scan replaces it. No file is not an error; a file that
// cannot be read or is not a report is (the caller warns and goes on
// without it).
func (s *Server) LoadState() error {
	path := s.StatePath()
	if path == "" {
		return nil
	}
	r, err := report.LoadLimited(path, s.o.MaxStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state file %s is not used (a new scan will replace it): %v", path, err)
	}
	spool(r, s.o.SpoolDir)
	compact(r)
	p, err := s.render(r, true)
	if err != nil {
		r.Close()
		return fmt.Errorf("state file %s: %v", path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		s.cur = p
		s.lastSuccess = r.StartedAt.Add(time.Duration(r.DurationMS) * time.Millisecond)
		for _, h := range r.Hosts { // a host unreachable at the next scan keeps this time
			if _, seen := s.lastAudited[h.Name]; h.Error == nil && !seen {
				s.lastAudited[h.Name] = r.StartedAt
			}
		}
		return nil
	}
	r.Close() // a scan was served first
	return nil
}

// spool moves the facts of r's hosts to a spool in dir, as a scan does
// (pipeline.Config.SpoolFacts): a report loaded from the state file is
// then held as a scanned one is. Without a spool, or for a host whose
// facts cannot be written, they stay in memory.
func spool(r *report.Report, dir string) {
	sp, err := report.NewSpool(dir)
	if err != nil {
		return
	}
	used := false
	for i := range r.Hosts {
		h := &r.Hosts[i]
		if h.Facts == nil {
			continue
		}
		if ref, err := sp.Put(h.Facts); err == nil {
			h.Facts, h.Spooled, used = nil, ref, true
		}
	}
	if !used {
		sp.Close()
	}
}

// Report is the report served (nil: none yet) and whether it was loaded
// from the state directory.
func (s *Server) Report() (*report.Report, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.cur == nil {
		return nil, false
	}
	return s.cur.r, s.cur.fromState
}

// ScanStarted marks a scan as running (kaudit_scan_running).
func (s *Server) ScanStarted() {
	s.mu.Lock()
	s.scanning = true
	s.mu.Unlock()
}

// LocalFault is ScanDone's error for a scan some of whose hosts failed
// on kaudit's side (facts.KindLocal: out of open files, memory or disk):
// such a scan is counted as an error, not served, and its hosts' errors
// are not counted against them.
type LocalFault struct {
	Hosts int    // hosts that failed so
	First string // the first one's error
}

func (e *LocalFault) Error() string {
	return fmt.Sprintf("%d hosts failed on kaudit's side, not theirs (first: %s): the scan is not served", e.Hosts, e.First)
}

// localFault is r's LocalFault, nil when it has none.
func localFault(r *report.Report) *LocalFault {
	var lf *LocalFault
	for _, h := range r.Hosts {
		if h.Error != nil && h.Error.Kind == facts.KindLocal {
			if lf == nil {
				lf = &LocalFault{First: h.Name + ": " + h.Error.Message}
			}
			lf.Hosts++
		}
	}
	return lf
}

// ScanDone records a scan's end: its result (Success, Interrupted,
// Failed) and, for any but Failed, its report, whose host errors are
// counted by kind. ScanDone owns r: one it does not serve is closed
// (report.Close), and so is the one it replaces. A successful scan's report is written to the state
// file, then served; an error writing it is returned (the report is
// served all the same, kaudit_state_write_errors_total counts it). A
// report with a host that failed on kaudit's side is Failed, returned as
// a *LocalFault.
func (s *Server) ScanDone(r *report.Report, result string) error {
	var p *published
	var err, perr error
	if result == Success && r != nil {
		if lf := localFault(r); lf != nil {
			result, err = Failed, lf
		}
	}
	if result == Success && r != nil {
		s.mu.Lock()
		for _, h := range r.Hosts {
			if h.Error == nil {
				s.lastAudited[h.Name] = r.StartedAt
			}
		}
		s.mu.Unlock()
		compact(r)
		if p, err = s.render(r, false); err != nil {
			result = Failed
		} else {
			perr = s.persist(p)
		}
	}
	old := s.swap(p, r, result, perr != nil)
	s.release(old)
	if err != nil {
		return err
	}
	return perr
}

// swap records a scan's result under s.mu and serves p when it is not
// nil; it returns what is to be released: the report p replaces, or r
// when it is not served.
func (s *Server) swap(p *published, r *report.Report, result string, writeFailed bool) *published {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scanning = false
	s.scans[result]++
	if writeFailed {
		s.stateWriteErrors++
	}
	if r != nil && result != Failed {
		for _, h := range r.Hosts {
			if h.Error != nil {
				s.sshErrors[h.Error.Kind]++
			}
		}
	}
	var old *published
	if p != nil {
		old, s.cur = s.cur, p
		s.lastSuccess = s.o.Now()
	} else if r != nil {
		old = &published{r: r} // not served
	}
	return old
}

// release frees p's report (its facts spool) once no render reads it,
// then gives the memory of the scan it came from back to the system:
// between scans kaudit serve holds the served report, not the last
// scan's garbage. Unless a render still reads p, this is done before
// release returns (before the scan's "scan done" line), else by a
// goroutine when the render ends.
func (s *Server) release(p *published) {
	if p == nil {
		debug.FreeOSMemory()
		return
	}
	if p.use.TryLock() {
		p.close()
		debug.FreeOSMemory()
		return
	}
	s.releases.Add(1)
	go func() {
		defer s.releases.Done()
		p.use.Lock()
		p.close()
		debug.FreeOSMemory()
	}()
}

// close closes p's report; the caller holds p.use, which close unlocks.
func (p *published) close() {
	p.closed = true
	_ = p.r.Close()
	p.use.Unlock()
}

// reading is the served report, read-held for a render (nil before the
// first): the caller calls done when it has rendered it.
func (s *Server) reading() (p *published, done func()) {
	for {
		p, _ = s.snapshot()
		if p == nil {
			return nil, func() {}
		}
		p.use.RLock()
		if !p.closed {
			return p, p.use.RUnlock
		}
		p.use.RUnlock() // replaced and released meanwhile: take the new one
	}
}

// SetReload records whether the last reload of the inventory, profile
// and waivers worked (kaudit_config_last_reload_successful).
func (s *Server) SetReload(ok bool) {
	s.mu.Lock()
	s.reloadOK = ok
	s.mu.Unlock()
}

// SetWaivers sets the waivers whose expiry is exported.
func (s *Server) SetWaivers(ws []Waiver) {
	s.mu.Lock()
	s.waivers = ws
	s.mu.Unlock()
}

// render is r as served: its metrics, rendered once.
func (s *Server) render(r *report.Report, fromState bool) (*published, error) {
	var m bytes.Buffer
	s.mu.RLock()
	audited := make(map[string]time.Time, len(s.lastAudited))
	for k, v := range s.lastAudited {
		audited[k] = v
	}
	s.mu.RUnlock()
	if fromState {
		for _, h := range r.Hosts {
			if h.Error == nil {
				audited[h.Name] = r.StartedAt
			}
		}
	}
	o := report.MetricOptions{HostRules: s.o.HostRules, LastAudited: func(host string) (time.Time, bool) {
		t, ok := audited[host]
		return t, ok
	}}
	if err := report.WriteMetrics(&m, r, o); err != nil {
		return nil, err
	}
	// A copy of the bytes alone: the buffer grew by doubling (at 10,000
	// hosts its spare capacity held ≈ 4 MB).
	return &published{r: r, metrics: bytes.Clone(m.Bytes()), fromState: fromState}, nil
}

// persist writes p's JSON report to the state file, atomically.
func (s *Server) persist(p *published) error {
	path := s.StatePath()
	if path == "" {
		return nil
	}
	return atomicfile.Write(path, 0o600, func(w io.Writer) error { return report.Render(w, "json", p.r, report.Options{}) })
}

// goVersion is the Go release kaudit was built with.
var goVersion = runtime.Version()

// statePermissionsHint is what to do about a state directory kaudit
// cannot create or write.
const statePermissionsHint = "give a directory kaudit may write (systemd: StateDirectory=kaudit)"

// MakeStateDir creates dir (mode 0700) if needed.
func MakeStateDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return located.Hint(fmt.Errorf("--state-dir %s: %v", dir, err), statePermissionsHint)
	}
	return nil
}
