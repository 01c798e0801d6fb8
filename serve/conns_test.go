package serve

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
)

// startServe runs s.Serve on a loopback port until the test ends.
func startServe(t *testing.T, s *Server, webConfig string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l, webConfig, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after its context ended")
		}
	})
	return l.Addr().String()
}

// keepAlive opens a connection, sends one request on it and reads the
// answer: a keep-alive connection the server then holds idle.
func keepAlive(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: kaudit\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_ = c.SetReadDeadline(time.Time{})
	return c
}

// closedByServer reports whether the server closed c within wait.
func closedByServer(c net.Conn, wait time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, err := c.Read(make([]byte, 1))
	return err == io.EOF || (err != nil && !isTimeout(err))
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestIdleConnectionsClosed (issue 34, row 8): keep-alive connections
// left idle are closed after Limits.Idle; before, 300 of them stayed open
// for as long as their clients liked.
func TestIdleConnectionsClosed(t *testing.T) {
	s := newTestServer(t, Options{Limits: Limits{Idle: 200 * time.Millisecond}})
	addr := startServe(t, s, "")
	var conns []net.Conn
	for range 5 {
		conns = append(conns, keepAlive(t, addr))
	}
	for i, c := range conns {
		if !closedByServer(c, 5*time.Second) {
			t.Errorf("idle connection %d still open 5 s after an idle timeout of 200 ms", i)
		}
	}
	waitOpen(t, s, 0)
}

// TestConnectionBound (issue 34, row 8): a flood of idle keep-alive
// connections holds at most Limits.MaxConns open files, and a scrape
// arriving at the bound is answered (idle connections make room).
func TestConnectionBound(t *testing.T) {
	const max = 8
	s := newTestServer(t, Options{Limits: Limits{MaxConns: max, Idle: time.Hour}})
	if err := s.ScanDone(fixture(t), Success); err != nil {
		t.Fatal(err)
	}
	addr := startServe(t, s, "")
	var flood []net.Conn
	for range max {
		flood = append(flood, keepAlive(t, addr))
	}
	if n := s.OpenConns(); n != max {
		t.Fatalf("%d connections open after %d keep-alive requests, want %d", n, max, max)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("a scrape at the connection bound: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("a scrape at the connection bound: %d", resp.StatusCode)
	}
	closed := 0
	for _, c := range flood {
		if closedByServer(c, 100*time.Millisecond) {
			closed++
		}
	}
	if closed == 0 {
		t.Error("no idle connection closed to make room for the scrape")
	}
	if n := s.OpenConns(); n > max {
		t.Errorf("%d connections open, the bound is %d", n, max)
	}
}

func waitOpen(t *testing.T, s *Server, want int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s.OpenConns() == want {
			return
		}
	}
	t.Errorf("%d connections open, want %d", s.OpenConns(), want)
}
