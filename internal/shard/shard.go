// Package shard splits a fleet N ways by host name, for running one scan
// per node of a scheduler; audit/inventory selects hosts with it and
// report checks merged shards with it.
package shard

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/internal/located"
)

// Shard is part K of a fleet split N ways (0 <= K < N), for running one
// scan per node of a scheduler: a Kubernetes Indexed Job (K is
// JOB_COMPLETION_INDEX, N the completions) or a CI matrix. A host belongs
// to shard FNV-1a-64(name) mod N: a function of its name alone, so a
// host's shard does not move when the inventory is reordered, regrouped or
// grows, and every shard of one N is disjoint from the others and together
// they cover the fleet. The reports merge back with `kaudit merge`.
type Shard struct{ K, N int }

// Parse reads "K/N", K counted from 0 as JOB_COMPLETION_INDEX is.
func Parse(s string) (Shard, error) {
	const hint = `write K/N with 0 <= K < N, e.g. --shard 0/3, 1/3, 2/3 (K counts from 0, as JOB_COMPLETION_INDEX does)`
	ks, ns, ok := strings.Cut(s, "/")
	k, errK := strconv.Atoi(ks)
	n, errN := strconv.Atoi(ns)
	switch {
	case !ok || errK != nil || errN != nil:
		return Shard{}, located.Hint(fmt.Errorf("shard %q is not K/N", s), hint)
	case n < 1:
		return Shard{}, located.Hint(fmt.Errorf("shard %q: N must be at least 1", s), hint)
	case k < 0 || k >= n:
		return Shard{}, located.Hint(fmt.Errorf("shard %q: K must be between 0 and %d", s, n-1), hint)
	}
	return Shard{K: k, N: n}, nil
}

// String is the K/N form Parse reads.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// Owns reports whether the host named name belongs to this shard.
func (s Shard) Owns(name string) bool {
	if s.N <= 1 {
		return true
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return h.Sum64()%uint64(s.N) == uint64(s.K)
}
