// Command kaudit audits a fleet of Apache Kafka broker hosts over SSH for
// the kernel, sysctl, NIC and Kafka settings behind the SYN-cookie
// window-scaling failure (Linux commit 909172a, KIP-764), reports, and
// plans the fixes.
package main

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/argv"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/suggest"
	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/pipeline"
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

// The long help of the app and of each command, with one EXIT STATUS
// table (help/exit.txt) that commands printing a report share.
//
//go:embed help/*.txt
var helpFiles embed.FS

// help is help/NAME.txt without its final newline.
func help(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err) // a missing embedded file is a build mistake
	}
	return strings.TrimSuffix(string(b), "\n")
}

// helpWithExit is help(name), a blank line and the EXIT STATUS table.
func helpWithExit(name string) string { return help(name) + "\n\n" + help("exit") }

// version is set at build time with -ldflags "-X main.version=..."; when
// it is empty the binary reports the version its build info carries.
var version = ""

// toolVersion is the version kaudit reports (pipeline.Version).
func toolVersion() string { return pipeline.Version(version) }

// usageErr is a usage error: any error but a *pipeline.Failure exits 2.
func usageErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

// env is where a command reads and writes, and its clock.
type env = pipeline.Console

func newApp(e env) *cli.App {
	return &cli.App{
		Name:            "kaudit",
		Usage:           "audit Kafka broker hosts over SSH for the SYN-cookie / listen-backlog failure and its neighbours",
		Version:         toolVersion(),
		Description:     helpWithExit("app"),
		Reader:          e.Stdin,
		Writer:          e.Stdout,
		ErrWriter:       e.Stderr,
		HideHelpCommand: true,
		// urfave/cli's own completion: --generate-bash-completion on every
		// command; kaudit completion bash|zsh|fish prints the script.
		EnableBashCompletion: true,
		Commands: []*cli.Command{
			scanCommand(e),
			probeCommand(e),
			demoCommand(e),
			fixCommand(e),
			rollbackCommand(e),
			rulesCommand(e),
			explainCommand(e),
			reportCommand(e),
			diffCommand(e),
			mergeCommand(e),
			waiversCommand(e),
			whatifCommand(e),
			trustCommand(e),
			serveCommand(e),
			completionCommand(e),
		},
		OnUsageError:   func(_ *cli.Context, err error, _ bool) error { return err },
		ExitErrHandler: func(*cli.Context, error) {}, // main decides
	}
}

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	return runEnv(args, env{Stdin: os.Stdin, Stdout: stdout, Stderr: stderr, Now: time.Now})
}

// runEnv runs kaudit. Everything written to stderr goes through
// termsafe: error and warning lines quote what hosts said.
func runEnv(args []string, e env) int {
	e.Stderr = termsafe.NewWriter(e.Stderr)
	app := newApp(e)
	args, err := commandLine(app, args)
	if err != nil {
		return exitCode(err, e.Stderr)
	}
	if !completing(args) { // the completion flag must stay last
		args = interspersed(app, args)
	}
	return exitCode(app.Run(args), e.Stderr)
}

// commandLine reads `kaudit help [COMMAND…]` as `kaudit [COMMAND…] --help`
// and refuses an unknown command with the nearest known one (urfave/cli
// would answer "No help topic for 'X'").
func commandLine(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		return args, nil
	}
	if args[1] == "help" {
		return append(append([]string{args[0]}, args[2:]...), "--help"), nil
	}
	var names []string
	for _, c := range app.Commands {
		if c.HasName(args[1]) {
			return args, nil
		}
		names = append(names, c.Name)
	}
	hint := "kaudit --help lists the commands"
	if s := suggest.Closest(args[1], names); s != "" {
		hint = "did you mean " + s + "? " + hint
	}
	return nil, located.Hint(usageErr("unknown command %q", args[1]), hint)
}

// exitCode is the one place an error becomes an exit code (and its
// message a line on stderr): a *pipeline.Failure exits with its verdict's
// code, any other error is a usage or input error.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var f *pipeline.Failure
	if !errors.As(err, &f) {
		fmt.Fprintf(stderr, "kaudit: error: %v\n", err)
		return ExitUsage
	}
	if f.Err != nil {
		fmt.Fprintf(stderr, "kaudit: error: %v\n", f.Err)
	}
	switch f.Verdict {
	case pipeline.Pass:
		return ExitOK
	case pipeline.Unaudited:
		return ExitUnaudited
	case pipeline.Interrupted:
		return ExitInterrupted
	case pipeline.NotApplied:
		return ExitApplyFailed
	}
	return ExitFindings
}

// interspersed moves a subcommand's flags before its positional arguments
// (argv.FlagsFirst), so `kaudit scan inventory.yaml --format json` works as
// users type it (urfave/cli v2 stops parsing flags at the first positional
// argument). Everything after "--" is left alone.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 3 || app.Command(args[1]) == nil {
		return args
	}
	cmd, n := app.Command(args[1]), 2
	for n < len(args) && subcommand(cmd, args[n]) != nil { // kaudit waivers check …
		cmd, n = subcommand(cmd, args[n]), n+1
	}
	takesValue := func(name string) bool {
		for _, f := range cmd.Flags {
			if _, isBool := f.(*cli.BoolFlag); !isBool && slices.Contains(f.Names(), name) {
				return true
			}
		}
		return false
	}
	return append(slices.Clone(args[:n]), argv.FlagsFirst(args[n:], takesValue)...)
}

// subcommand is cmd's subcommand called name, nil when there is none.
func subcommand(cmd *cli.Command, name string) *cli.Command {
	for _, s := range cmd.Subcommands {
		if s.HasName(name) {
			return s
		}
	}
	return nil
}
