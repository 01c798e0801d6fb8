package serve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// TestHealthListenerWithoutAuth: with basic auth on the main listener,
// the kubelet's probes (no credentials) get 401 there (issue 34, row 11:
// the shipped probes failed) and their answers on the health listener,
// which serves nothing else.
func TestHealthListenerWithoutAuth(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "basic_auth_users:\n  prometheus: %s\n", hash), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, Options{})
	main, health := listen(t), listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	done := make(chan error, 2)
	go func() { done <- s.Serve(ctx, main, cfg, logger) }()
	go func() { done <- s.ServeHealth(ctx, health, logger) }()
	defer func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("after the context ended: %v", err)
			}
		}
	}()

	get := func(l net.Listener, path string) int {
		c := &http.Client{Timeout: 5 * time.Second}
		for range 50 { // the servers start in their goroutines
			resp, err := c.Get("http://" + l.Addr().String() + path)
			if err == nil {
				resp.Body.Close()
				return resp.StatusCode
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("GET %s: no answer", path)
		return 0
	}
	for _, tc := range []struct {
		l    net.Listener
		path string
		want int
	}{
		{main, "/healthz", 401},
		{main, "/readyz", 401},
		{health, "/healthz", 200},
		{health, "/readyz", 503}, // no report yet
		{health, "/metrics", 404},
		{health, "/report.json", 404},
		{health, "/", 404},
	} {
		if got := get(tc.l, tc.path); got != tc.want {
			t.Errorf("GET %s on the %s listener: %d, want %d", tc.path, map[net.Listener]string{main: "main", health: "health"}[tc.l], got, tc.want)
		}
	}
	if err := s.ScanDone(fixture(t), Success); err != nil {
		t.Fatal(err)
	}
	if got := get(health, "/readyz"); got != 200 {
		t.Errorf("GET /readyz on the health listener after a scan: %d, want 200", got)
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}
