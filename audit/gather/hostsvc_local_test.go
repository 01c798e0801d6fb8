package gather_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/gather"
)

// TestHostServicesOnThisMachine runs the timesync, conntrack-stat and
// rdns sections under every POSIX shell present: the conntrack counters
// as /proc has them, reverse DNS only with a SASL listener, and the
// loopback address resolved back to a name.
func TestHostServicesOnThisMachine(t *testing.T) {
	dir := t.TempDir()
	sasl := filepath.Join(dir, "sasl.properties")
	plain := filepath.Join(dir, "plain.properties")
	if err := os.WriteFile(sasl, []byte("listeners=INTERNAL://:9093,EXTERNAL://:9094\nlistener.security.protocol.map=INTERNAL:sasl_plaintext,EXTERNAL:SSL\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, []byte("listeners=PLAINTEXT://:9092\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sh := range [][]string{{"dash"}, {"busybox", "sh"}} {
		if _, err := exec.LookPath(sh[0]); err != nil {
			continue
		}
		t.Run(sh[0], func(t *testing.T) {
			f, out := runLocal(t, sh, gather.Params{KafkaPort: 9092, KafkaConfig: sasl, RDNSSelf: "127.0.0.1", RDNSPeers: []string{"localhost"}})
			r := f.ReverseDNS
			if r == nil || len(r.Lookups) != 2 {
				t.Fatalf("rdns %+v (%+v)\n%s", r, f.Sections[facts.SecRDNS], out)
			}
			if l := r.Lookups[0]; l.Peer || l.Stat != facts.PTRFound || l.IP != "127.0.0.1" || l.Name == "" || l.Millis < 0 {
				t.Errorf("own lookup %+v", l)
			}
			if l := r.Lookups[1]; !l.Peer || l.Addr != "localhost" || l.IP == "" {
				t.Errorf("peer lookup %+v", l)
			}
			raw, err := os.ReadFile("/proc/net/stat/nf_conntrack")
			switch {
			case err == nil:
				cpus := len(strings.Split(strings.TrimSpace(string(raw)), "\n")) - 1
				if f.ConntrackStat == nil || f.ConntrackStat.CPUs != cpus {
					t.Errorf("conntrack stat %+v, want %d CPUs (%+v)", f.ConntrackStat, cpus, f.Sections[facts.SecConntrack])
				}
			case os.IsNotExist(err):
				if f.ConntrackStat != nil || f.Sections[facts.SecConntrack].State != facts.SectionAbsent {
					t.Errorf("no nf_conntrack here, yet %+v %+v", f.ConntrackStat, f.Sections[facts.SecConntrack])
				}
			}
			if f.TimeSync == nil && f.Sections[facts.SecTimeSync].Message == "" {
				t.Errorf("timesync neither read nor explained: %+v", f.Sections)
			}

			f, out = runLocal(t, sh, gather.Params{KafkaPort: 9092, KafkaConfig: plain, RDNSSelf: "127.0.0.1"})
			if f.ReverseDNS != nil || f.Sections[facts.SecRDNS].State != facts.SectionAbsent {
				t.Errorf("rdns without SASL: %+v %+v\n%s", f.ReverseDNS, f.Sections[facts.SecRDNS], out)
			}
		})
	}
}
