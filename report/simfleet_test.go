package report

import (
	"fmt"
	"strings"
	"testing"
)

// demoReport is the demo fleet's scan: a copy of docs/demo/report.json
// (docs/generate.sh) with its times zeroed; ten hosts, one unreachable,
// one producer.
const demoReport = "testdata/demo.json"

// simulatedFleet is the report of bench/simfleet -hosts n: host i serves
// the demo profile i%10 and is named as simfleet names it
// (sim-00042-bionic). With clusters > 0 the brokers are split into that
// many inventory groups (prod-1, …) in blocks, as a fleet of clusters
// would be; the producers keep their group.
func simulatedFleet(t testing.TB, n, clusters int) *Report {
	t.Helper()
	demo, err := Load(demoReport)
	if err != nil {
		t.Fatal(err)
	}
	r := *demo
	r.Inventory = fmt.Sprintf("simfleet (%d simulated hosts)", n)
	r.Hosts = make([]Host, n)
	for i := range r.Hosts {
		h := demo.Hosts[i%len(demo.Hosts)]
		h.Name = simName(i, h.Name)
		h.Address = fmt.Sprintf("127.%d.%d.%d", 1+i/62500, i/250%250, 1+i%250)
		switch {
		case clusters == 0:
			h.Groups = nil // simfleet's inventory has no groups
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
