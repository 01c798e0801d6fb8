package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// fakeSudo is a stand-in for sudo -S: it records its argv, reads the
// password line from stdin as sudo does (one byte at a time: sh's read on a
// pipe), and runs the command after "--". MODE=nopasswd reads nothing, as
// sudo with NOPASSWD or cached credentials; MODE=wrong rejects it.
const fakeSudo = `#!/bin/sh
printf '%s\n' "$@" > "$ARGV_LOG"
if [ "$MODE" != nopasswd ]; then
	IFS= read -r pw || exit 1
	if [ "$MODE" = wrong ] || [ "$pw" != "$WANT_PW" ]; then
		echo "Sorry, try again." >&2
		echo "sudo: 1 incorrect password attempt" >&2
		exit 1
	fi
fi
while [ "$1" != "--" ]; do shift; done
shift
exec "$@"
`

func runFramed(t *testing.T, mode, want string, pw *BecomePassword, script string) (*Output, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sudo"), []byte(fakeSudo), 0o755); err != nil {
		t.Fatal(err)
	}
	argvLog := filepath.Join(dir, "argv")
	cmdline, stdin := remoteInput("sudo", pw, []byte(script))
	cmd := exec.Command("/bin/sh", "-c", cmdline) // as sshd runs it: the login shell parses the command line
	cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "MODE=" + mode, "WANT_PW=" + want, "ARGV_LOG=" + argvLog}
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := &Output{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	if ee, ok := err.(*exec.ExitError); ok {
		out.ExitCode = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	argv, _ := os.ReadFile(argvLog)
	return out, string(argv) + cmdline
}

func TestBecomePasswordFraming(t *testing.T) {
	const secret = `s3cr'et "pw" $(id) ;` // shell metacharacters must not matter
	pw, err := NewBecomePassword([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	script := "echo first line of the script\necho \"last line: $(id -u)\"\n"
	for _, mode := range []string{"asks", "nopasswd"} {
		t.Run(mode, func(t *testing.T) {
			out, argv := runFramed(t, mode, secret, pw, script)
			if out.ExitCode != 0 || len(out.Stderr) != 0 {
				t.Fatalf("exit %d, stderr %q (the password line must never reach a shell as a command)", out.ExitCode, out.Stderr)
			}
			if want := fmt.Sprintf("first line of the script\nlast line: %d\n", os.Getuid()); string(out.Stdout) != want {
				t.Errorf("stdout %q, want %q (the whole script, and nothing else, run)", out.Stdout, want)
			}
			for name, b := range map[string]string{"argv": argv, "stdout": string(out.Stdout), "stderr": string(out.Stderr)} {
				if strings.Contains(b, "s3cr") {
					t.Errorf("password in %s: %q", name, b)
				}
			}
		})
	}
	t.Run("wrong", func(t *testing.T) {
		out, _ := runFramed(t, "wrong", secret, pw, script)
		err := checkExit(Target{User: "kafka", Become: "sudo"}, out)
		if e := AsError(err); err == nil || e.Kind != facts.KindAuth || !strings.Contains(e.Msg, "rejected the password") {
			t.Fatalf("wrong password: %v, want an auth error", err)
		}
		if strings.Contains(AsError(err).Msg, "s3cr") {
			t.Errorf("password in the error")
		}
	})
}

func TestBecomeWithoutPassword(t *testing.T) {
	cmd, stdin := remoteInput("sudo", nil, []byte("x"))
	if b, _ := io.ReadAll(stdin); cmd != "sudo -n -- /bin/sh -s" || string(b) != "x" {
		t.Errorf("no password: %q with stdin %q", cmd, b)
	}
	pw, _ := NewBecomePassword([]byte("pw"))
	cmd, stdin = remoteInput("", pw, []byte("x"))
	if b, _ := io.ReadAll(stdin); cmd != "/bin/sh -s" || string(b) != "x" {
		t.Errorf("no become: the password must not be sent: %q with stdin %q", cmd, b)
	}
	err := checkExit(Target{User: "kafka", Become: "sudo"}, &Output{ExitCode: 1, Stderr: []byte("sudo: a password is required\n")})
	if e := AsError(err); e.Kind != facts.KindAuth || !strings.Contains(e.Msg, "--ask-become-pass") {
		t.Errorf("sudo -n wanting a password: %v", err)
	}
}

func TestBecomePasswordNeverPrints(t *testing.T) {
	pw, err := NewBecomePassword([]byte("hunter2"))
	if err != nil {
		t.Fatal(err)
	}
	s := &SSH{BecomePassword: pw}
	j, _ := json.Marshal(struct{ P *BecomePassword }{pw})
	for _, got := range []string{fmt.Sprint(pw), fmt.Sprintf("%+v %#v %s %q %x", pw, pw, pw, pw, pw), fmt.Sprintf("%+v", s), string(j)} {
		if strings.Contains(got, "hunter2") || !strings.Contains(got, "[redacted]") {
			t.Errorf("printed %q", got)
		}
	}
	for _, bad := range []string{"", "a\nb", "a\x00"} {
		if _, err := NewBecomePassword([]byte(bad)); err == nil {
			t.Errorf("NewBecomePassword(%q) accepted", bad)
		}
	}
}
