//go:build vm

package vm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Options of one guest. The zero value boots the stock kernel with 768 MiB
// and one CPU, a virtio-net NIC for SSH and one e1000e NIC.
type Options struct {
	Name     string  // the guest's name in logs and inventories (default "vm1", "vm2", … per test)
	Flavour  Flavour // the kernel (default Stock)
	MemoryMB int     // default 768
	CPUs     int     // default 1
	// ExtraNICs are QEMU NIC models ("e1000e", "virtio-net-pci", …) added
	// after the default e1000e, each on its own isolated user-mode network
	// (no DHCP answer the guest asks for: the guest leaves them unconfigured).
	ExtraNICs []string
	Append    string // appended to the kernel command line
	// BootTimeout bounds each boot, from QEMU's start to a working SSH
	// login (default 360 s: one TCG boot to SSH took 128 s on 2 loaded cores,
	// two at once missed 180 s).
	BootTimeout time.Duration
}

// Guest is one QEMU virtual machine on a private copy-on-write overlay of
// the lab's image. Its SSH port on 127.0.0.1 stays the same across
// PowerCut/Start and Reboot. Methods are not safe for concurrent use with
// each other, except Run.
type Guest struct {
	Name       string
	Lab        *Lab
	Kernel     *Kernel
	Opts       Options
	Addr       string // 127.0.0.1
	Port       int    // the host port forwarded to the guest's sshd (22)
	User       string // "root"; the image also has "kaudit" with passwordless sudo
	KeyPath    string // the client's private key (Lab.ClientKey)
	KnownHosts string // a known_hosts file holding "[127.0.0.1]:Port ssh-ed25519 …"
	Dir        string // per-guest directory: overlay.qcow2, console.log, qemu.log
	Disk       string // the qcow2 overlay (backing file: Lab.Image)
	Console    string // the serial console of every boot, appended
	Boots      int    // QEMU starts so far

	t        testing.TB
	home     string // HOME of the ssh client: nothing of this machine's HOME is read
	cmd      *exec.Cmd
	done     chan struct{} // closed when cmd has exited
	waitErr  error
	conStart int64 // console.log size when the current boot started
}

// Guest states the methods check.
var (
	ErrNotRunning = errors.New("vm: guest is not running")
	ErrRunning    = errors.New("vm: guest is already running")
)

// The first NIC's MAC: the image configures exactly this NIC (10.0.2.15/24,
// gateway 10.0.2.2, QEMU's user-mode network).
const sshMAC = "52:54:00:6b:61:00"

var guestSeq struct {
	sync.Mutex
	n map[testing.TB]int
}

// Boot creates a guest's overlay, starts QEMU and waits until root can log
// in over SSH. Everything is torn down when t ends (QEMU killed by PID, the
// overlay removed), also when t fails; QEMU also dies with the test binary
// (PR_SET_PDEATHSIG). On a failed boot Boot fails t with the console's tail.
func Boot(t testing.TB, opts Options) *Guest {
	t.Helper()
	lab := Prepare(t)
	if opts.Flavour == "" {
		opts.Flavour = Stock
	}
	k, ok := lab.Kernels[opts.Flavour]
	if !ok {
		t.Fatalf("vm: unknown kernel flavour %q", opts.Flavour)
	}
	if opts.MemoryMB == 0 {
		opts.MemoryMB = 768
	}
	if opts.CPUs == 0 {
		opts.CPUs = 1
	}
	if opts.BootTimeout == 0 {
		opts.BootTimeout = 360 * time.Second
	}
	if opts.Name == "" {
		guestSeq.Lock()
		if guestSeq.n == nil {
			guestSeq.n = map[testing.TB]int{}
		}
		guestSeq.n[t]++
		opts.Name = fmt.Sprintf("vm%d", guestSeq.n[t])
		guestSeq.Unlock()
	}
	dir, err := os.MkdirTemp("", "kaudit-vm-"+opts.Name+"-")
	if err != nil {
		t.Fatalf("vm: %v", err)
	}
	g := &Guest{Name: opts.Name, Lab: lab, Kernel: k, Opts: opts, Addr: "127.0.0.1", User: "root",
		KeyPath: lab.ClientKey, Dir: dir, Disk: filepath.Join(dir, "overlay.qcow2"),
		Console: filepath.Join(dir, "console.log"), KnownHosts: filepath.Join(dir, "known_hosts"),
		home: filepath.Join(dir, "home"), t: t}
	t.Cleanup(g.cleanup)
	if err := os.Mkdir(g.home, 0o700); err != nil {
		t.Fatalf("vm: %v", err)
	}
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", "-b", lab.Image, "-F", "raw", g.Disk).CombinedOutput(); err != nil {
		t.Fatalf("vm: qemu-img create: %v: %s", err, out)
	}
	// A free port now may be taken by the time QEMU binds it: retry a few.
	for attempt := 1; ; attempt++ {
		if g.Port, err = freePort(); err != nil {
			t.Fatalf("vm: %v", err)
		}
		err = g.Start()
		if err == nil || attempt == 3 || !strings.Contains(g.qemuLog(), "host forwarding rule") {
			break
		}
	}
	if err != nil {
		t.Fatalf("vm: boot %s (%s): %v", g.Name, k.Release, err)
	}
	return g
}

