package main

import (
	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/inventory"
)

// shardOpts is --shard K/N for scan-like commands.
type shardOpts struct{ spec string }

func (o *shardOpts) flags() []cli.Flag {
	return []cli.Flag{&cli.StringFlag{Name: "shard", Destination: &o.spec,
		Usage: "audit only shard `K/N` of the selected hosts (K from 0, e.g. \"$JOB_COMPLETION_INDEX/3\"); " +
			"a host's shard depends on its name alone; join the reports with kaudit merge"}}
}

// selectHosts applies --shard to hosts and returns the shard ("" without
// the flag) for the report. A malformed K/N is a usage error.
func (o shardOpts) selectHosts(hosts []inventory.Host) ([]inventory.Host, string, error) {
	if o.spec == "" {
		return hosts, "", nil
	}
	s, err := inventory.ParseShard(o.spec)
	if err != nil {
		return nil, "", usageErr("--shard: %v", err)
	}
	return inventory.SelectShard(s, hosts), s.String(), nil
}
