package transport

import (
	"context"
	"errors"
	"os/exec"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// Local runs the script on the machine kaudit runs on (connection: local).
type Local struct{}

// Run executes /bin/sh -s (through sudo -n for become: sudo).
func (Local) Run(ctx context.Context, t Target, script []byte) (*Output, error) {
	args := strings.Fields(shellCommand(t.Become))
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdin = strings.NewReader(string(script))
	cut := func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill() // the shell we started, nothing else
		}
	}
	stdout := &limitedBuffer{max: MaxOutput, cut: cut}
	stderr := &limitedBuffer{max: 1 << 20, cut: cut}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if stdout.overflowed() || stderr.overflowed() {
		return nil, tooMuch()
	}
	out := &Output{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), HostKey: LocalHostKey}
	if ctx.Err() != nil {
		return nil, classify(ctx.Err(), t.step())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		out.ExitCode = ee.ExitCode()
	} else if err != nil {
		return nil, newErr(facts.KindProtocol, err, "local: %v", err)
	}
	return out, checkExit(t, out)
}

// LocalHostKey is Output.HostKey of a local run: the machine kaudit runs on.
const LocalHostKey = "local"
