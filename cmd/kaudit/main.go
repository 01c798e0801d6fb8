// Command kaudit audits a fleet of Apache Kafka broker hosts over SSH for
// the kernel, sysctl, NIC and Kafka settings behind the SYN-cookie
// window-scaling failure (Linux commit 909172a, KIP-764), reports, and
// plans the fixes.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/termsafe"
)

// Exit codes: the one table, also printed in `kaudit --help`.
const (
	ExitOK          = 0   // every evaluated rule passes, or fails only below --fail-on
	ExitFindings    = 1   // findings at or above --fail-on
	ExitUsage       = 2   // usage or inventory error
	ExitUnaudited   = 3   // some hosts could not be audited, no finding reached --fail-on
	ExitApplyFailed = 4   // fix --apply / rollback: a host was not changed (or restored) as planned
	ExitInterrupted = 130 // interrupted (Ctrl-C); what was gathered is still reported
)

const exitHelp = `EXIT STATUS:
   0    every evaluated rule passes (or fails only below --fail-on, default high)
   1    findings at or above --fail-on (with --fail-on-unknown, also unknown ones)
   2    usage or inventory error
   3    some hosts could not be audited (unreachable, auth, hostkey, timeout, protocol)
        and no finding reached --fail-on
   4    fix --apply / rollback: some host was not changed or restored as planned (see the journal)
   130  interrupted; the report covers what was gathered`

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func usageErr(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:    "kaudit",
		Usage:   "audit Kafka broker hosts over SSH for the SYN-cookie / listen-backlog failure and its neighbours",
		Version: toolVersion(),
		Description: "kaudit gathers facts from every host of an inventory in one SSH session per host,\n" +
			"evaluates a catalog of rules (kaudit rules), reports, and plans fixes.\n\n" + exitHelp,
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		// urfave/cli's own completion: --generate-bash-completion on every
		// command; kaudit completion bash|zsh|fish prints the script.
		EnableBashCompletion: true,
		Commands: []*cli.Command{
			scanCommand(),
			demoCommand(),
			fixCommand(),
			rollbackCommand(),
			rulesCommand(),
			explainCommand(),
			reportCommand(),
			diffCommand(),
			waiversCommand(),
			whatifCommand(),
			completionCommand(),
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return &exitError{code: ExitUsage, err: err}
		},
		ExitErrHandler: func(*cli.Context, error) {}, // main decides
	}
}

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run runs kaudit. Everything written to stderr goes through termsafe:
// error and warning lines quote what hosts said.
func run(args []string, stdout, rawStderr io.Writer) int {
	stderr := termsafe.NewWriter(rawStderr)
	app := newApp(stdout, stderr)
	if !completing(args) {
		args = interspersed(app, args)
	}
	err := app.Run(args)
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "kaudit: error: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "kaudit: error: %v\n", err)
	return ExitUsage
}
