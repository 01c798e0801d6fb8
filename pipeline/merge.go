package pipeline

import (
	"github.com/kaudit/kaudit/fleetpass"
	"github.com/kaudit/kaudit/report"
)

// Merge is kaudit merge: the shards' reports joined (report.MergeFiles),
// the fleet rules run again over every shard's hosts, then rerender
// (which summarizes).
func Merge(c Console, files []string, f OutputFlags, failOnSet bool) error {
	r, err := report.MergeFiles(files)
	if err != nil {
		return err
	}
	fleetpass.Run(r)
	return rerender(c, r, f, failOnSet)
}
