package apply

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/safe"
	"github.com/kaudit/kaudit/remediate"
)

// dropInFile is a systemd drop-in the apply step writes.
type dropInFile struct {
	path    string
	content []byte
}

// reNoFile is a LimitNOFILE value kaudit writes: N or N:HARD.
var reNoFile = regexp.MustCompile(`^[1-9][0-9]{0,9}(:([1-9][0-9]{0,9}|infinity))?$`)

// dropIn validates a drop-in change (its unit, its path, its value) and
// collects the file for prepare; the unit is reloaded after the write.
func (p *prepared) dropIn(c remediate.Change) error {
	unit, ok := strings.CutSuffix(c.Target, " LimitNOFILE")
	switch {
	case !ok || !safe.ServiceName(unit):
		return fmt.Errorf("drop-in change %q: not a service's LimitNOFILE", c.Target)
	case c.PersistPath != remediate.DropInPath(unit):
		return fmt.Errorf("drop-in change %s: path %q, want %s", c.Target, c.PersistPath, remediate.DropInPath(unit))
	case !reNoFile.MatchString(c.To):
		return fmt.Errorf("drop-in change %s: value %q, want N or N:HARD", c.Target, c.To)
	}
	p.dropIns = append(p.dropIns, dropInFile{c.PersistPath, []byte(remediate.DropInText(c.To))})
	p.params.Units = append(p.params.Units, unit)
	return nil
}

// verifyDropIn checks, on the host gathered again after the apply, that
// systemd gives the unit the limit written (systemctl show, after the
// daemon-reload): a later drop-in or a typo would show here.
func verifyDropIn(f *facts.Facts, c remediate.Change) string {
	unit := strings.TrimSuffix(c.Target, " LimitNOFILE")
	if f.Kafka == nil || f.Kafka.Unit == nil || f.Kafka.Unit.Name != unit || f.Kafka.Unit.NoFile == nil {
		why := f.Sections[facts.SecBrokerUnit]
		return fmt.Sprintf("%s: systemd's LimitNOFILE could not be read back (%s %s)", unit, why.State, why.Message)
	}
	if got := remediate.LimitPair(*f.Kafka.Unit.NoFile); got != c.To {
		return fmt.Sprintf("%s: systemd gives LimitNOFILE=%s after the reload, want %s", unit, got, c.To)
	}
	return ""
}
