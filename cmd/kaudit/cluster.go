package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/discover"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/pipeline"
)

// clusterOpts are the flags that ask the Kafka cluster for its brokers
// (--bootstrap of scan, probe, fix and serve). Secrets come from a file
// or a variable only.
type clusterOpts struct {
	bootstrap, commandConfig, brokerMap string
	c                                   discover.ClientConfig
}

func (o *clusterOpts) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "bootstrap", Destination: &o.bootstrap,
			Usage: "ask the Kafka cluster at `HOST:PORT[,HOST:PORT…]` for its brokers and their running settings, and cross-check them with the inventory (report: cluster); without an INVENTORY its brokers are the hosts, reached through ssh_config by their advertised names"},
		&cli.StringFlag{Name: "command-config", Destination: &o.commandConfig,
			Usage: "Kafka client settings `FILE` (client.properties, as the Kafka CLI's --command-config): security.protocol, sasl.mechanism, sasl.jaas.config, PEM ssl.truststore/keystore"},
		&cli.StringFlag{Name: "broker-map", Destination: &o.brokerMap,
			Usage: "with --bootstrap: YAML `FILE` of node id: inventory host name, for brokers whose advertised names are not the hosts' (proven by meta.properties like any match)"},
		&cli.StringFlag{Name: "security-protocol", Destination: &o.c.Protocol, Usage: "`PROTOCOL` to the bootstrap: PLAINTEXT (default), SSL, SASL_PLAINTEXT, SASL_SSL"},
		&cli.StringFlag{Name: "sasl-mechanism", Destination: &o.c.Mechanism, Usage: "`MECHANISM`: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"},
		&cli.StringFlag{Name: "sasl-user", Destination: &o.c.User, Usage: "SASL `USER`"},
		&cli.StringFlag{Name: "sasl-password-file", Destination: &o.c.PasswordFile, Usage: "read the SASL password from `FILE` (never give it on the command line)"},
		&cli.StringFlag{Name: "sasl-password-env", Destination: &o.c.PasswordEnv, Usage: "read the SASL password from the environment variable `VAR`"},
		&cli.StringFlag{Name: "tls-ca", Destination: &o.c.CAFile, Usage: "PEM `FILE` of the CAs that sign the brokers' certificates"},
		&cli.StringFlag{Name: "tls-cert", Destination: &o.c.CertFile, Usage: "PEM client certificate `FILE` (mutual TLS)"},
		&cli.StringFlag{Name: "tls-key", Destination: &o.c.KeyFile, Usage: "PEM client key `FILE`"},
		&cli.StringFlag{Name: "tls-server-name", Destination: &o.c.ServerName, Usage: "`NAME` the brokers' certificates must carry (default: the bootstrap host)"},
	}
}

// source is the cluster to ask, nil without --bootstrap; its map is
// read from --broker-map.
func (o clusterOpts) source() (*pipeline.ClusterSource, error) {
	if o.bootstrap == "" {
		if o.brokerMap != "" {
			return nil, located.Hint(usageErr("--broker-map maps the brokers of --bootstrap"), "give --bootstrap HOST:PORT too")
		}
		return nil, nil
	}
	var bs []string
	for _, b := range strings.Split(o.bootstrap, ",") {
		if b = strings.TrimSpace(b); b != "" {
			bs = append(bs, b)
		}
	}
	src := &pipeline.ClusterSource{Bootstrap: bs, CommandConfig: o.commandConfig, Client: o.c, MapFile: o.brokerMap}
	if o.brokerMap != "" {
		var err error
		if src.Map, err = discover.LoadMap(o.brokerMap); err != nil {
			return nil, err
		}
	}
	return src, nil
}

// fleetArgs is what selects command cmd's hosts: its INVENTORY argument,
// and the cluster of --bootstrap (nil without it). The inventory is ""
// when there is none and --bootstrap makes the cluster's brokers the
// fleet; what says what --bootstrap alone does, for the usage error.
func (o clusterOpts) fleetArgs(cmd string, args []string, what string) (string, *pipeline.ClusterSource, error) {
	src, err := o.source()
	switch {
	case err != nil:
		return "", nil, err
	case len(args) == 1:
		return args[0], src, nil
	case len(args) > 1 || src == nil:
		return "", nil, located.Hint(usageErr("%s needs exactly one INVENTORY argument, or --bootstrap HOST:PORT %s", cmd, what), "see inventory.example.yaml")
	}
	return "", src, nil
}
