package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/test/simhost"
)

// maxHosts: 127.1.0.1 … 127.16.255.250 leaves room for far more than a
// single process can serve.
const maxHosts = 1_000_000

// addr is host i's listening address: 127.(1+i/62500).(i/250%250).(1+i%250).
func addr(i, port int) string {
	return fmt.Sprintf("127.%d.%d.%d:%d", 1+i/62500, i/250%250, 1+i%250, port)
}

// hostName names host i after the demo profile it serves, e.g.
// sim-00042-centos7: sorting by name keeps the inventory's order.
func hostName(i int, demo string) string {
	profile := strings.TrimPrefix(demo, "kafka-")
	if k := strings.LastIndexByte(profile, '-'); k > 0 {
		profile = profile[:k]
	}
	return fmt.Sprintf("sim-%05d-%s", i, profile)
}

// startFleet serves n hosts cycling through the demo fleet's profiles.
func startFleet(dir string, n, port int) (*simhost.Fleet, error) {
	hosts := make([]*simhost.Host, n)
	for i := range hosts {
		demo := simhost.DemoFleet()
		h := demo[i%len(demo)]
		h.Name = hostName(i, h.Name)
		hosts[i] = h
	}
	return simhost.StartOn(dir, hosts, func(i int) string { return addr(i, port) })
}

// writeInventory writes DIR/inventory.yaml in kaudit's own format: the
// fleet's key and known_hosts as defaults, one line per host.
func writeInventory(dir string, f *simhost.Fleet) error {
	path := filepath.Join(dir, "inventory.yaml")
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(file)
	fmt.Fprintf(w, "# Written by bench/simfleet: %d simulated hosts on loopback.\n", len(f.Hosts))
	fmt.Fprintf(w, "defaults:\n  user: kafka\n  use_agent: false\n  identity_files: [%s]\n  known_hosts: [%s]\n", quote(f.KeyFile), quote(f.KnownHosts))
	fmt.Fprintf(w, "  host_key_policy: strict\n  become: \"\"\n  connect_timeout: 10s\n  timeout: 60s\nhosts:\n")
	for _, h := range f.Hosts {
		fmt.Fprintf(w, "  %s: {address: %s, port: %d}\n", h.Name, h.Address, h.Port)
	}
	if err := w.Flush(); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

// quote renders a path as a YAML double-quoted string.
func quote(s string) string { return strconv.Quote(s) }

func sessions(f *simhost.Fleet) int {
	n := 0
	for _, s := range f.Servers {
		n += s.SessionCount()
	}
	return n
}

// rssMiB is this process's resident set size.
func rssMiB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(f[1])
			return kb / 1024
		}
	}
	return -1
}
