package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"gopkg.in/yaml.v3"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/report"
)

// Handler serves:
//
//	/             an index page: the served report's time and age, links
//	/metrics      Prometheus text format (kaudit's serve families, then report.WriteMetrics of the last report)
//	/healthz      200 while the process runs
//	/readyz       200 once a report is served (a scan finished, here or before a restart), else 503
//	/report.json  the last report, the schema of kaudit scan -f json (503 before the first)
//	/report.html  the last report as kaudit scan -f html renders it
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.Handle("GET /healthz", s.HealthHandler())
	mux.Handle("GET /readyz", s.HealthHandler())
	mux.HandleFunc("GET /report.json", s.reportJSON)
	mux.HandleFunc("GET /report.html", s.reportHTML)
	return mux
}

func text(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}

// current is the served report and the serve state, read together.
func (s *Server) snapshot() (p *published, scanning bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cur, s.scanning
}

func (s *Server) age(p *published) time.Duration {
	return s.o.Now().Sub(p.r.StartedAt).Truncate(time.Second)
}

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	p, _ := s.snapshot()
	if p == nil {
		text(w, http.StatusServiceUnavailable, "not ready: no report yet (the first scan is running)\n")
		return
	}
	from := "scanned by this process"
	if p.fromState {
		from = "loaded from the state file, no scan since the start"
	}
	text(w, http.StatusOK, fmt.Sprintf("ready: report of the scan started %s (%s ago), %s\n", p.r.StartedAt.UTC().Format(time.RFC3339), s.age(p), from))
}

// reportHeaders mark a report with its age.
func (s *Server) reportHeaders(w http.ResponseWriter, p *published) {
	w.Header().Set("Last-Modified", p.r.StartedAt.UTC().Format(http.TimeFormat))
	w.Header().Set("X-Kaudit-Report-Age-Seconds", strconv.FormatInt(int64(s.age(p)/time.Second), 10))
	w.Header().Set("X-Kaudit-Report-From-State", strconv.FormatBool(p.fromState))
}

func (s *Server) reportJSON(w http.ResponseWriter, _ *http.Request) {
	s.serveReport(w, "json", "application/json")
}

func (s *Server) reportHTML(w http.ResponseWriter, _ *http.Request) {
	s.htmlMu.Lock()
	defer s.htmlMu.Unlock()
	s.serveReport(w, "html", "text/html; charset=utf-8")
}

