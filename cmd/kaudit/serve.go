package main

import (
	"context"
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/rules"
)

// serveOptions are the flags of kaudit serve.
type serveOptions struct {
	limit   string
	fanout  fanoutOpts
	conn    connectOpts
	cluster clusterOpts
	waivers string
	job     pipeline.ServeJob
}

func serveCommand(e env) *cli.Command {
	o := &serveOptions{}
	j := &o.job
	return &cli.Command{
		Name:        "serve",
		Usage:       "scan an inventory (or the brokers of --bootstrap) continuously and serve the last report as Prometheus metrics, JSON and HTML",
		ArgsUsage:   "[INVENTORY]",
		Description: help("serve"),
		Flags: flags(limitFlag(&o.limit, scanLimitUsage), []cli.Flag{
			&cli.DurationFlag{Name: "interval", Value: pipeline.DefaultInterval, Usage: "start a scan every `DURATION` (one at a time: a scan longer than this delays the next)", Destination: &j.Interval},
			&cli.Float64Flag{Name: "jitter", Value: 0.1, Usage: "vary each wait by up to this `FRACTION` of --interval, either way (0 to 0.5)", Destination: &j.Jitter},
			&cli.StringFlag{Name: "listen", Value: pipeline.DefaultListen, Usage: "serve on `HOST:PORT` (loopback by default; :9874 for every address)", Destination: &j.Listen},
			&cli.StringFlag{Name: "web.config.file", Usage: "TLS and basic-auth configuration `FILE` of the Prometheus exporter toolkit (as node_exporter's)", Destination: &j.WebConfigFile},
			&cli.StringFlag{Name: "health-listen", Usage: "also serve /healthz and /readyz alone on `HOST:PORT`, plain HTTP without authentication (for Kubernetes probes when --web.config.file asks for basic auth)", Destination: &j.HealthListen},
			&cli.StringFlag{Name: "state-dir", Value: pipeline.DefaultStateDir(), Usage: "keep the last report in `DIR` and serve it after a restart", Destination: &j.StateDir},
			&cli.BoolFlag{Name: "host-rules", Usage: "also export one series per host × rule (kaudit_rule_status, kaudit_rule_failed): hosts × 17 × 2 series", Destination: &j.HostRules},
			&cli.BoolFlag{Name: "keep-connections", Value: true, Usage: "keep each host's SSH connection between scans (a new session per scan; reconnects when it is gone); --keep-connections=false connects anew each scan", Destination: &j.KeepConnections},
			&cli.IntFlag{Name: "keep-max", Value: pipeline.DefaultKeepMax, Usage: "keep at most `N` SSH connections between scans (each holds ≈ 60 KB; the open-file limit may allow fewer: serve says how many it keeps)", Destination: &j.KeepMax},
			&cli.StringFlag{Name: waiversFlagName, Usage: "accept findings listed in the waiver `FILE` (reloaded with the inventory)", Destination: &o.waivers},
		}, o.fanout.flags(), o.conn.flags(false), o.cluster.flags()),
		Action: func(c *cli.Context) error {
			if c.IsSet("web.config.file") && o.job.WebConfigFile == "" {
				return located.Hint(errors.New("--web.config.file is empty: kaudit serve would serve without TLS or authentication"), "give the file, or leave the flag out to serve plain HTTP on purpose")
			}
			return runServe(c.Context, *o, c.Args().Slice(), e)
		},
	}
}

func runServe(ctx context.Context, o serveOptions, args []string, e env) error {
	inv, src, err := o.cluster.fleetArgs("serve", args, "to serve the cluster's brokers (asked again at every scan)")
	if err != nil {
		return err
	}
	j := o.job
	if j.Config, err = o.fanout.config(rules.High); err != nil {
		return err
	}
	j.Config.Cluster = src
	j.ProfileFile, j.Waivers, j.Version = o.fanout.s.Profile, o.waivers, toolVersion()
	j.Fleet = o.conn.fleet(e, inv, o.limit)
	j.Reload = pipeline.HangUps(ctx)
	return pipeline.Serve(ctx, e, j)
}
