package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// The option groups commands share. Each command's options struct embeds
// the groups it has; each group declares its own flags bound to its
// fields, and checks them into what the library takes.

// flags concatenates flag groups in order.
func flags(groups ...[]cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func limitFlag(dst *string, usage string) []cli.Flag {
	return []cli.Flag{&cli.StringFlag{Name: "limit", Aliases: []string{"l"}, Usage: usage, Destination: dst}}
}

const scanLimitUsage = "only hosts matching `PATTERN`: comma-separated groups, hosts or globs; !term excludes"

// fanoutOpts tune a scan's fan-out; the flags are bound to the scan's
// pipeline.Config, --profile to the file it is loaded from.
type fanoutOpts struct {
	cfg     pipeline.Config
	profile string
}

func (o *fanoutOpts) flags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Value: audit.DefaultConcurrency, Usage: "hosts audited at once", Destination: &o.cfg.Concurrency},
		&cli.DurationFlag{Name: "timeout", Value: audit.DefaultTimeout, Usage: "per-host deadline, connect + gather (an inventory timeout wins)", Destination: &o.cfg.Timeout},
		&cli.DurationFlag{Name: "connect-timeout", Value: transport.DefaultConnectTimeout, Usage: "per-host TCP connect + SSH handshake deadline", Destination: &o.cfg.ConnectTimeout},
		&cli.StringFlag{Name: "profile", Usage: "threshold overrides from `FILE` (YAML; keys as in rules/profile.default.yaml, shown per rule by kaudit explain RULE)", Destination: &o.profile},
		&cli.StringFlag{Name: "clients-group", Usage: "inventory `GROUP` of producer/consumer hosts: gathered with the client profile, their connections matched with the brokers' (client-wscale-mismatch); default the inventory's clients_group:, else " + audit.DefaultClientsGroup, Destination: &o.cfg.ClientsGroup},
	}
}

// config checks the fan-out flags and returns the scan's configuration.
func (o fanoutOpts) config(failOn rules.Severity) (pipeline.Config, error) {
	cfg := o.cfg
	cfg.FailOn, cfg.ToolVersion = failOn, toolVersion()
	if cfg.Concurrency < 1 {
		return cfg, usageErr("--concurrency must be at least 1")
	}
	if cfg.Timeout <= 0 || cfg.ConnectTimeout <= 0 {
		return cfg, usageErr("--timeout and --connect-timeout must be positive")
	}
	prof, err := loadProfile(o.profile)
	cfg.Profile = prof
	return cfg, err
}

// checkScan checks the flags of a command that scans and prints a report.
func checkScan(out outputOpts, fan fanoutOpts) (emitOpts, pipeline.Config, error) {
	eo, err := out.check(out.failOn)
	if err != nil {
		return eo, pipeline.Config{}, err
	}
	cfg, err := fan.config(eo.failOn)
	return eo, cfg, err
}

// loadProfile is --profile FILE, or the default profile without one.
func loadProfile(file string) (rules.Profile, error) {
	prof, err := pipeline.LoadProfile(file)
	if err != nil {
		return prof, usage(err)
	}
	return prof, nil
}

// outputOpts are the flags of every command that prints a report.
type outputOpts struct {
	format, output, failOn string
	failOnUnknown          bool
	waivers                waiverOpts
	term                   termOpts
	// defaultFormat and formatUsage, when set, replace --format's default
	// ("table") and its help (kaudit merge writes JSON by default).
	defaultFormat, formatUsage string
}

func (o *outputOpts) flags() []cli.Flag {
	def, usage := o.defaultFormat, o.formatUsage
	if def == "" {
		def = "table"
	}
	if usage == "" {
		usage = "report format: " + strings.Join(report.Formats(), ", ")
	}
	return append([]cli.Flag{
		&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: def, Usage: usage, Destination: &o.format},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the report to `FILE` instead of stdout", Destination: &o.output},
		&cli.StringFlag{Name: "fail-on", Value: "high", Usage: "exit 1 when a finding of this `SEVERITY` or higher fails (critical, high, medium, low, info)", Destination: &o.failOn},
		&cli.BoolFlag{Name: "fail-on-unknown", Usage: "also exit 1 when a finding at or above --fail-on is unknown (not proven safe), e.g. a kernel kaudit cannot settle", Destination: &o.failOnUnknown},
		o.waivers.flag(),
	}, o.term.flags()...)
}

// emitOpts are checked output flags: how to render a report and turn it
// into an exit code.
type emitOpts struct {
	format, output string
	failOn         rules.Severity
	failOnUnknown  bool
	term           termOptions
}

// check validates --format and the --fail-on threshold (given: a command
// may take it from elsewhere), and decides the terminal layout (termOpts).
func (o outputOpts) check(failOn string) (emitOpts, error) {
	eo := emitOpts{format: o.format, output: o.output, failOnUnknown: o.failOnUnknown}
	if err := oneOf("format", eo.format, report.Formats()); err != nil {
		return eo, err
	}
	sev, ok := rules.ParseSeverity(failOn)
	if !ok {
		return eo, usageErr("unknown --fail-on %q (critical, high, medium, low, info)", failOn)
	}
	eo.failOn = sev
	var err error
	eo.term, err = o.term.check(eo.output == "", eo.format)
	return eo, err
}

// oneOf checks that --flag is one of the known values.
func oneOf(flag, value string, known []string) error {
	for _, k := range known {
		if k == value {
			return nil
		}
	}
	return usageErr("unknown --%s %q (known: %s)", flag, value, strings.Join(known, ", "))
}

// loadInventory is pipeline.LoadInventory, any problem a usage error
// (exit 2) before a single connection is made.
func loadInventory(path, limit string) (*inventory.Inventory, []inventory.Host, error) {
	inv, hosts, err := pipeline.LoadInventory(path, limit)
	if err != nil {
		return nil, nil, usage(err)
	}
	return inv, hosts, nil
}
