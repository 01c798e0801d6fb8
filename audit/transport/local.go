package transport

import (
	"context"
	"errors"
	"os/exec"
	"strings"
)

// Local runs the script on the machine kaudit runs on (connection: local).
type Local struct{}

// Run executes /bin/sh -s (through sudo -n for become: sudo).
func (Local) Run(ctx context.Context, t Target, script []byte) (*Output, error) {
	args := strings.Fields(shellCommand(t.Become))
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdin = strings.NewReader(string(script))
	stdout := &limitedBuffer{max: MaxOutput}
	stderr := &limitedBuffer{max: 1 << 20}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	out := &Output{Stdout: stdout.buf.Bytes(), Stderr: stderr.buf.Bytes()}
	if ctx.Err() != nil {
		return nil, classify(ctx.Err(), "gather")
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		out.ExitCode = ee.ExitCode()
	} else if err != nil {
		return nil, tooMuch(newErr(KindProtocol, err, "local: %v", err))
	}
	return out, checkExit(t, out)
}
