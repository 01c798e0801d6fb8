//go:build vm

package vm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Flavour names one of the lab's two kernels.
type Flavour string

const (
	// Stock is Debian's linux-source-6.1 as shipped: it has the fix of
	// Linux commit 909172a (uname -r 6.1.<sublevel>-kaudit-stock).
	Stock Flavour = "stock"
	// Reverted is the same source with lab/revert-909172a.patch: SYN-cookie
	// connections skip the SO_RCVBUF window clamp, the bug kaudit looks for
	// (uname -r 6.1.<sublevel>-kaudit-reverted).
	Reverted Flavour = "reverted"
)

// Kernel is one built kernel of the lab.
type Kernel struct {
	Flavour Flavour
	BzImage string // path of the bzImage QEMU boots with -kernel
	Config  string // path of its .config (also /proc/config.gz in the guest)
	Release string // what uname -r prints in the guest
}

// Lab is a complete cache entry of lab/prepare.sh: the kernels, the base
// image and the keys. It is shared by every guest of a test binary and
// never written to.
type Lab struct {
	Dir       string              // the cache entry (/var/cache/kaudit-vmlab/<sha256>)
	Image     string              // rootfs.img: raw ext4, the read-only base of every guest's overlay
	ClientKey string              // private key that root and user "kaudit" (passwordless sudo) accept
	HostKey   string              // the guests' public host key: "ssh-ed25519 AAAA…"
	Kernels   map[Flavour]*Kernel // Stock and Reverted
	Timings   string              // timings.txt of the build that made Dir (seconds per step)
}

// PrepareTimeout bounds lab/prepare.sh (a cold cache builds two kernels
// and an image: about 15 minutes on 2 loaded cores).
var PrepareTimeout = 60 * time.Minute

var (
	prepOnce sync.Once
	prepLab  *Lab
	prepErr  error
	prepSkip string
)

// Prepare returns the lab, running lab/prepare.sh once per test binary (it
// reuses a complete cache entry in seconds). It skips t when the lab cannot
// run here: not root, or QEMU missing and KAUDIT_VM_INSTALL is not 1 (with
// KAUDIT_VM_INSTALL=1 prepare.sh installs the Debian packages it needs).
// A failing prepare.sh fails t with its output's tail. KAUDIT_VM_LAB=DIR
// uses the complete cache entry DIR as it is, without prepare.sh.
func Prepare(t testing.TB) *Lab {
	t.Helper()
	prepOnce.Do(func() { prepLab, prepSkip, prepErr = prepare() })
	if prepSkip != "" {
		t.Skip(prepSkip)
	}
	if prepErr != nil {
		t.Fatalf("vm: %v", prepErr)
	}
	return prepLab
}

// LabDir is the directory of the lab's scripts (test/vm/lab in the source
// tree this package was built from).
func LabDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "lab"
	}
	return filepath.Join(filepath.Dir(file), "lab")
}

func prepare() (*Lab, string, error) {
	if os.Geteuid() != 0 {
		return nil, "vm: the VM lab needs root (mmdebstrap, apt-get, /var/cache/kaudit-vmlab); run go test -tags vm as root", nil
	}
	for _, tool := range []string{"qemu-system-x86_64", "qemu-img"} {
		if _, err := exec.LookPath(tool); err != nil && os.Getenv("KAUDIT_VM_INSTALL") != "1" {
			return nil, fmt.Sprintf("vm: %s not found: run %s (it installs qemu-system-x86, qemu-utils, mmdebstrap, linux-source-6.1) or set KAUDIT_VM_INSTALL=1",
				tool, filepath.Join(LabDir(), "prepare.sh")), nil
		}
	}
	if dir := os.Getenv("KAUDIT_VM_LAB"); dir != "" {
		lab, err := LoadLab(dir)
		return lab, "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), PrepareTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(LabDir(), "prepare.sh"))
	cmd.Stdout = &stdout
	// A cold build takes minutes: show its progress as it goes.
	cmd.Stderr = io.MultiWriter(&stderr, os.Stderr)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return nil, "", fmt.Errorf("lab/prepare.sh: %v after %s\n%s", err, time.Since(start).Round(time.Second), tail(stderr.String(), 40))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	dir := lines[len(lines)-1]
	lab, err := LoadLab(dir)
	if err != nil {
		return nil, "", err
	}
	fmt.Fprintf(os.Stderr, "vm: lab %s ready in %s\n", dir, time.Since(start).Round(100*time.Millisecond))
	return lab, "", nil
}

// LoadLab reads a complete cache entry made by lab/prepare.sh.
func LoadLab(dir string) (*Lab, error) {
	if _, err := os.Stat(filepath.Join(dir, "COMPLETE")); err != nil {
		return nil, fmt.Errorf("vm: %s is not a complete lab (no COMPLETE): %v", dir, err)
	}
	lab := &Lab{
		Dir:       dir,
		Image:     filepath.Join(dir, "rootfs.img"),
		ClientKey: filepath.Join(dir, "id_ed25519"),
		Kernels:   map[Flavour]*Kernel{},
	}
	hk, err := os.ReadFile(filepath.Join(dir, "ssh_host_ed25519_key.pub"))
	if err != nil {
		return nil, fmt.Errorf("vm: %v", err)
	}
	f := strings.Fields(string(hk))
	if len(f) < 2 || f[0] != "ssh-ed25519" {
		return nil, fmt.Errorf("vm: %s/ssh_host_ed25519_key.pub: not an ed25519 public key", dir)
	}
	lab.HostKey = f[0] + " " + f[1]
	if b, err := os.ReadFile(filepath.Join(dir, "timings.txt")); err == nil {
		lab.Timings = strings.TrimSpace(string(b))
	}
	for _, fl := range []Flavour{Stock, Reverted} {
		kd := filepath.Join(dir, string(fl))
		rel, err := os.ReadFile(filepath.Join(kd, "release"))
		if err != nil {
			return nil, fmt.Errorf("vm: kernel %s: %v", fl, err)
		}
		k := &Kernel{Flavour: fl, BzImage: filepath.Join(kd, "bzImage"), Config: filepath.Join(kd, "config"),
			Release: strings.TrimSpace(string(rel))}
		if _, err := os.Stat(k.BzImage); err != nil {
			return nil, fmt.Errorf("vm: kernel %s: %v", fl, err)
		}
		lab.Kernels[fl] = k
	}
	for _, p := range []string{lab.Image, lab.ClientKey} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("vm: %v", err)
		}
	}
	return lab, nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
