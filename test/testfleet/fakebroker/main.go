//go:build e2e

// Command fakebroker is the process helper of the end-to-end test fleet
// (package testfleet). It is built once per test run and has two roles:
//
//   - "kft-helper init SPEC.json": PID 1 of a test host's PID namespace. It
//     starts sshd and (optionally) the fake broker, reaps every orphan, and
//     stays alive when its children die (so a test can kill sshd and keep
//     the broker). SIGTERM stops the children and exits; the fleet normally
//     SIGKILLs it, which makes the kernel kill the whole PID namespace.
//
//   - invoked as ".../bin/java ... kafka.Kafka server.properties": a fake
//     Kafka broker. It opens the listening socket the way Kafka's
//     SocketServer does (SO_REUSEADDR, SO_RCVBUF before listen unless -1,
//     listen(backlog)), writes a Kafka-like server.log, and accepts and
//     holds connections. SIGUSR1 pauses accept() (so the accept queue fills
//     up), SIGUSR2 resumes it; the current state ("running"/"paused") is
//     written to $KFT_STATE once the accept loop has actually switched.
//
// Everything it needs comes from the KFT_* environment (the fleet is the
// single source of truth for the effective backlog, e.g. "50 before 3.2").
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	if filepath.Base(os.Args[0]) == "java" {
		broker()
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "init" {
		initMain(os.Args[2])
		return
	}
	fmt.Fprintln(os.Stderr, "usage: kft-helper init SPEC.json | java ... kafka.Kafka server.properties")
	os.Exit(2)
}

// ---------- init ----------

type procSpec struct {
	Path string   `json:"path"`
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
	Log  string   `json:"log"`
}

type initSpec struct {
	Procs []procSpec `json:"procs"`
}

func initMain(specPath string) {
	b, err := os.ReadFile(specPath)
	if err != nil {
		fatal("init: %v", err)
	}
	var spec initSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		fatal("init: %v", err)
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT)
	var pids []int
	for _, p := range spec.Procs {
		logf, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fatal("init: %v", err)
		}
		devnull, _ := os.Open(os.DevNull)
		proc, err := os.StartProcess(p.Path, p.Argv, &os.ProcAttr{
			Dir:   p.Dir,
			Env:   p.Env,
			Files: []*os.File{devnull, logf, logf},
			Sys:   &syscall.SysProcAttr{Setsid: true},
		})
		logf.Close()
		devnull.Close()
		if err != nil {
			fatal("init: start %s: %v", p.Path, err)
		}
		pids = append(pids, proc.Pid)
	}
	for s := range sigs {
		switch s {
		case syscall.SIGCHLD:
			for {
				var ws syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		default:
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGTERM)
			}
			time.Sleep(200 * time.Millisecond)
			os.Exit(0)
		}
	}
}

// ---------- fake broker ----------

func broker() {
	port := envInt("KFT_PORT", 9092)
	backlog := envInt("KFT_BACKLOG", 50)
	rcvbuf := envInt("KFT_RCVBUF", 102400)
	state := os.Getenv("KFT_STATE")
	logPath := os.Getenv("KFT_LOG")
	version := os.Getenv("KFT_VERSION")
	v4only := os.Getenv("KFT_IPV4_ONLY") == "1"
	if n := envInt("KFT_NOFILE", 0); n > 0 {
		lim := syscall.Rlimit{Cur: uint64(n), Max: uint64(n)}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			fatal("broker: setrlimit RLIMIT_NOFILE %d: %v", n, err)
		}
	}

	var logf *os.File
	if logPath != "" {
		if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err == nil {
			logf, _ = os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		}
	}
	logLine := func(format string, a ...any) {
		if logf == nil {
			return
		}
		ts := time.Now().Format("2006-01-02 15:04:05,000")
		fmt.Fprintf(logf, "["+ts+"] "+format+"\n", a...)
	}
	if dump := os.Getenv("KFT_CONFIG_DUMP"); dump != "" {
		logLine("INFO KafkaConfig values: \n%s (kafka.server.KafkaConfig)", dump)
	}

	fd, err := listenSocket(port, backlog, rcvbuf, v4only)
	if err != nil {
		logLine("ERROR [KafkaServer id=0] Fatal error during KafkaServer startup. Prepare to shutdown (kafka.server.KafkaServer)\n%v", err)
		fatal("fakebroker: %v", err)
	}
	f := os.NewFile(uintptr(fd), "listener")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		fatal("fakebroker: %v", err)
	}
	tl := ln.(*net.TCPListener)
	logLine("INFO Kafka version: %s (org.apache.kafka.common.utils.AppInfoParser)", version)
	logLine("INFO [KafkaServer id=0] started (kafka.server.KafkaServer)")
	if os.Getenv("KFT_KAFKA") == "1" {
		serveKafka(tl, port, logLine)
		return
	}

	var paused atomic.Bool
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for s := range sigs {
			switch s {
			case syscall.SIGUSR1:
				paused.Store(true)
			case syscall.SIGUSR2:
				paused.Store(false)
			default:
				logLine("INFO [KafkaServer id=0] shut down completed (kafka.server.KafkaServer)")
				os.Exit(0)
			}
		}
	}()

	cur := ""
	setState := func(s string) {
		if s == cur || state == "" {
			return
		}
		cur = s
		tmp := state + ".tmp"
		if os.WriteFile(tmp, []byte(s+"\n"), 0o644) == nil {
			_ = os.Rename(tmp, state)
		}
	}
	for {
		if paused.Load() {
			setState("paused")
			time.Sleep(20 * time.Millisecond)
			continue
		}
		setState("running")
		_ = tl.SetDeadline(time.Now().Add(50 * time.Millisecond))
		c, err := tl.Accept()
		if err != nil {
			continue // deadline: re-check the pause flag
		}
		go hold(c)
	}
}

