package report

import (
	"fmt"
	"strings"
)

// Simulated is the report bench/simfleet -hosts n would give, built from
// demo, a scan of the demo fleet (docs/demo/report.json): host i is demo's
// host i%len, named as simfleet names it (sim-00042-bionic), at its
// address. With clusters > 0 the hosts not in the "clients" group are split
// into that many inventory groups (prod-1, …) in blocks, as a fleet of
// clusters would be; with 0 they have none, as in simfleet's inventory.
// For tests, benchmarks and the docs' browser test: no scan needed.
func Simulated(demo *Report, n, clusters int) *Report {
	r := *demo
	r.Inventory = fmt.Sprintf("simfleet (%d simulated hosts)", n)
	r.Hosts = make([]Host, n)
	for i := range r.Hosts {
		h := demo.Hosts[i%len(demo.Hosts)]
		h.Name = simName(i, h.Name)
		h.Address = fmt.Sprintf("127.%d.%d.%d", 1+i/62500, i/250%250, 1+i%250)
		switch {
		case clusters == 0:
			h.Groups = nil
		case len(h.Groups) == 0 || h.Groups[0] != "clients":
			h.Groups = []string{fmt.Sprintf("prod-%d", 1+i*clusters/n)}
		}
		r.Hosts[i] = h
	}
	Summarize(&r)
	return &r
}

// simName is bench/simfleet's hostName: sim-00042-bionic for demo host
// kafka-bionic-05.
func simName(i int, demo string) string {
	profile := strings.TrimPrefix(demo, "kafka-")
	if k := strings.LastIndexByte(profile, '-'); k > 0 {
		profile = profile[:k]
	}
	return fmt.Sprintf("sim-%05d-%s", i, profile)
}
