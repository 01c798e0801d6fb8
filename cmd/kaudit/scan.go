package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// outputFlags are shared by every command that prints a report.
func outputFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: "report format: " + strings.Join(report.Formats(), ", ")},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the report to `FILE` instead of stdout"},
		&cli.StringFlag{Name: "fail-on", Value: "high", Usage: "exit 1 when a finding of this `SEVERITY` or higher fails (critical, high, medium, low, info)"},
		&cli.BoolFlag{Name: "fail-on-unknown", Usage: "also exit 1 when a finding at or above --fail-on is unknown (not proven safe), e.g. a kernel kaudit cannot settle"},
		waiversFlag(),
	}, termFlags()...)
}

// scanFlags tune the fan-out.
func scanFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "limit", Aliases: []string{"l"}, Usage: "only hosts matching `PATTERN`: comma-separated groups, hosts or globs; !term excludes"},
		&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Value: audit.DefaultConcurrency, Usage: "hosts audited at once"},
		&cli.DurationFlag{Name: "timeout", Value: audit.DefaultTimeout, Usage: "per-host deadline, connect + gather (an inventory timeout wins)"},
		&cli.DurationFlag{Name: "connect-timeout", Value: transport.DefaultConnectTimeout, Usage: "per-host TCP connect + SSH handshake deadline"},
		&cli.StringFlag{Name: "profile", Usage: "threshold overrides from `FILE` (YAML; keys as in rules/profile.default.yaml, shown per rule by kaudit explain RULE)"},
	}
}

func scanCommand() *cli.Command {
	return &cli.Command{
		Name:      "scan",
		Usage:     "audit every host of an inventory and report",
		ArgsUsage: "INVENTORY",
		Description: "INVENTORY is kaudit's YAML format or an Ansible YAML inventory (detected).\n" +
			"Each host gets one SSH session running one read-only POSIX sh script.\n\n" + exitHelp,
		Flags: append(append(scanFlags(), outputFlags()...), whatIfFlags()...),
		Action: func(c *cli.Context) error {
			opts, err := readOptions(c)
			if err != nil {
				return err
			}
			if c.NArg() != 1 {
				return usageErr("scan needs exactly one INVENTORY argument (see inventory.example.yaml)")
			}
			inv, hosts, err := loadInventory(c)
			if err != nil {
				return err
			}
			r, err := scanHosts(c.Context, c.App.ErrWriter, hosts, opts, transport.NewSSH())
			if err != nil {
				return err
			}
			r.Inventory = inv.Path
			if err := postScan(c, r, opts, hosts); err != nil {
				return err
			}
			return emit(c.App.Writer, r, opts)
		},
	}
}

// options is everything a scan-like command reads from its flags.
type options struct {
	format, output string
	failOn         rules.Severity
	failOnUnknown  bool
	term           termOptions
	concurrency    int
	timeout        time.Duration
	connectTimeout time.Duration
	profile        rules.Profile
}

