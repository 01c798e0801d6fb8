package main

import (
	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/pipeline"
)

// clusterOpts are the flags that ask the Kafka cluster for its brokers
// (--bootstrap of scan, probe, fix and serve). Secrets come from a file
// or a variable only.
type clusterOpts struct{ f pipeline.ClusterFlags }

func (o *clusterOpts) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "bootstrap", Destination: &o.f.Bootstrap,
			Usage: "ask the Kafka cluster at `HOST:PORT[,HOST:PORT…]` for its brokers and their running settings, and cross-check them with the inventory (report: cluster); without an INVENTORY its brokers are the hosts, reached through ssh_config by their advertised names"},
		&cli.StringFlag{Name: "command-config", Destination: &o.f.CommandConfig,
			Usage: "Kafka client settings `FILE` (client.properties, as the Kafka CLI's --command-config): security.protocol, sasl.mechanism, sasl.jaas.config, PEM ssl.truststore/keystore"},
		&cli.StringFlag{Name: "broker-map", Destination: &o.f.BrokerMap,
			Usage: "with --bootstrap: YAML `FILE` of node id: inventory host name, for brokers whose advertised names are not the hosts' (proven by meta.properties like any match)"},
		&cli.StringFlag{Name: "security-protocol", Destination: &o.f.Client.Protocol, Usage: "`PROTOCOL` to the bootstrap: PLAINTEXT (default), SSL, SASL_PLAINTEXT, SASL_SSL"},
		&cli.StringFlag{Name: "sasl-mechanism", Destination: &o.f.Client.Mechanism, Usage: "`MECHANISM`: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"},
		&cli.StringFlag{Name: "sasl-user", Destination: &o.f.Client.User, Usage: "SASL `USER`"},
		&cli.StringFlag{Name: "sasl-password-file", Destination: &o.f.Client.PasswordFile, Usage: "read the SASL password from `FILE` (never give it on the command line)"},
		&cli.StringFlag{Name: "sasl-password-env", Destination: &o.f.Client.PasswordEnv, Usage: "read the SASL password from the environment variable `VAR`"},
		&cli.StringFlag{Name: "tls-ca", Destination: &o.f.Client.CAFile, Usage: "PEM `FILE` of the CAs that sign the brokers' certificates"},
		&cli.StringFlag{Name: "tls-cert", Destination: &o.f.Client.CertFile, Usage: "PEM client certificate `FILE` (mutual TLS)"},
		&cli.StringFlag{Name: "tls-key", Destination: &o.f.Client.KeyFile, Usage: "PEM client key `FILE`"},
		&cli.StringFlag{Name: "tls-server-name", Destination: &o.f.Client.ServerName, Usage: "`NAME` the brokers' certificates must carry (default: the bootstrap host)"},
	}
}

// fleetArgs is pipeline.ClusterFlags.FleetArgs of the flags given.
func (o clusterOpts) fleetArgs(cmd string, args []string, what string) (string, *pipeline.ClusterSource, error) {
	return o.f.FleetArgs(cmd, args, what)
}