// SSHArgs are the OpenSSH client arguments that log in to the guest as
// g.User with strict host-key checking against g.KnownHosts (append the
// remote command).
func (g *Guest) SSHArgs() []string {
	return []string{"-F", "/dev/null", "-i", g.KeyPath,
		"-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none", "-o", "BatchMode=yes",
		"-o", "UserKnownHostsFile=" + g.KnownHosts, "-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "StrictHostKeyChecking=yes", "-o", "ConnectTimeout=30", "-o", "ServerAliveInterval=15", "-o", "LogLevel=ERROR",
		"-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=6",
		"-p", strconv.Itoa(g.Port), g.User + "@" + g.Addr}
}

// Run runs cmd (a shell command line) in the guest through the real ssh
// client and returns its output. A non-zero exit is an error wrapping the
// *exec.ExitError (ssh exits 255 for its own failures), with stderr's tail.
func (g *Guest) Run(ctx context.Context, cmd string) (stdout, stderr string, err error) {
	c := exec.CommandContext(ctx, "ssh", append(g.SSHArgs(), "--", cmd)...)
	c.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + g.home, "LANG=C"}
	c.Stdin = nil
	var o, e bytes.Buffer
	c.Stdout, c.Stderr = &o, &e
	err = c.Run()
	if err != nil {
		err = fmt.Errorf("vm: %s: ssh %q: %w: %s", g.Name, cmd, err, tail(strings.TrimSpace(e.String()), 5))
	}
	return o.String(), e.String(), err
}

