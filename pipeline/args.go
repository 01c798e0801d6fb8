package pipeline

import (
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/discover"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/rules"
)

// ScanFlags are a scan's fan-out flags as given: the Config they are
// bound to, --profile and --probe-records.
type ScanFlags struct {
	Config       Config
	Profile      string // --profile FILE ("" the default thresholds)
	ProbeRecords string // --probe-records DIR
}

// Load checks the flags and returns the scan's Config, failing at failOn,
// with its profile and probe records loaded.
func (f ScanFlags) Load(failOn rules.Severity, version string) (Config, error) {
	cfg := f.Config
	cfg.FailOn, cfg.ToolVersion = failOn, version
	if err := cfg.Check(); err != nil {
		return cfg, err
	}
	cfg.ProbeRecords = probeRecordsAt(f.ProbeRecords)
	prof, err := loadProfile(f.Profile)
	cfg.Profile = prof
	return cfg, err
}

// ClusterFlags are --bootstrap and the Kafka client flags as given (scan,
// probe, fix, rollback, serve).
type ClusterFlags struct {
	Bootstrap     string // HOST:PORT[,HOST:PORT…]
	CommandConfig string
	BrokerMap     string
	Client        discover.ClientConfig
}

// Source is the cluster to ask, nil without --bootstrap; its map is read
// from --broker-map.
func (f ClusterFlags) Source() (*ClusterSource, error) {
	if f.Bootstrap == "" {
		if f.BrokerMap != "" {
			return nil, located.Hint(fmt.Errorf("--broker-map maps the brokers of --bootstrap"), "give --bootstrap HOST:PORT too")
		}
		return nil, nil
	}
	var bs []string
	for _, b := range strings.Split(f.Bootstrap, ",") {
		if b = strings.TrimSpace(b); b != "" {
			bs = append(bs, b)
		}
	}
	src := &ClusterSource{Bootstrap: bs, CommandConfig: f.CommandConfig, Client: f.Client, MapFile: f.BrokerMap}
	if f.BrokerMap != "" {
		var err error
		if src.Map, err = discover.LoadMap(f.BrokerMap); err != nil {
			return nil, err
		}
	}
	return src, nil
}

// FleetArgs is what selects command cmd's hosts: its INVENTORY argument,
// and the cluster of --bootstrap (nil without it). The inventory is ""
// when there is none and --bootstrap makes the cluster's brokers the
// fleet; what says what --bootstrap alone does, for the usage error.
func (f ClusterFlags) FleetArgs(cmd string, args []string, what string) (string, *ClusterSource, error) {
	src, err := f.Source()
	switch {
	case err != nil:
		return "", nil, err
	case len(args) == 1:
		return args[0], src, nil
	case len(args) > 1 || src == nil:
		return "", nil, located.Hint(fmt.Errorf("%s needs exactly one INVENTORY argument, or --bootstrap HOST:PORT %s", cmd, what), "see inventory.example.yaml")
	}
	return "", src, nil
}

// ParseBatchBy is --batch-by: true for "rack" (one whole rack of a
// cluster at a time), false for "broker" or "".
func ParseBatchBy(s string) (byRack bool, err error) {
	switch s {
	case "", "broker":
		return false, nil
	case "rack":
		return true, nil
	}
	return false, located.Hint(fmt.Errorf("--batch-by %q", s), fmt.Sprintf("give %q (one rack of a cluster at a time) or %q (the default)", "rack", "broker"))
}