// serveReport renders the served report in format straight to w: 503
// before the first report, 500 when the render fails before its first
// byte (after it, the response is cut short).
func (s *Server) serveReport(w http.ResponseWriter, format, contentType string) {
	p, done := s.reading()
	defer done()
	if p == nil {
		text(w, http.StatusServiceUnavailable, "no report yet: the first scan is running\n")
		return
	}
	s.reportHeaders(w, p)
	w.Header().Set("Content-Type", contentType)
	cw := &countingWriter{w: w}
	if err := report.Render(cw, format, p.r, report.Options{}); err != nil && cw.n == 0 {
		text(w, http.StatusInternalServerError, "cannot render the report: "+err.Error()+"\n")
	}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// metrics writes the serve families, then the report's (rendered when it
// arrived): a scrape never waits for a scan.
func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) {
	var b bytes.Buffer
	if err := s.WriteMetrics(&b); err != nil {
		text(w, http.StatusInternalServerError, err.Error()+"\n")
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// WriteMetrics writes what /metrics serves.
func (s *Server) WriteMetrics(b *bytes.Buffer) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p := report.NewPromWriter(b)
	p.Family("kaudit_build_info", "gauge", "1, labelled with the version of kaudit serve and the Go release it was built with.")
	p.Sample("kaudit_build_info", 1, "version", s.o.Version, "goversion", goVersion)

	p.Family("kaudit_scans_total", "counter", "Scans kaudit serve ran since it started, by result: success (served), interrupted, error (could not run, or a host failed on kaudit's side: out of open files, memory or disk; not served).")
	for _, r := range results {
		p.Sample("kaudit_scans_total", s.scans[r], "result", r)
	}
	p.Family("kaudit_scan_running", "gauge", "1 while a scan runs (the metrics are those of the last finished scan).")
	p.Sample("kaudit_scan_running", b2f(s.scanning))
	p.Family("kaudit_last_scan_success_timestamp_seconds", "gauge", "End of the last successful scan, Unix seconds (one loaded from the state file: its end); 0 before any. Alert on its age.")
	p.Sample("kaudit_last_scan_success_timestamp_seconds", tsOrZero(s.lastSuccess))
	p.Family("kaudit_report_from_state", "gauge", "1 when the served report was loaded from the state file at start-up and no scan has finished since.")
	p.Sample("kaudit_report_from_state", b2f(s.cur != nil && s.cur.fromState))
	p.Family("kaudit_report_available", "gauge", "1 when a report is served (the families of the report follow), 0 before the first scan finishes.")
	p.Sample("kaudit_report_available", b2f(s.cur != nil))
	p.Family("kaudit_ssh_errors_total", "counter", "Hosts kaudit serve could not audit, summed over its scans, by error kind.")
	for _, k := range facts.ErrorKinds {
		p.Sample("kaudit_ssh_errors_total", s.sshErrors[k], "kind", string(k))
	}
	for k, v := range s.sshErrors {
		p.Sample("kaudit_ssh_errors_total", v, "kind", string(k)) // a kind not listed (already written ones are skipped)
	}
	p.Family("kaudit_state_write_errors_total", "counter", "Reports kaudit serve could not write to its state file (--state-dir): each was served, but a restart would serve an older one.")
	p.Sample("kaudit_state_write_errors_total", s.stateWriteErrors)
	p.Family("kaudit_config_last_reload_successful", "gauge", "1 when the last reload of the inventory, profile and waivers worked (a failed one keeps the previous).")
	p.Sample("kaudit_config_last_reload_successful", b2f(s.reloadOK))
	p.Family("kaudit_waiver_expiry_timestamp_seconds", "gauge", "When a waiver with an expiry stops applying, Unix seconds (the waiver file's FILE:LINE).")
	for _, wv := range s.waivers {
		if !wv.Expires.IsZero() {
			p.Sample("kaudit_waiver_expiry_timestamp_seconds", tsOrZero(wv.Expires), "rule", wv.Rule, "waiver", wv.Where)
		}
	}
	if err := p.Close(); err != nil {
		return err
	}
	if s.cur != nil {
		b.Write(s.cur.metrics)
	}
	return nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func tsOrZero(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMilli()) / 1e3
}

var indexPage = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kaudit serve</title></head>
<body><h1>kaudit serve</h1>
{{if .Report}}<p>Report of the scan started {{.Started}} ({{.Age}} ago){{if .FromState}}, loaded from the state file: no scan has finished since kaudit serve started{{end}}.
{{.Hosts}} hosts, {{.Audited}} audited, fleet score {{.Score}}.</p>
{{else}}<p>No report yet: the first scan is running.</p>{{end}}
{{if .Scanning}}<p>A scan is running.</p>{{end}}
<ul>
<li><a href="metrics">metrics</a></li>
<li><a href="report.html">report (HTML)</a></li>
<li><a href="report.json">report (JSON, the schema of kaudit scan -f json)</a></li>
<li><a href="healthz">healthz</a>, <a href="readyz">readyz</a></li>
</ul>
<p>kaudit {{.Version}}</p>
</body></html>
`))

func (s *Server) index(w http.ResponseWriter, _ *http.Request) {
	p, scanning := s.snapshot()
	v := struct {
		Report                bool
		Started, Age, Version string
		FromState, Scanning   bool
		Hosts, Audited, Score int
	}{Scanning: scanning, Version: s.o.Version}
	if p != nil {
		v.Report, v.FromState = true, p.fromState
		v.Started, v.Age = p.r.StartedAt.UTC().Format(time.RFC3339), s.age(p).String()
		v.Hosts, v.Audited, v.Score = p.r.Summary.Hosts, p.r.Summary.Audited, p.r.Summary.Score
	}
	var b bytes.Buffer
	if err := indexPage.Execute(&b, v); err != nil {
		text(w, http.StatusInternalServerError, err.Error()+"\n")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// WebConfig is what a --web.config.file turns on.
type WebConfig struct {
	TLS  bool // HTTPS (tls_server_config)
	Auth bool // basic auth (basic_auth_users)
}

// Scheme is the URL scheme served: https with TLS, else http.
func (w WebConfig) Scheme() string {
	if w.TLS {
		return "https"
	}
	return "http"
}

// ReadWebConfig validates a --web.config.file (the exporter toolkit's
// format: TLS, client certificates, basic auth with bcrypt hashes) and
// says what it turns on ("" is plain HTTP). A file that turns on neither
// TLS nor basic auth is refused: it would serve the fleet's report to
// anyone with no word (issue 34, row 10).
func ReadWebConfig(file string) (WebConfig, error) {
	if file == "" {
		return WebConfig{}, nil
	}
	if err := web.Validate(file); err != nil {
		return WebConfig{}, fmt.Errorf("--web.config.file %s: %v", file, err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return WebConfig{}, fmt.Errorf("--web.config.file %s: %v", file, err)
	}
	var c struct {
		TLS   web.TLSConfig     `yaml:"tls_server_config"`
		Users map[string]string `yaml:"basic_auth_users"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		return WebConfig{}, fmt.Errorf("--web.config.file %s: %v", file, err)
	}
	w := WebConfig{TLS: c.TLS.IsEnabled(), Auth: len(c.Users) > 0}
	if !w.TLS && !w.Auth {
		return w, located.Hint(fmt.Errorf("--web.config.file %s turns on neither TLS (tls_server_config) nor basic auth (basic_auth_users): kaudit serve would serve the report to anyone", file),
			"set tls_server_config or basic_auth_users in it, or leave --web.config.file out to serve plain HTTP on purpose")
	}
	return w, nil
}