func readOptions(c *cli.Context) (options, error) {
	o, err := outputOptions(c, c.String("fail-on"))
	if err != nil {
		return o, err
	}
	o.concurrency = c.Int("concurrency")
	if o.concurrency < 1 {
		return o, usageErr("--concurrency must be at least 1")
	}
	o.timeout = c.Duration("timeout")
	o.connectTimeout = c.Duration("connect-timeout")
	if o.timeout <= 0 || o.connectTimeout <= 0 {
		return o, usageErr("--timeout and --connect-timeout must be positive")
	}
	o.profile = rules.DefaultProfile()
	if p := c.String("profile"); p != "" {
		prof, err := rules.LoadProfile(p)
		if err != nil {
			return o, &exitError{code: ExitUsage, err: err}
		}
		o.profile = prof
	}
	return o, nil
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// scanHosts gathers facts from hosts, evaluates the rules, and returns the
// report. Ctrl-C stops the scan promptly and marks the report interrupted.
func scanHosts(parent context.Context, stderr io.Writer, hosts []inventory.Host, o options, runner transport.Runner) (*report.Report, error) {
	// Resolve every host's profile before connecting anywhere: a bad
	// override is an inventory error, not a per-host failure.
	profiles := make(map[string]rules.Profile, len(hosts))
	for _, h := range hosts {
		p, err := o.profile.With(h.Profile)
		if err != nil {
			return nil, usageErr("%s: host %s: profile: %v", h.Source, h.Name, err)
		}
		profiles[h.Name] = p
	}
	if ssh, ok := runner.(*transport.SSH); ok {
		ssh.Warn = func(msg string) { fmt.Fprintf(stderr, "kaudit: warning: %s\n", msg) }
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()

	started := time.Now()
	prog := newProgress(stderr, len(hosts), o.term.Quiet)
	results := audit.Scan(ctx, hosts, audit.Options{
		Concurrency:    o.concurrency,
		Timeout:        o.timeout,
		ConnectTimeout: o.connectTimeout,
		SysctlKeys:     rules.SysctlKeys(),
		Runner:         runner,
		Progress:       prog.done,
	})
	prog.finish()

	r := &report.Report{
		SchemaVersion: report.SchemaVersion,
		ToolVersion:   toolVersion(),
		StartedAt:     started.UTC().Truncate(time.Millisecond),
		DurationMS:    time.Since(started).Milliseconds(),
		FailOn:        string(o.failOn),
		Interrupted:   ctx.Err() != nil && parent.Err() == nil,
	}
	for _, res := range results {
		h := report.Host{Name: res.Host.Name, Address: res.Host.Address, Groups: res.Host.Groups, DurationMS: res.Duration.Milliseconds(), Findings: []rules.Finding{}}
		if res.Host.Connection == "local" {
			h.Address = "local"
		}
		if res.Err != nil {
			h.Error = &report.HostError{Kind: res.Err.Kind, Message: res.Err.Msg}
		} else {
			h.Facts = res.Facts
			h.Findings = rules.Evaluate(res.Facts, profiles[res.Host.Name])
		}
		r.Hosts = append(r.Hosts, h)
	}
	report.Summarize(r)
	return r, nil
}

// emit renders the report and turns it into an exit code.
func emit(stdout io.Writer, r *report.Report, o options) error {
	err := writeOutput(stdout, o.output, func(w io.Writer) error {
		return report.Render(w, o.format, r, report.Options{Color: o.term.Color, Width: o.term.Width, Verbose: o.term.Verbose})
	})
	if err != nil {
		return err
	}
	return exitFor(r, o)
}

func exitFor(r *report.Report, o options) error {
	failOn := o.failOn
	switch {
	case r.Interrupted:
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("interrupted: %d of %d hosts audited", r.Summary.Audited, r.Summary.Hosts)}
	case r.WorstFailure().Rank() >= failOn.Rank() && r.WorstFailure() != "":
		return &exitError{code: ExitFindings}
	case o.failOnUnknown && r.Worst(rules.Unknown).Rank() >= failOn.Rank() && r.Worst(rules.Unknown) != "":
		return &exitError{code: ExitFindings, err: fmt.Errorf("%s finding(s) could not be proven safe (--fail-on-unknown)", r.Worst(rules.Unknown))}
	case r.Summary.Unreachable > 0:
		return &exitError{code: ExitUnaudited}
	}
	return nil
}

// loadInventory loads the INVENTORY argument and applies --limit; any
// problem is a usage error (exit 2) before a single connection is made.
func loadInventory(c *cli.Context) (*inventory.Inventory, []inventory.Host, error) {
	inv, err := inventory.Load(c.Args().First())
	if err != nil {
		return nil, nil, &exitError{code: ExitUsage, err: err}
	}
	hosts, err := inv.Select(c.String("limit"))
	if err != nil {
		return nil, nil, &exitError{code: ExitUsage, err: err}
	}
	return inv, hosts, nil
}

// outputOptions reads the flags every report-printing command shares:
// --format, -o, the --fail-on threshold (given), --fail-on-unknown, colour.
func outputOptions(c *cli.Context, failOn string) (options, error) {
	o := options{format: c.String("format"), output: c.String("output"), failOnUnknown: c.Bool("fail-on-unknown")}
	known := false
	for _, f := range report.Formats() {
		known = known || f == o.format
	}
	if !known {
		return o, usageErr("unknown --format %q (known: %s)", o.format, strings.Join(report.Formats(), ", "))
	}
	sev, ok := rules.ParseSeverity(failOn)
	if !ok {
		return o, usageErr("unknown --fail-on %q (critical, high, medium, low, info)", failOn)
	}
	o.failOn = sev
	var err error
	o.term, err = readTermFlags(c, c.App.Writer, o.output == "", o.format)
	return o, err
}
