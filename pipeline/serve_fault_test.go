package pipeline_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/test/simhost"
)

// helperEnv runs TestServeHelperProcess as kaudit serve of the inventory
// it names, with the open-file limit of helperFilesEnv.
const (
	helperEnv      = "KAUDIT_TEST_SERVE_INVENTORY"
	helperFilesEnv = "KAUDIT_TEST_SERVE_NOFILE"
)

// TestServeHelperProcess is kaudit serve in a process of its own for
// TestServeLocalFault (its open-file limit lowered without touching the
// test binary's): it prints the address it listens on, then serves until
// killed.
func TestServeHelperProcess(t *testing.T) {
	inv := os.Getenv(helperEnv)
	if inv == "" {
		t.Skip("a helper process of TestServeLocalFault")
	}
	files, _ := strconv.ParseUint(os.Getenv(helperFilesEnv), 10, 64)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = files
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	c := pipeline.Console{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: os.Stderr, Now: time.Now}
	j := pipeline.ServeJob{Fleet: pipeline.Fleet{Inventory: inv}, Interval: time.Second, Listen: "127.0.0.1:0", WatchEvery: -1,
		Listening: func(a net.Addr) { fmt.Println("listening", a) }, Version: "test"}
	if err := pipeline.Serve(context.Background(), c, j); err != nil {
		t.Fatal(err)
	}
}

// TestServeLocalFault (issue 34, row 9): connections flooding kaudit
// serve take its open files while it scans. Before, every scan during the
// flood "succeeded" with no host audited, was served, and counted every
// reachable host unreachable; now each such scan is an error
// (kaudit_scans_total{result="error"}), the hosts are not counted, and the
// last good report stays served.
func TestServeLocalFault(t *testing.T) {
	f := startFleet(t, []*simhost.Host{simhost.DemoFleet()[2], simhost.DemoFleet()[0]})
	inv := filepath.Join(t.TempDir(), "inventory.yaml")
	serveInventory(t, inv, f, 2)
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+inv, helperFilesEnv+"=48")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening ") {
		t.Fatalf("helper: %q %v\n%s", line, err, stderr.String())
	}
	addr := strings.TrimSpace(strings.TrimPrefix(line, "listening "))
	has := func(line string) func() bool {
		return func() bool { return strings.Contains(scrapeServe(t, addr), line+"\n") }
	}
	waitFor(t, "first scan", has(`kaudit_hosts{state="audited"} 2`))

	scans := func() int {
		e := stderr.String()
		return strings.Count(e, "kaudit serve: scan done") + strings.Count(e, "scan failed") + strings.Count(e, "scan could not run")
	}
	before := scans()
	var flood []net.Conn
	for range 64 { // more than the helper's free files, fewer than serve's connection bound
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		flood = append(flood, c)
	}
	waitFor(t, "a whole scan during the flood", func() bool { return scans() >= before+2 })
	for _, c := range flood {
		c.Close()
	}
	var m string
	waitFor(t, "a scrape after the flood", func() bool {
		m = scrapeServeErr(addr)
		return m != ""
	})
	for _, want := range []string{`kaudit_hosts{state="audited"} 2`, `kaudit_ssh_errors_total{kind="unreachable"} 0`} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("after the flood, want %s:\n%s", want, grepLines(m, "kaudit_hosts{", "kaudit_ssh_errors_total", "kaudit_scans_total"))
		}
	}
	if strings.Contains(m, `kaudit_scans_total{result="error"} 0`+"\n") {
		t.Errorf("no scan counted as an error:\n%s", grepLines(m, "kaudit_scans_total"))
	}
	if !strings.Contains(stderr.String(), "on kaudit's side") {
		t.Errorf("serve's warning does not say the fault is kaudit's:\n%s", stderr.String())
	}
}

// scrapeServeErr is /metrics of addr, "" when it cannot be read.
func scrapeServeErr(addr string) string {
	c := &httpClient
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		return ""
	}
	return string(b)
}

// grepLines is the lines of s starting with any of prefixes.
func grepLines(s string, prefixes ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

var httpClient = http.Client{Timeout: 5 * time.Second}

// TestServeStartLineScheme (issue 34, row 11): with TLS on, the start-up
// line names https (before: http:// on a TLS listener).
func TestServeStartLineScheme(t *testing.T) {
	f := startFleet(t, []*simhost.Host{simhost.DemoFleet()[2]})
	dir := t.TempDir()
	inv := filepath.Join(dir, "inventory.yaml")
	serveInventory(t, inv, f, 1)
	web := filepath.Join(dir, "web.yml")
	writeSelfSigned(t, dir)
	if err := os.WriteFile(web, []byte("tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	c := pipeline.Console{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Now: time.Now}
	addrc := make(chan net.Addr, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	j := pipeline.ServeJob{Fleet: pipeline.Fleet{Inventory: inv}, Interval: time.Hour, Listen: "127.0.0.1:0", WebConfigFile: web,
		WatchEvery: -1, Listening: func(a net.Addr) { addrc <- a }, Version: "test"}
	go func() { done <- pipeline.Serve(ctx, c, j) }()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("Serve: %v\n%s", err, stderr.String())
	}
	if want := "listening on https://" + addr.String() + "/"; !strings.Contains(stderr.String(), want) {
		t.Errorf("start-up line: want %q in\n%s", want, stderr.String())
	}
	stopServe(t, cancel, done)
}

// writeSelfSigned writes tls.crt and tls.key (a self-signed certificate
// for 127.0.0.1) into dir.
func writeSelfSigned(t *testing.T, dir string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kaudit-test"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestServeSaysKeptConnections (issue 31): serve says how many SSH
// connections it keeps and, when not all, why (--keep-max here; before,
// all or none, and "none" at a 20,000 open-file limit for 10,000 hosts).
func TestServeSaysKeptConnections(t *testing.T) {
	f := startFleet(t, []*simhost.Host{simhost.DemoFleet()[2], simhost.DemoFleet()[0]})
	inv := filepath.Join(t.TempDir(), "inventory.yaml")
	serveInventory(t, inv, f, 2)
	for keepMax, want := range map[int]string{
		1: "keeps 1 of 2 SSH connections between scans (--keep-max 1",
		0: "keeps 2 of 2 SSH connections between scans\n",
	} {
		var stderr lockedBuffer
		c := pipeline.Console{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Now: time.Now}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		addrc := make(chan net.Addr, 1)
		j := pipeline.ServeJob{Fleet: pipeline.Fleet{Inventory: inv}, Interval: time.Hour, Listen: "127.0.0.1:0", WatchEvery: -1,
			KeepConnections: true, KeepMax: keepMax, Listening: func(a net.Addr) { addrc <- a }, Version: "test"}
		go func() { done <- pipeline.Serve(ctx, c, j) }()
		select {
		case <-addrc:
		case err := <-done:
			t.Fatalf("Serve: %v\n%s", err, stderr.String())
		}
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("--keep-max %d: want %q in\n%s", keepMax, want, stderr.String())
		}
		stopServe(t, cancel, done)
	}
}
