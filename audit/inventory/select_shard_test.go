package inventory

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		err  string
	}{
		{in: "0/3", want: Shard{K: 0, N: 3}},
		{in: "2/3", want: Shard{K: 2, N: 3}},
		{in: "0/1", want: Shard{K: 0, N: 1}},
		{in: "3/3", err: "K must be between 0 and 2"},
		{in: "-1/3", err: "K must be between 0 and 2"},
		{in: "0/0", err: "N must be at least 1"},
		{in: "1", err: "is not K/N"},
		{in: "a/3", err: "is not K/N"},
		{in: "$(JOB_COMPLETION_INDEX)/3", err: "is not K/N"},
		{in: "", err: "is not K/N"},
	} {
		got, err := ParseShard(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "hint:") {
				t.Errorf("ParseShard(%q) = %v, %v; want error with %q and a hint", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || got.String() != tc.in {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func fleet(prefix string, n int) []Host {
	var hs []Host
	for i := 0; i < n; i++ {
		hs = append(hs, Host{Name: fmt.Sprintf("%s-%04d", prefix, i)})
	}
	return hs
}

// The shards of one N partition the fleet, and are balanced.
func TestShardPartition(t *testing.T) {
	hosts := fleet("broker", 3000)
	seen := map[string]int{}
	for k := 0; k < 3; k++ {
		got := SelectShard(Shard{K: k, N: 3}, hosts)
		if len(got) < 900 || len(got) > 1100 {
			t.Errorf("shard %d/3 has %d of 3000 hosts, want about 1000", k, len(got))
		}
		for _, n := range names(got) {
			seen[n]++
		}
	}
	for _, h := range hosts {
		if seen[h.Name] != 1 {
			t.Fatalf("%s is in %d shards, want exactly 1", h.Name, seen[h.Name])
		}
	}
}

// A host's shard depends on its name alone: reordering the inventory or
// adding hosts moves no existing host to another shard.
func TestShardStable(t *testing.T) {
	hosts := fleet("kafka", 500)
	before := map[string]int{}
	for k := 0; k < 4; k++ {
		for _, n := range names(SelectShard(Shard{K: k, N: 4}, hosts)) {
			before[n] = k
		}
	}
	shuffled := append([]Host(nil), hosts...)
	rand.New(rand.NewSource(1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	grown := append(append(fleet("new", 300), shuffled...), fleet("more", 200)...)
	for _, variant := range [][]Host{shuffled, grown} {
		for k := 0; k < 4; k++ {
			for _, n := range names(SelectShard(Shard{K: k, N: 4}, variant)) {
				if old, ok := before[n]; ok && old != k {
					t.Errorf("%s moved from shard %d to %d", n, old, k)
				}
			}
		}
	}
	// Select keeps the inventory's order within a shard.
	got := names(SelectShard(Shard{K: 1, N: 4}, shuffled))
	pos := map[string]int{}
	for i, h := range shuffled {
		pos[h.Name] = i
	}
	if !slices.IsSortedFunc(got, func(a, b string) int { return pos[a] - pos[b] }) {
		t.Error("Select reordered the hosts")
	}
}

// The assignment is part of kaudit's interface (shards of one fleet may be
// run by different kaudit builds): pin it.
func TestShardAssignmentPinned(t *testing.T) {
	// FNV-1a 64 of the name, mod 3 (checked independently in Python).
	pinned := map[string]int{"broker-1": 0, "broker-2": 2, "broker-3": 1, "kafka-centos7-01": 1, "kafka-focal-02": 1, "sim-00000-centos7": 0}
	for n, want := range pinned {
		for k := 0; k < 3; k++ {
			if got := (Shard{K: k, N: 3}).Owns(n); got != (k == want) {
				t.Errorf("Shard{K: %d, N: 3}.Owns(%q) = %v; %s is pinned to %d/3", k, n, got, n, want)
			}
		}
	}
}
