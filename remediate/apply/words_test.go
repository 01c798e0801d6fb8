package apply

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
)

// cannedHost answers every script with lines (each after the script's
// marker).
type cannedHost []string

func (c cannedHost) Run(_ context.Context, _ transport.Target, script []byte) (*transport.Output, error) {
	m, _ := remote.ScriptMarker(script)
	var b strings.Builder
	for _, l := range c {
		fmt.Fprintf(&b, "%s\t%s\n", m, l)
	}
	return &transport.Output{Stdout: []byte(b.String())}, nil
}

// A step word this kaudit does not know is refused where the result lines
// are read, naming the host and the step — never counted as something
// else (before, a restore that said "Restored" counted as nothing, and
// the host as restored).
func TestUnknownStepWordRefused(t *testing.T) {
	hj := remediate.HostJournal{Host: "h1", Runtime: []remediate.RuntimeValue{{Kind: remediate.KindSysctl, Key: "net.core.somaxconn", Before: "128", After: "4096", Changed: remediate.ChangedYes}}}
	h := inventory.Host{Name: "h1"}
	opt := Options{Timeout: time.Minute}
	for _, tc := range []struct {
		name  string
		lines []string
		want  string // "" the restore is counted
	}{
		{"known", []string{"lease\tok\tfree", "manifest\tok\tpresent", "restore-sysctl-0\tok\trestored", "done\tok\tok"}, ""},
		{"restore word", []string{"lease\tok\tfree", "manifest\tok\tpresent", "restore-sysctl-0\tok\tRestored", "done\tok\tok"}, `h1: step restore-sysctl-0 said "Restored"`},
		{"manifest word", []string{"lease\tok\tfree", "manifest\tok\tgone", "done\tok\tok"}, `h1: step manifest said "gone"`},
		{"done word", []string{"lease\tok\tfree", "manifest\tok\tpresent", "restore-sysctl-0\tok\tunchanged", "done\tok\tfine"}, `h1: step done said "fine"`},
		{"lease word", []string{"lease\tfail\tbusy\tr1"}, `h1: step lease said "busy"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt.Runner = cannedHost(tc.lines)
			res, err := rollbackHost(context.Background(), h, opt, tRun, hj)
			switch {
			case tc.want == "" && (err != nil || res.Restored != 1):
				t.Errorf("%+v %v, want 1 restored", res, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "does not know")):
				t.Errorf("%+v %v, want an error with %q", res, err, tc.want)
			}
		})
	}
	// The read step: a file neither absent nor present.
	opt.Runner = cannedHost{"file-0\tok\tmissing", "done\tok\t-"}
	if _, err := read(context.Background(), opt, h, []string{"/etc/sysctl.d/99-kaudit.conf"}, nil, nil, nil); err == nil || !strings.Contains(err.Error(), `h1: step file-0 said "missing"`) {
		t.Errorf("read: %v", err)
	}
}
