package probe

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/transport"
)

// minimalPython builds, in a temporary directory, Debian 12's
// python3-minimal: the interpreter with only the files of the
// python3.11-minimal and libpython3.11-minimal packages (no ctypes), and a
// "python3" that starts it there. It skips where those packages are not
// installed.
func minimalPython(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3.11"); err != nil {
		t.Skip("no /usr/bin/python3.11")
	}
	out, err := exec.Command("dpkg", "-L", "python3.11-minimal", "libpython3.11-minimal").Output()
	if err != nil {
		t.Skip("python3.11-minimal not installed (dpkg -L)")
	}
	home := t.TempDir()
	const lib = "/usr/lib/python3.11/"
	n := 0
	for _, f := range strings.Fields(string(out)) {
		if !strings.HasPrefix(f, lib) {
			continue
		}
		if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(home, "lib/python3.11", strings.TrimPrefix(f, lib))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if _, err := os.Stat(filepath.Join(home, "lib/python3.11/ctypes")); err == nil || n < 50 {
		t.Fatalf("not python3-minimal: %d files, ctypes present: %v", n, err == nil)
	}
	// -E would ignore PYTHONHOME: drop it, keep everything else.
	py := filepath.Join(home, "python3")
	script := "#!/bin/sh\n[ \"$1\" = -E ] && shift\nPYTHONHOME=" + home + " exec /usr/bin/python3.11 \"$@\"\n"
	if err := os.WriteFile(py, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return py
}

// pathWithout is a PATH directory holding the commands the wrapper uses,
// unshare(1) left out.
func pathWithout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, c := range []string{"id", "cat", "uname", "timeout", "readlink", "tr"} {
		p, err := exec.LookPath(c)
		if err != nil {
			t.Skip(c + " not installed")
		}
		if err := os.Symlink(p, filepath.Join(dir, c)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The probe runs on Debian 12's python3-minimal (no ctypes) through
// unshare(1); without unshare(1) python makes the namespace itself (ctypes
// here, os.unshare on 3.12+), and where it cannot it says so.
func TestProbePythonMinimal(t *testing.T) {
	needRoot(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare(1) not installed")
	}
	minimal := minimalPython(t)
	noUnshare := pathWithout(t)
	for _, tt := range []struct {
		name, python, path string
		state              facts.ProbeState
		unshare, reason    string
	}{
		{"python3-minimal with unshare(1)", minimal, "", facts.ProbeOK, "unshare(1)", ""},
		{"python3-minimal without unshare(1)", minimal, noUnshare, facts.ProbeUnsupported, "", "no unshare(1) on the host and python 3.11 has neither os.unshare nor ctypes"},
		{"full python3.11 without unshare(1)", "/usr/bin/python3.11", noUnshare, facts.ProbeOK, "ctypes", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.path != "" {
				t.Setenv("PATH", tt.path)
			}
			before := readSyncookies(t)
			p := Run(context.Background(), transport.Local{}, transport.Target{Name: "local", Local: true}, thisKernel(t), "",
				Options{Pythons: []string{tt.python}})
			if p.State != tt.state || p.Unshare != tt.unshare || !strings.Contains(p.Reason, tt.reason) {
				t.Fatalf("state %s (%s), unshare %q; want %s, %q, reason containing %q", p.State, p.Reason, p.Unshare, tt.state, tt.unshare, tt.reason)
			}
			if tt.state == facts.ProbeOK {
				if len(p.Cases) != 3 {
					t.Fatalf("cases %+v", p.Cases)
				}
				for _, c := range p.Cases {
					if c.CookiesRecv != 1 || c.ClientSndWscale != c.ServerRcvWscale || c.Flowed != c.Bytes {
						t.Errorf("case %+v", c)
					}
				}
			}
			if got := readSyncookies(t); got != before {
				t.Errorf("host tcp_syncookies %s before, %s after", before, got)
			}
		})
	}
}