// MustRun runs cmd with a deadline of one minute and fails t unless it
// exits 0; it returns stdout.
func (g *Guest) MustRun(t testing.TB, cmd string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, _, err := g.Run(ctx, cmd)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// BootID is the guest's /proc/sys/kernel/random/boot_id (new on every boot).
func (g *Guest) BootID(ctx context.Context) (string, error) {
	out, _, err := g.Run(ctx, "cat /proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(out)
	if !uuidRE.MatchString(id) {
		return "", fmt.Errorf("vm: %s: boot_id %q is not a UUID", g.Name, id)
	}
	return id, nil
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Running reports whether g's QEMU process is alive.
func (g *Guest) Running() bool {
	if g.cmd == nil {
		return false
	}
	select {
	case <-g.done:
		return false
	default:
		return true
	}
}

// Start boots g's disk (as it is now) on the same port and waits until SSH
// works, within Opts.BootTimeout.
func (g *Guest) Start() error {
	if g.Running() {
		return ErrRunning
	}
	if err := os.WriteFile(g.KnownHosts, []byte(fmt.Sprintf("[%s]:%d %s\n", g.Addr, g.Port, g.Lab.HostKey)), 0o600); err != nil {
		return err
	}
	if fi, err := os.Stat(g.Console); err == nil {
		g.conStart = fi.Size()
	} else {
		g.conStart = 0
	}
	qlog, err := os.OpenFile(filepath.Join(g.Dir, "qemu.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer qlog.Close()
	cmd := exec.Command("qemu-system-x86_64", g.qemuArgs()...)
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = qlog, qlog
	cmd.Dir = g.Dir
	// Its own process group (no terminal signals), and killed when the
	// test binary dies without running its cleanups.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("vm: start qemu: %w", err)
	}
	g.Boots++
	g.cmd = cmd
	done := make(chan struct{})
	g.done = done
	go func() {
		g.waitErr = cmd.Wait()
		close(done)
	}()
	return g.waitSSH()
}

func (g *Guest) qemuArgs() []string {
	// no_timer_check: under TCG on a busy machine the kernel's IO-APIC
	// timer check can miss its ticks and panic at boot ("IO-APIC + timer
	// doesn't work!", seen here at load 20); virtual machines skip it.
	cmdline := "root=/dev/vda rw console=ttyS0 panic=-1 no_timer_check " + g.Opts.Append
	args := []string{
		"-name", "kaudit-" + g.Name,
		"-accel", "tcg",
		"-m", strconv.Itoa(g.Opts.MemoryMB) + "M",
		"-smp", strconv.Itoa(g.Opts.CPUs),
		"-kernel", g.Kernel.BzImage,
		"-append", strings.TrimSpace(cmdline),
		"-drive", "file=" + g.Disk + ",format=qcow2,if=virtio,cache=writeback",
		// restrict=on: the guest reaches neither the host nor the outside;
		// the port forward to its sshd still works.
		"-netdev", fmt.Sprintf("user,id=n0,restrict=on,hostfwd=tcp:%s:%d-:22", g.Addr, g.Port),
		"-device", "virtio-net-pci,netdev=n0,mac=" + sshMAC,
		"-netdev", "user,id=n1,restrict=on",
		"-device", "e1000e,netdev=n1,mac=52:54:00:6b:61:01",
	}
	for i, model := range g.Opts.ExtraNICs {
		id := fmt.Sprintf("n%d", i+2)
		args = append(args, "-netdev", "user,id="+id+",restrict=on",
			"-device", fmt.Sprintf("%s,netdev=%s,mac=52:54:00:6b:61:%02x", model, id, i+2))
	}
	return append(args,
		"-device", "virtio-rng-pci",
		"-nographic", "-monitor", "none",
		"-chardev", "file,id=con,path="+g.Console+",append=on", "-serial", "chardev:con",
		// A reboot in the guest ends QEMU; Reboot starts it again.
		"-no-reboot",
	)
}

// waitSSH polls a login until it works, QEMU exits or the boot deadline.
func (g *Guest) waitSSH() error {
	deadline := time.Now().Add(g.Opts.BootTimeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-g.done:
			return fmt.Errorf("qemu exited (%v) before SSH came up\nqemu: %s\nconsole:\n%s", g.waitErr, strings.TrimSpace(g.qemuLog()), g.ConsoleTail(30))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, _, err := g.Run(ctx, "true")
		cancel()
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-g.done:
		case <-time.After(time.Second):
		}
	}
	return fmt.Errorf("no SSH login within %s (last: %v)\nconsole:\n%s", g.Opts.BootTimeout, last, g.ConsoleTail(30))
}

// PowerCut kills QEMU with SIGKILL (a power cut: what the guest had not
// written to its virtual disk is lost) and waits for it to exit.
func (g *Guest) PowerCut() error {
	if !g.Running() {
		return ErrNotRunning
	}
	if err := g.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-g.done:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("vm: %s: qemu (pid %d) did not exit 30 s after SIGKILL", g.Name, g.cmd.Process.Pid)
	}
}

// Reboot runs systemctl reboot in the guest, waits for QEMU to exit (it runs
// with -no-reboot, so the guest's reboot ends it), boots the disk again and
// checks that the boot_id changed.
func (g *Guest) Reboot() error {
	return g.shutdownThenStart("systemctl reboot", true)
}

// Shutdown runs systemctl poweroff in the guest and waits for QEMU to exit
// (a clean stop; Start boots the disk again).
func (g *Guest) Shutdown() error {
	return g.shutdownThenStart("systemctl poweroff", false)
}

func (g *Guest) shutdownThenStart(command string, start bool) error {
	if !g.Running() {
		return ErrNotRunning
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	before, err := g.BootID(ctx)
	cancel()
	if err != nil {
		return err
	}
	// The connection may drop before ssh sees an exit status: no error check.
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	_, _, _ = g.Run(ctx, command)
	cancel()
	select {
	case <-g.done:
	case <-time.After(g.Opts.BootTimeout):
		return fmt.Errorf("vm: %s: still running %s after %q\nconsole:\n%s", g.Name, g.Opts.BootTimeout, command, g.ConsoleTail(30))
	}
	if !start {
		return nil
	}
	if err := g.Start(); err != nil {
		return fmt.Errorf("vm: %s: boot after reboot: %w", g.Name, err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	after, err := g.BootID(ctx)
	cancel()
	if err != nil {
		return err
	}
	if after == before {
		return fmt.Errorf("vm: %s: boot_id %s unchanged after reboot", g.Name, after)
	}
	return nil
}

// ConsoleTail returns the last n lines of the serial console of the
// current boot.
func (g *Guest) ConsoleTail(n int) string {
	b, err := os.ReadFile(g.Console)
	if err != nil {
		return "(no console log: " + err.Error() + ")"
	}
	if g.conStart > 0 && g.conStart <= int64(len(b)) {
		b = b[g.conStart:]
	}
	return tail(strings.ReplaceAll(string(b), "\r", ""), n)
}

func (g *Guest) qemuLog() string {
	b, _ := os.ReadFile(filepath.Join(g.Dir, "qemu.log"))
	return string(b)
}

// cleanup kills QEMU (by the PID this package started), reports the
// console's tail when the test failed, and removes the guest's directory
// (KAUDIT_VM_KEEP=1 keeps it).
func (g *Guest) cleanup() {
	if g.Running() {
		_ = g.cmd.Process.Kill()
		select {
		case <-g.done:
		case <-time.After(30 * time.Second):
			g.t.Errorf("vm: %s: qemu pid %d survived SIGKILL for 30 s", g.Name, g.cmd.Process.Pid)
		}
	}
	if g.t.Failed() {
		g.t.Logf("vm: %s (%s) console tail:\n%s", g.Name, g.Kernel.Release, g.ConsoleTail(40))
	}
	if os.Getenv("KAUDIT_VM_KEEP") == "1" {
		g.t.Logf("vm: %s: kept %s", g.Name, g.Dir)
		return
	}
	_ = os.RemoveAll(g.Dir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