// hold keeps an accepted connection open, discarding what the peer sends,
// until the peer closes it.
func hold(c net.Conn) {
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			c.Close()
			return
		}
	}
}

// listenSocket opens the listener like Kafka (Java NIO) does: a dual-stack
// IPv6 socket bound to the wildcard address (ss shows "*:9092"), or IPv4
// 0.0.0.0 when v4only; SO_RCVBUF is set before listen() unless rcvbuf == -1.
func listenSocket(port, backlog, rcvbuf int, v4only bool) (int, error) {
	family := syscall.AF_INET6
	if v4only {
		family = syscall.AF_INET
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil && family == syscall.AF_INET6 {
		family = syscall.AF_INET
		fd, err = syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	}
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		return -1, fmt.Errorf("SO_REUSEADDR: %w", err)
	}
	if rcvbuf != -1 {
		if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf); err != nil {
			return -1, fmt.Errorf("SO_RCVBUF: %w", err)
		}
	}
	var sa syscall.Sockaddr
	if family == syscall.AF_INET6 {
		_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, 0)
		sa = &syscall.SockaddrInet6{Port: port}
	} else {
		sa = &syscall.SockaddrInet4{Port: port}
	}
	if err := syscall.Bind(fd, sa); err != nil {
		return -1, fmt.Errorf("bind :%d: %w", port, err)
	}
	if err := syscall.Listen(fd, backlog); err != nil {
		return -1, fmt.Errorf("listen(%d): %w", backlog, err)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		return -1, err
	}
	return fd, nil
}

func envInt(k string, def int) int {
	if v := os.Getenv(k); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func fatal(format string, a ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", a...)
	os.Exit(1)
}

// serveKafka answers the Kafka protocol on the broker's own listener
// (KFT_KAFKA=1): franz-go's kfake, one broker advertised as
// 127.0.0.1:port, topics created on first use, so that a real client
// (librdkafka's kcat) produces to a socket made as Kafka makes it
// (SO_RCVBUF before listen(), the backlog of KFT_BACKLOG). It returns
// (the process exits) on SIGTERM or SIGINT.
func serveKafka(ln *net.TCPListener, port int, logLine func(string, ...any)) {
	adv := advertised{ln, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1),
		kfake.ListenFn(func(string, string) (net.Listener, error) { return adv, nil }))
	if err != nil {
		logLine("ERROR [KafkaServer id=0] Fatal error during KafkaServer startup (kafka.server.KafkaServer)\n%v", err)
		fatal("fakebroker: kfake: %v", err)
	}
	logLine("INFO [KafkaServer id=0] serving the Kafka protocol on 127.0.0.1:%d (kafka.server.KafkaServer)", port)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	c.Close()
	logLine("INFO [KafkaServer id=0] shut down completed (kafka.server.KafkaServer)")
}

// advertised is a listener whose address is the one to advertise.
type advertised struct {
	net.Listener
	addr net.Addr
}

func (a advertised) Addr() net.Addr { return a.addr }
