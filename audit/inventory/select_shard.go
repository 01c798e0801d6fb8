package inventory

import "github.com/kaudit/kaudit/internal/shard"

// Shard is part K of a fleet split N ways: see internal/shard. A host
// belongs to shard FNV-1a-64(name) mod N, so its shard does not move when
// the inventory is reordered, regrouped or grows.
type Shard = shard.Shard

// ParseShard reads "K/N", K counted from 0 as JOB_COMPLETION_INDEX is.
func ParseShard(s string) (Shard, error) { return shard.Parse(s) }

// SelectShard keeps the hosts s owns, in their order. A shard may be
// empty (a tiny fleet split many ways): that is not an error.
func SelectShard(s Shard, hosts []Host) []Host {
	var out []Host
	for _, h := range hosts {
		if s.Owns(h.Name) {
			out = append(out, h)
		}
	}
	return out
}
