package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/test/simhost"
)

// lockedBuffer is stderr written by Serve and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveInventory writes a kaudit inventory of f's first n hosts.
func serveInventory(t *testing.T, path string, f *simhost.Fleet, n int) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "defaults:\n  user: kafka\n  use_agent: false\n  identity_files: [%s]\n  known_hosts: [%s]\n  connect_timeout: 2s\nhosts:\n", f.KeyFile, f.KnownHosts)
	for _, h := range f.Hosts[:n] {
		fmt.Fprintf(&b, "  %s: {address: 127.0.0.1, port: %d}\n", h.Name, h.Port)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

func scrapeServe(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within 20s", what)
}

// TestServe: pipeline.Serve over in-process SSH hosts: the first scan is
// served, a broken inventory is a failed reload that keeps the previous
// one, a fixed one is reloaded and scanned, a Reload scans again, and the
// end of the context stops Serve.
func TestServe(t *testing.T) {
	f := startFleet(t, []*simhost.Host{simhost.DemoFleet()[2], simhost.DemoFleet()[0]})
	dir := t.TempDir()
	inv := filepath.Join(dir, "inventory.yaml")
	serveInventory(t, inv, f, 2)
	var stderr lockedBuffer
	c := pipeline.Console{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Now: time.Now}
	addrc := make(chan net.Addr, 1)
	reload := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	health := freePort(t)
	j := pipeline.ServeJob{Fleet: pipeline.Fleet{Inventory: inv}, Interval: time.Hour, Listen: "127.0.0.1:0", HealthListen: health,
		StateDir: filepath.Join(dir, "state"), Reload: reload, WatchEvery: 20 * time.Millisecond,
		Listening: func(a net.Addr) { addrc <- a }, Version: "test"}
	go func() { done <- pipeline.Serve(ctx, c, j) }()
	var addr string
	select {
	case a := <-addrc:
		addr = a.String()
	case err := <-done:
		t.Fatalf("Serve: %v\n%s", err, stderr.String())
	}
	has := func(line string) func() bool {
		return func() bool { return strings.Contains(scrapeServe(t, addr), line+"\n") }
	}
	waitFor(t, "first scan", has(`kaudit_hosts{state="audited"} 2`))
	for path, want := range map[string]int{"/readyz": 200, "/healthz": 200, "/metrics": 404} {
		if code := httpCode(t, "http://"+health+path); code != want {
			t.Errorf("GET %s on --health-listen: %d, want %d", path, code, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "last-report.json")); err != nil {
		t.Errorf("state file: %v", err)
	}

	if err := os.WriteFile(inv, []byte("hosts: [not: valid\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "failed reload", has("kaudit_config_last_reload_successful 0"))
	if m := scrapeServe(t, addr); !strings.Contains(m, `kaudit_hosts{state="audited"} 2`+"\n") || !strings.Contains(m, `kaudit_scans_total{result="success"} 1`+"\n") {
		t.Errorf("a failed reload changed what is served:\n%s", m)
	}
	waitFor(t, "reload warning", func() bool {
		return strings.Contains(stderr.String(), "reload failed, still scanning the previous inventory")
	})

	serveInventory(t, inv, f, 1)
	waitFor(t, "reload and scan of the fixed inventory", has(`kaudit_hosts{state="audited"} 1`))
	if m := scrapeServe(t, addr); !strings.Contains(m, "kaudit_config_last_reload_successful 1\n") || !strings.Contains(m, `kaudit_scans_total{result="success"} 2`+"\n") {
		t.Errorf("after the fixed reload:\n%s", m)
	}

	reload <- struct{}{}
	waitFor(t, "scan on Reload", has(`kaudit_scans_total{result="success"} 3`))

	stopServe(t, cancel, done)
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Error("still listening after Serve returned")
	}
}

func TestServeStartErrors(t *testing.T) {
	f := startFleet(t, []*simhost.Host{simhost.DemoFleet()[2]})
	dir := t.TempDir()
	inv := filepath.Join(dir, "inventory.yaml")
	serveInventory(t, inv, f, 1)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	ok := pipeline.ServeJob{Fleet: pipeline.Fleet{Inventory: inv}, Interval: time.Minute, Listen: "127.0.0.1:0", WatchEvery: -1}
	for name, c := range map[string]struct {
		mod  func(*pipeline.ServeJob)
		want string
	}{
		"interval":         {func(j *pipeline.ServeJob) { j.Interval = 0 }, "--interval"},
		"jitter":           {func(j *pipeline.ServeJob) { j.Jitter = 0.9 }, "--jitter"},
		"stdin":            {func(j *pipeline.ServeJob) { j.Fleet.Inventory = "-" }, "not stdin"},
		"listen":           {func(j *pipeline.ServeJob) { j.Listen = "9874" }, "--listen"},
		"busy port":        {func(j *pipeline.ServeJob) { j.Listen = busy.Addr().String() }, "--listen " + busy.Addr().String()},
		"web config":       {func(j *pipeline.ServeJob) { j.WebConfigFile = filepath.Join(dir, "missing.yml") }, "--web.config.file"},
		"busy health port": {func(j *pipeline.ServeJob) { j.HealthListen = busy.Addr().String() }, "--health-listen " + busy.Addr().String()},
		"empty web config": {func(j *pipeline.ServeJob) { // issue 34, row 10: served without authentication
			j.WebConfigFile = filepath.Join(dir, "empty.yml")
			_ = os.WriteFile(j.WebConfigFile, nil, 0o600)
		}, "neither TLS"},
		"no inventory": {func(j *pipeline.ServeJob) { j.Fleet.Inventory = filepath.Join(dir, "missing.yaml") }, "missing.yaml"},
		"profile":      {func(j *pipeline.ServeJob) { j.ProfileFile = filepath.Join(dir, "missing-profile.yaml") }, "--profile"},
		"waivers":      {func(j *pipeline.ServeJob) { j.Waivers = filepath.Join(dir, "missing-waivers.yaml") }, "--waivers"},
	} {
		t.Run(name, func(t *testing.T) {
			j := ok
			c.mod(&j)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := pipeline.Serve(ctx, pipeline.Console{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Now: time.Now}, j)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Serve = %v, want an error with %q", err, c.want)
			}
		})
	}
}

// stopServe ends Serve's context and waits (10 s at most) for it to
// return without an error.
func stopServe(t *testing.T, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after its context ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

// freePort is a loopback address no one listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func httpCode(t *testing.T, url string) int {
	t.Helper()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(url)
	if err != nil {
		t.Errorf("GET %s: %v", url, err)
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
