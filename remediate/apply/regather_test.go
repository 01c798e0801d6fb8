package apply

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/remediate"
)

// scriptRunner keeps the script it is given and fails the session.
type scriptRunner struct{ script []byte }

func (r *scriptRunner) Run(_ context.Context, _ transport.Target, script []byte) (*transport.Output, error) {
	r.script = append([]byte(nil), script...)
	return nil, errors.New("no session in this test")
}

// TestRegatherReadsWhatTheScanRead: the verify's re-gather reads the
// catalog's plain files and the planned keys besides the rules' sysctls,
// so the rules judged on its facts (the residual, the restart's checks)
// see what the scan saw rather than unknowns.
func TestRegatherReadsWhatTheScanRead(t *testing.T) {
	r := &scriptRunner{}
	opt := Options{Runner: r, SysctlKeys: []string{"net.core.somaxconn"}, Files: []string{"/sys/kernel/mm/transparent_hugepage/defrag"}}
	changes := []remediate.Change{{Kind: remediate.KindSysctl, Target: "vm.zone_reclaim_mode"}}
	if _, err := regather(context.Background(), Host{Inv: inventory.Host{Name: "b1", Address: "192.0.2.1"}}, opt, changes); err == nil {
		t.Fatal("regather succeeded without a session")
	}
	for _, want := range []string{"/sys/kernel/mm/transparent_hugepage/defrag", "net.core.somaxconn", "vm.zone_reclaim_mode"} {
		if !bytes.Contains(r.script, []byte(want)) {
			t.Errorf("the re-gather's script does not read %s", want)
		}
	}
}