// Serve serves s.Handler on l, with TLS and basic auth as the web
// configuration file says ("" for plain HTTP), until ctx ends; then it
// stops accepting and lets requests in flight finish (5 s at most). The
// connections and their time are bounded by the Options' Limits.
func (s *Server) Serve(ctx context.Context, l net.Listener, webConfig string, logger *slog.Logger) error {
	lim := s.o.Limits.orDefaults()
	cl := limitConns(l, lim.MaxConns)
	s.mu.Lock()
	s.conns = cl
	s.mu.Unlock()
	return serveUntil(ctx, cl, s.Handler(), lim, logger, func(srv *http.Server) error {
		return web.Serve(cl, srv, &web.FlagConfig{WebConfigFile: &webConfig, WebListenAddresses: &[]string{l.Addr().String()}, WebSystemdSocket: new(bool)}, logger)
	})
}

// serveUntil runs serve on an http.Server of h bounded by lim on cl,
// until ctx ends; then it stops accepting and lets requests in flight
// finish (5 s at most).
func serveUntil(ctx context.Context, cl *connLimiter, h http.Handler, lim Limits, logger *slog.Logger, serve func(*http.Server) error) error {
	srv := &http.Server{Handler: h, ConnState: cl.track, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	lim.apply(srv)
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		_ = cl.Close()
	}()
	err := serve(srv)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return err
}

// OpenConns is how many HTTP connections Serve holds open now.
func (s *Server) OpenConns() int {
	s.mu.RLock()
	cl := s.conns
	s.mu.RUnlock()
	if cl == nil {
		return 0
	}
	return cl.Open()
}
