//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaudit/kaudit/test/testfleet"
)

const socketsHelperEnv = "KAUDIT_E2E_SOCKETS"

// socketsHelper runs in a copy of the test binary started inside a host's
// network namespace: it opens N listening TCP sockets on ADDR, ports
// BASE..BASE+N-1, prints "ready N", and holds them until stdin closes.
func socketsHelper() {
	n, _ := strconv.Atoi(os.Getenv(socketsHelperEnv))
	basePort, _ := strconv.Atoi(os.Getenv(socketsHelperEnv + "_BASE"))
	ip := net.ParseIP(os.Getenv(socketsHelperEnv + "_ADDR")).To4()
	if n < 1 || n > 60000 || basePort < 1 || basePort+n > 65536 || ip == nil {
		fmt.Fprintln(os.Stderr, "sockets helper: bad parameters")
		os.Exit(2)
	}
	// Raise the soft limit up to the hard one (no CAP_SYS_RESOURCE needed).
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Max < uint64(n+64) {
		fmt.Fprintf(os.Stderr, "sockets helper: RLIMIT_NOFILE hard limit %d < %d: %v\n", lim.Max, n+64, err)
		os.Exit(1)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintln(os.Stderr, "sockets helper: setrlimit:", err)
		os.Exit(1)
	}
	var addr [4]byte
	copy(addr[:], ip)
	for i := 0; i < n; i++ {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err == nil {
			_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
			err = syscall.Bind(fd, &syscall.SockaddrInet4{Port: basePort + i, Addr: addr})
		}
		if err == nil {
			err = syscall.Listen(fd, 16)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "sockets helper: socket %d: %v\n", i, err)
			os.Exit(1)
		}
	}
	fmt.Printf("ready %d\n", n)
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// manySockets opens n listening sockets on 127.0.0.1 inside h's network
// namespace, ports basePort.., held by helper processes (at most
// socketsPerHelper each: RLIMIT_NOFILE) until the test ends.
func manySockets(t *testing.T, h *testfleet.Host, n, basePort int) {
	t.Helper()
	start := time.Now()
	for i := 0; i < n; i += socketsPerHelper {
		startSocketsHelper(t, h, min(socketsPerHelper, n-i), basePort+i)
	}
	t.Logf("%s: %d listening sockets on 127.0.0.1:%d-%d in %v", h.Spec.Name, n, basePort, basePort+n-1, time.Since(start).Round(time.Millisecond))
}

const socketsPerHelper = 10000

func startSocketsHelper(t *testing.T, h *testfleet.Host, n, basePort int) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("nsenter", "--net=/run/netns/"+h.NS, "--", self)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
		socketsHelperEnv + "=" + strconv.Itoa(n),
		socketsHelperEnv + "_BASE=" + strconv.Itoa(basePort),
		socketsHelperEnv + "_ADDR=127.0.0.1"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill() // the helper we started, by PID
			<-done
		}
	})
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case line := <-ready:
		if strings.TrimSpace(line) != "ready "+strconv.Itoa(n) {
			t.Fatalf("sockets helper: %q; stderr: %s", line, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("sockets helper not ready after 60 s; stderr: %s", stderr.String())
	}
}
