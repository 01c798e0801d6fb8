package pipeline

import (
	"errors"
	"fmt"
	"time"

	"github.com/kaudit/kaudit/audit/probe"
)

// Check validates a scan's fan-out as a person asked for it (flags): at
// least one host at once, positive deadlines. (Audit itself takes zero
// values as the defaults.)
func (c Config) Check() error {
	if c.Concurrency < 1 {
		return errors.New("--concurrency must be at least 1")
	}
	if c.Timeout <= 0 || c.ConnectTimeout <= 0 {
		return errors.New("--timeout and --connect-timeout must be positive")
	}
	return nil
}

// ProbeFor is how a scan probes: nil without on (--probe), else the
// probe with budget (--probe-budget), which must lie within the probe's
// bounds.
func ProbeFor(on bool, budget time.Duration) (*probe.Options, error) {
	if !on {
		return nil, nil
	}
	if budget < probe.MinBudget || budget > probe.MaxBudget {
		return nil, fmt.Errorf("--probe-budget must be between %s and %s", probe.MinBudget, probe.MaxBudget)
	}
	return &probe.Options{Budget: budget}, nil
}
