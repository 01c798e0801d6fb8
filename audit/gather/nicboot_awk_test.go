package gather_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/nicpersist"
)

// awkProgram cuts, out of gather.sh, the single-quoted awk program that
// contains marker.
func awkProgram(t *testing.T, marker string) string {
	t.Helper()
	b, err := os.ReadFile("gather.sh")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("gather.sh has no %q", marker)
	}
	start := strings.LastIndex(s[:i], "awk '") + len("awk '")
	end := i + strings.Index(s[i:], "'")
	return s[start:end]
}

// TestNICBootAwk runs the nics section's .link, udev and ifupdown awk
// programs on the boot-settings fixtures (audit/parse/testdata/nicboot)
// and parses what they print: the lines nicpersist.Boot reads.
func TestNICBootAwk(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "parse", "testdata", "nicboot"))
	if err != nil {
		t.Fatal(err)
	}
	linkAwk := awkProgram(t, `print "@link " ARGV[i]`)
	udevAwk := awkProgram(t, `print "@udev-rule "`)
	ifaceAwk := awkProgram(t, `print "@iface-opt "`)
	for _, awk := range awks(t) {
		run := func(env []string, prog string, files ...string) []string {
			cmd := exec.Command(awk[0], append(append(append([]string{}, awk[1:]...), prog), files...)...)
			cmd.Env = env
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %v", awk, err)
			}
			return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		}
		t.Run(strings.Join(awk, " "), func(t *testing.T) {
			var lines []string
			lines = append(lines, "@udev-version 252")
			lines = append(lines, run(nil, linkAwk, dir+"/kaudit-10-eth0.link", dir+"/netplan-eth1.link")...)
			lines = append(lines, run(nil, udevAwk, dir+"/70-nanopi-m6-network.rules", dir+"/99-kaudit-ethtool.rules", dir+"/70-nanopi-m6-network.rules")...)
			lines = append(lines, "@ifupdown-hook /etc/network/if-pre-up.d/ethtool")
			lines = append(lines, run([]string{"I=eth0"}, ifaceAwk, dir+"/interfaces")...)
			b := nicpersist.Boot("eth0", "ixgbe", &facts.NICPersist{Mechanism: facts.PersistIfupdown, MAC: "52:54:00:aa:bb:cc"}, lines)
			got := map[string]string{}
			for k, v := range b.Settings {
				got[k] = v.Value + " " + filepath.Base(v.Source)
			}
			want := map[string]string{
				// the .link (first match) first, then the udev rules by
				// name, then the stanza: hook options, post-up last.
				"rx": "4096 interfaces:9", "tx": "512 70-nanopi-m6-network.rules:4",
				"tso": "on interfaces:11", "gso": "on 70-nanopi-m6-network.rules:3",
				"gro": "on interfaces:13",
			}
			if !reflect.DeepEqual(got, want) || len(b.Unsure) != 0 {
				t.Errorf("got %v (unsure %q)\nwant %v\nlines:\n%s", got, b.Unsure, want, strings.Join(lines, "\n"))
			}
		})
	}
}
