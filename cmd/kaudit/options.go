package main

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/internal/ui"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/whatif"
)

// The option groups commands share. Each command's options struct embeds
// the groups it has; each group declares its flags bound to the fields
// of the library type it fills, and the library checks them.

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

// fanoutOpts tune a scan's fan-out: the flags are bound to
// pipeline.ScanFlags (its Config, --profile, --probe-records).
type fanoutOpts struct{ s pipeline.ScanFlags }

func (o *fanoutOpts) flags() []cli.Flag {
	cfg := &o.s.Config
	return []cli.Flag{
		&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Value: audit.DefaultConcurrency, Usage: "hosts audited at once", Destination: &cfg.Concurrency},
		&cli.DurationFlag{Name: "timeout", Value: audit.DefaultTimeout, Usage: "per-host deadline, connect + gather (an inventory timeout wins)", Destination: &cfg.Timeout},
		&cli.DurationFlag{Name: "connect-timeout", Value: transport.DefaultConnectTimeout, Usage: "per-host TCP connect + SSH handshake deadline", Destination: &cfg.ConnectTimeout},
		&cli.StringFlag{Name: "profile", Usage: "threshold overrides from `FILE` (YAML; keys as in rules/profile.default.yaml, shown per rule by kaudit explain RULE)", Destination: &o.s.Profile},
		&cli.StringFlag{Name: "probe-records", Usage: "`DIR` where kaudit keeps each host's probe verdict for that boot and kernel, which later scans, fixes and serve of the same boot use (default ~/.local/state/kaudit/probes; \"" + pipeline.ProbeRecordsOff + "\": neither kept nor used)", Destination: &o.s.ProbeRecords},
		&cli.StringFlag{Name: "clients-group", Usage: "inventory `GROUP` of producer/consumer hosts: gathered with the client profile, their connections matched with the brokers' (client-wscale-mismatch); default the inventory's clients_group:, else " + audit.DefaultClientsGroup, Destination: &cfg.ClientsGroup},
	}
}

// config is the scan's configuration, failing at failOn.
func (o fanoutOpts) config(failOn rules.Severity) (pipeline.Config, error) {
	return o.s.Load(failOn, toolVersion())
}

// outputOpts are the flags of every command that prints a report.
type outputOpts struct {
	f pipeline.OutputFlags
	// defaultFormat and formatUsage, when set, replace --format's default
	// ("table") and its help (kaudit merge writes JSON by default).
	defaultFormat, formatUsage string
}

func (o *outputOpts) flags() []cli.Flag {
	def, usage := cmp.Or(o.defaultFormat, "table"), o.formatUsage
	if usage == "" {
		usage = "report format: " + strings.Join(report.Formats(), ", ")
	}
	return append([]cli.Flag{
		&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: def, Usage: usage, Destination: &o.f.Format},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the report to `FILE` instead of stdout", Destination: &o.f.Path},
		&cli.StringFlag{Name: "fail-on", Value: "high", Usage: "exit 1 when a finding of this `SEVERITY` or higher fails (critical, high, medium, low, info)", Destination: &o.f.FailOn},
		&cli.BoolFlag{Name: "fail-on-unknown", Usage: "also exit 1 when a finding at or above --fail-on is unknown (not proven safe), e.g. a kernel kaudit cannot settle", Destination: &o.f.FailOnUnknown},
		&cli.StringFlag{Name: waiversFlagName, Usage: "accept findings listed in the waiver `FILE` (YAML; kaudit waivers check FILE): they are reported as waived and no longer count in the score or exit status", Destination: &o.f.Waivers},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "table: every host's observed value, the reason, the fix and the rationale per rule (default: one line per rule); demo: the whole fix plan", Destination: &o.f.Verbose},
		&cli.BoolFlag{Name: "hosts", Usage: fmt.Sprintf("table, markdown: list every host of each failure pattern (a fleet of more than %d hosts is shown grouped, each group counted and one host named)", report.GroupedAbove), Destination: &o.f.Hosts},
		&cli.StringFlag{Name: "color", Value: "auto", Usage: "colour the table: `MODE` auto (on a terminal, unless NO_COLOR is set; CLICOLOR_FORCE=1 colours a pipe too), always or never", Destination: &o.f.Layout.Color},
		&cli.BoolFlag{Name: "no-color", Usage: "same as --color never", Destination: &o.f.Layout.NoColor},
	}, layoutFlags(&o.f.Layout, &o.f.Quiet)...)
}

const waiversFlagName = "waivers"

// layoutFlags are --width and --quiet: of every command that prints a
// report, and of fix, which prints a plan.
func layoutFlags(l *termui.Layout, quiet *bool) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "width", Usage: "lay the table and the plan out for `N` columns", DefaultText: "$COLUMNS, else the terminal's width, else 100", Destination: &l.Width},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar on stderr (drawn only when stderr is a terminal)", Destination: quiet},
	}
}

// whatIfOpts are --assume-kernel and --assume-kafka.
type whatIfOpts struct{ a whatif.Assume }

func (o *whatIfOpts) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "assume-kernel", Usage: "what if every host ran kernel `RELEASE` (after a reboot): which findings would it fix or introduce; overrides the inventory's assume_kernel", Destination: &o.a.Kernel},
		&cli.StringFlag{Name: "assume-kafka", Usage: "what if every broker ran Kafka `VERSION` (3.6.1, or confluent:7.6.0) after a restart; overrides the inventory's assume_kafka", Destination: &o.a.Kafka},
	}
}

func (o whatIfOpts) assume() whatif.Assume { return o.a }

// connectOpts are --ssh-config and --ask-become-pass, for every command
// that connects (become: those that run commands on the hosts).
type connectOpts struct{ cc pipeline.ConnectConfig }

func (o *connectOpts) flags(become bool) []cli.Flag {
	fs := []cli.Flag{&cli.StringFlag{Name: "ssh-config", Destination: &o.cc.SSHConfig,
		Usage: "read OpenSSH client settings from `FILE` instead of ~/.ssh/config and /etc/ssh/ssh_config (like ssh -F); the inventory's own settings still win"}}
	if become {
		fs = append(fs, &cli.BoolFlag{Name: "ask-become-pass", Aliases: []string{"K"}, Destination: &o.cc.AskBecome,
			Usage: "ask once, on the terminal, for the sudo password of hosts with become: sudo; it is sent only to sudo's standard input (sudo -S), never on a command line, in logs or in reports"})
	}
	return fs
}

// fleet is the hosts of the inventory file that limit selects, connected
// to with warnings on stderr, the become password and key passphrases
// asked on the terminal.
func (o connectOpts) fleet(e env, inventory, limit string) pipeline.Fleet {
	cc := o.cc
	cc.Passphrase, cc.Warn, cc.Prompt = ui.TerminalPassphrase(), e.Warn, e.Stderr
	return pipeline.Fleet{Inventory: inventory, Limit: limit, Connect: cc}
}
