package pipeline

import (
	"context"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/termsafe"
)

// Fleet is the hosts a command works on: those of the inventory file
// Inventory that Limit selects (LoadInventory), and how to connect to
// them (Connect).
type Fleet struct {
	Inventory, Limit string
	Connect          ConnectConfig
}

// connect is Connect for hosts of f, their known_hosts files checked
// (CheckKnownHosts), its fan-out of *n connections fitted to the
// open-file limit (fitWarned). Close it when done.
func (f Fleet) connect(c Console, hosts []inventory.Host, n *int) (*transport.SSH, error) {
	runner, err := Connect(hosts, f.Connect)
	if err != nil {
		return nil, err
	}
	if err := CheckKnownHosts(runner, hosts); err != nil {
		runner.Close()
		return nil, err
	}
	*n = fitWarned(c, *n)
	return runner, nil
}

// ScanFleet is kaudit scan and probe: the hosts of f (of shard K/N, when
// set: SelectShard) scanned and reported as j says (ScanReport); j's
// hosts, inventory and shard are set here.
func ScanFleet(ctx context.Context, c Console, f Fleet, shard string, j ReportJob) error {
	if err := j.Output.loadWaivers(); err != nil {
		return err
	}
	inv, hosts, err := f.loadOrDiscover(ctx, c, j.Config.Cluster)
	if err != nil {
		return err
	}
	j.Config.ClientsGroup, j.Inventory = ClientsGroup(j.Config.ClientsGroup, inv), inv.Path
	if j.Hosts, j.Shard, err = SelectShard(hosts, shard); err != nil {
		return err
	}
	runner, err := f.connect(c, j.Hosts, &j.Config.Concurrency)
	if err != nil {
		return err
	}
	defer runner.Close()
	j.Config.Runner = runner
	r, err := ScanReport(ctx, c, j)
	if r != nil {
		if rc := r.Cluster; rc != nil && rc.ConfigsError != "" {
			c.Warnf("cluster %s: the running brokers' settings could not be read (%s): the rules judge the files read over SSH", termsafe.Line(rc.ID), termsafe.Line(rc.ConfigsError))
		}
		r.Close()
	}
	return err
}

// FixFleet is kaudit fix: the hosts of f (without an inventory, the
// brokers of cfg.Cluster: loadOrDiscover) scanned with cfg (a progress bar
// unless quiet), then Fix. With j.Apply the journal directory
// (JournalDir of j.JournalDir, the --journal-dir flag) is made before
// connecting anywhere: an apply without one would be refused later.
func FixFleet(ctx context.Context, c Console, f Fleet, cfg Config, quiet bool, j FixJob) error {
	inv, hosts, err := f.loadOrDiscover(ctx, c, cfg.Cluster)
	if err != nil {
		return err
	}
	cfg.ClientsGroup, j.Rollback = ClientsGroup(cfg.ClientsGroup, inv), f.rollbackTarget(cfg.Cluster)
	if j.Apply {
		if j.JournalDir != "" {
			j.Rollback = append(j.Rollback, "--journal-dir", j.JournalDir)
		}
		if j.JournalDir, err = JournalDir(j.JournalDir); err != nil {
			return err
		}
	}
	runner, err := f.connect(c, hosts, &cfg.Concurrency)
	if err != nil {
		return err
	}
	defer runner.Close()
	cfg.Runner = runner
	r, err := ScanOnTerminal(ctx, c, hosts, cfg, quiet)
	if err != nil {
		return err
	}
	warnCluster(c, r.Cluster)
	j.Config.Runner, j.Config.Timeout, j.Config.ConnectTimeout = cfg.Runner, cfg.Timeout, cfg.ConnectTimeout
	if j.Apply {
		j.Config.Batch = fitWarned(c, j.Config.Batch)
	}
	return Fix(ctx, c, r, hosts, j)
}

// RollbackFleet is kaudit rollback: j checked, its journal directory
// made (JournalDir of j.JournalDir, the --journal-dir flag), then
// RollbackRun on the hosts of f (without an inventory, the brokers of
// src, as fix found them: loadOrDiscover).
func RollbackFleet(ctx context.Context, c Console, f Fleet, src *ClusterSource, j RollbackJob) error {
	if err := j.Check(); err != nil {
		return err
	}
	var err error
	if j.JournalDir, err = JournalDir(j.JournalDir); err != nil {
		return err
	}
	_, hosts, err := f.loadOrDiscover(ctx, c, src)
	if err != nil {
		return err
	}
	runner, err := f.connect(c, hosts, &j.Config.Concurrency)
	if err != nil {
		return err
	}
	defer runner.Close()
	j.Config.Runner = runner
	if j.List {
		return ListRuns(ctx, c, hosts, j)
	}
	return RollbackRun(ctx, c, hosts, j)
}
