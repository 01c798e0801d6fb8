// Command simfleet serves N simulated Kafka broker hosts over real SSH on
// loopback addresses, in its own process, so that `kaudit scan` can be
// measured alone against a fleet of any size:
//
//	go run ./bench/simfleet -hosts 10000 -out /tmp/fleet &
//	# wait for the line containing "ready"
//	kaudit scan /tmp/fleet/inventory.yaml -f json -o r.json
//
// Host i listens on 127.A.B.C:PORT (A = 1 + i/62500, B, C from i): one
// address per host keeps the client's ephemeral port range free and the
// inventory readable. The hosts cycle through the demo fleet's seven
// broker profiles (test/simhost.DemoFleet), each under its own name.
// DIR gets inventory.yaml, known_hosts (one shared ed25519 host key, checked
// strictly) and id_ed25519 (the client key the hosts accept). The soft
// RLIMIT_NOFILE is raised to the hard limit first: every host holds a
// listening socket, every connection one more.
//
// simfleet serves until SIGINT or SIGTERM, then closes every server and
// exits 0.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/kaudit/kaudit/internal/located"
)

func main() {
	n := flag.Int("hosts", 1000, "number of simulated hosts")
	out := flag.String("out", "", "directory to write inventory.yaml, known_hosts and id_ed25519 into (created)")
	port := flag.Int("port", 2222, "SSH port every host listens on (each host has its own 127.x.y.z address)")
	flag.Parse()
	if err := run(*n, *out, *port); err != nil {
		fmt.Fprintf(os.Stderr, "simfleet: error: %v\n", err)
		os.Exit(1)
	}
}

func run(n int, out string, port int) error {
	if n < 1 || n > maxHosts {
		return fmt.Errorf("-hosts must be between 1 and %d", maxHosts)
	}
	if out == "" {
		return fmt.Errorf("-out DIR is required")
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	out, err := filepath.Abs(out) // the inventory names its key files absolutely
	if err != nil {
		return err
	}
	limit, err := raiseNoFile()
	if err != nil {
		return err
	}
	if need := uint64(n) + 256; limit < need {
		return located.Hint(fmt.Errorf("open-file limit %d is below the %d this fleet needs", limit, need), "ulimit -Hn; run as root or lower -hosts")
	}
	f, err := startFleet(out, n, port)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := writeInventory(out, f); err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	fmt.Printf("simfleet: %d hosts ready; inventory %s/inventory.yaml; rss %d MiB; open-file limit %d\n", n, out, rssMiB(), limit)
	s := <-sig
	fmt.Printf("simfleet: %v: stopping (%d sessions served)\n", s, sessions(f))
	return nil
}

// raiseNoFile lifts the soft open-file limit to the hard one and returns it.
func raiseNoFile() (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, err
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			return 0, fmt.Errorf("raise the open-file limit to %d: %w", rl.Max, err)
		}
	}
	return rl.Cur, nil
}
