package main

import (
	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/inventory"
)

// shardFlag is --shard K/N for scan-like commands.
func shardFlag() cli.Flag {
	return &cli.StringFlag{Name: "shard", Usage: "audit only shard `K/N` of the selected hosts (K from 0, e.g. \"$JOB_COMPLETION_INDEX/3\"); " +
		"a host's shard depends on its name alone; join the reports with kaudit merge"}
}

// selectShard applies --shard to hosts and returns the shard ("" without
// the flag) for the report. A malformed K/N is a usage error.
func selectShard(c *cli.Context, hosts []inventory.Host) ([]inventory.Host, string, error) {
	v := c.String("shard")
	if v == "" {
		return hosts, "", nil
	}
	s, err := inventory.ParseShard(v)
	if err != nil {
		return nil, "", usageErr("--shard: %v", err)
	}
	return s.Select(hosts), s.String(), nil
}
