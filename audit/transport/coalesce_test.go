package transport

import (
	"bytes"
	"io"
	"os/exec"
	"testing"
)

// runSh runs script on /bin/sh -s as sshd would, and returns the first
// read from its stdout pipe and everything it printed.
func runSh(t *testing.T, script []byte) (first, all []byte) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-s")
	cmd.Stdin = bytes.NewReader(script)
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<16)
	n, _ := pipe.Read(buf)
	rest, _ := io.ReadAll(pipe)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("sh: %v", err)
	}
	return buf[:n], append(buf[:n:n], rest...)
}

// The coalesced script prints the same bytes (NUL, no final newline and
// a shell function included), and all of it in one write: the first
// read already holds what came after the pause.
func TestCoalesceOneWrite(t *testing.T) {
	script := []byte("f() { printf '%s\\n' \"$1\"; }\nf one\nsleep 0.3\nprintf 'two\\000\\377'\nexit 0")
	first, plain := runSh(t, script)
	if string(first) != "one\n" {
		t.Fatalf("the test needs a script whose output comes in two writes, got %q first", first)
	}
	first, got := runSh(t, coalesce(script))
	if !bytes.Equal(got, plain) {
		t.Errorf("coalesced output %q, want %q", got, plain)
	}
	if !bytes.Equal(first, plain) {
		t.Errorf("first read %q, want the whole output %q in one write", first, plain)
	}
}

// A script's stderr is not coalesced and not lost.
func TestCoalesceKeepsStderr(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-s")
	cmd.Stdin = bytes.NewReader(coalesce([]byte("echo out; echo err >&2")))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "out\n" || stderr.String() != "err\n" {
		t.Errorf("stdout %q stderr %q, want \"out\\n\" and \"err\\n\"", stdout.String(), stderr.String())
	}
}
