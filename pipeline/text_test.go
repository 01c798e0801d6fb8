package pipeline

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/remediate"
)

// TestRunTallySaysWhoRestarted: the run's last line counts the verified
// hosts whose changes need a restart and says which kaudit restarted
// (--restart, the change in force) and what the others need; it never
// claims kaudit does not restart brokers.
func TestRunTallySaysWhoRestarted(t *testing.T) {
	backlog := remediate.Change{Kind: remediate.KindKafkaProperty, Target: "socket.listen.backlog.size", From: "50", To: "4096", RestartRequired: true}
	sysctl := remediate.Change{Kind: remediate.KindSysctl, Target: "net.core.somaxconn", From: "128", To: "4096"}
	host := func(name string, c remediate.Change, r *remediate.Restart) remediate.HostJournal {
		return remediate.HostJournal{Host: name, Status: remediate.StatusVerified, Changes: []remediate.Change{c}, Restart: r}
	}
	inForce := &remediate.Restart{Unit: "kafka.service", OldPID: 1, NewPID: 2, InForce: true}
	refused := &remediate.Restart{Refused: "the broker (pid 7) is not a systemd service"}
	for _, c := range []struct {
		name  string
		hosts []remediate.HostJournal
		want  string
	}{
		{"no restart needed", []remediate.HostJournal{host("a", sysctl, nil)},
			"1 host changed and verified, 0 of them need a broker restart\n"},
		{"not asked", []remediate.HostJournal{host("a", backlog, nil), host("b", sysctl, nil)},
			"2 hosts changed and verified, 1 of them needs a broker restart (" + remediate.RestartByHand + ")\n"},
		{"all restarted", []remediate.HostJournal{host("a", backlog, inForce), host("b", backlog, inForce)},
			"2 hosts changed and verified, 2 of them need a broker restart: restarted, the changes in force\n"},
		{"one refused", []remediate.HostJournal{host("a", backlog, inForce), host("b", backlog, refused)},
			"2 hosts changed and verified, 2 of them need a broker restart: 1 restarted, the changes in force; 1 not (" + remediate.RestartByHand + ")\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			writeRun(&b, &remediate.Journal{Hosts: c.hosts})
			if !strings.Contains(b.String(), c.want) {
				t.Errorf("got:\n%s\nwant a line:\n%s", b.String(), c.want)
			}
			if strings.Contains(b.String(), "never restarts") {
				t.Errorf("the run says kaudit never restarts a broker:\n%s", b.String())
			}
		})
	}
}
