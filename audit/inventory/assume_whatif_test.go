package inventory_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/whatif"
)

// An inventory value the loader accepts must be one the what-if accepts:
// assume_kafka has exactly the syntax of --assume-kafka, and assume_kernel
// is at least as strict as --assume-kernel (no late failure after a scan).
func TestAssumeAgreesWithWhatIf(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	parse := func(key, v string) error {
		_, err := inventory.Parse("inv.yaml", []byte(fmt.Sprintf("hosts:\n  b1: {%s: %q}\n", key, v)))
		return err
	}
	for _, v := range []string{"3.6.1", "3.6", "3.6.1.2", "3.6.1.2.3", "3", "apache:3.6.1", "Confluent:7.6.0", "confluent:7.6.0, 3.7.0",
		"3.6.1,3.7.0", "kraft:3.6.1", "3.x", "3.-6.1", "+3.6.1", "3..1", "3.6.1,", ":3.6.1", " 3.6.1 ", "3.6.1 beta"} {
		_, werr := whatif.ParseAssumeKafka(v)
		if ierr := parse("assume_kafka", v); (ierr == nil) != (werr == nil) {
			t.Errorf("assume_kafka %q: inventory %v, --assume-kafka %v", v, ierr, werr)
		}
	}
	for _, v := range []string{"6.1.0", "5.15.0-91-generic", "3.10.0-1160.95.1.el7.x86_64", "6.1.0+rpt~1_x", "latest", "6.1 rc", "6/1",
		"-6.1", strings.Repeat("6", 128), strings.Repeat("6", 129), "6.1.0#1"} {
		if parse("assume_kernel", v) == nil {
			if err := whatif.ValidateKernelRelease(v); err != nil {
				t.Errorf("assume_kernel %q accepted by the inventory, rejected by the what-if: %v", v, err)
			}
		}
	}
}
