package serve

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
)

// HealthMaxConns bounds the health listener's connections: a kubelet
// holds one or two.
const HealthMaxConns = 8

// HealthHandler serves /healthz and /readyz alone (as Handler serves
// them), for probes that cannot authenticate: the kubelet's httpGet
// probes carry no credentials of their own, and with --web.config.file
// every path of the main listener is behind its basic auth (the exporter
// toolkit exempts none). Neither says anything about the fleet beyond
// whether a report is served and when its scan started.
func (s *Server) HealthHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { text(w, http.StatusOK, "ok\n") })
	mux.HandleFunc("GET /readyz", s.readyz)
	return mux
}

// ServeHealth serves HealthHandler on l in plain HTTP until ctx ends,
// with the Options' timeouts and at most HealthMaxConns connections.
func (s *Server) ServeHealth(ctx context.Context, l net.Listener, logger *slog.Logger) error {
	lim := s.o.Limits.orDefaults()
	lim.MaxConns = HealthMaxConns
	cl := limitConns(l, lim.MaxConns)
	return serveUntil(ctx, cl, s.HealthHandler(), lim, logger, func(srv *http.Server) error { return srv.Serve(cl) })
}

// listenHealth binds --health-listen (nil when not asked for).
func listenHealth(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--health-listen %s: %v", addr, err)
	}
	return l, nil
}
