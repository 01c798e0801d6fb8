package gather

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/parse"
	"github.com/kaudit/kaudit/internal/remote"
)

// connParams renders the script's connection variables: PROFILE,
// CLIENT_PORTS, CONN_LIMIT and the awk program of its ss run.
func connParams(p Params) (string, error) {
	limit := cmp.Or(p.ConnLimit, DefaultConnLimit)
	if limit < 1 || limit > 1_000_000 {
		return "", fmt.Errorf("gather: connection limit %d out of range 1-1000000", limit)
	}
	profile := "broker"
	var ports []string
	if p.Client {
		profile = string(facts.RoleClient)
		if len(p.ClientPorts) == 0 {
			return "", fmt.Errorf("gather: client profile without the brokers' Kafka ports")
		}
	}
	for _, port := range p.ClientPorts {
		if port < 1 || port > 65535 {
			return "", fmt.Errorf("gather: client port %d out of range 1-65535", port)
		}
		ports = append(ports, strconv.Itoa(port))
	}
	return fmt.Sprintf("PROFILE=%s\nCLIENT_PORTS=%s\nCONN_LIMIT=%d\nSOCKETS_AWK=%s\n",
		profile, remote.Quote(strings.Join(ports, " ")), limit, remote.Quote(socketsAwk)), nil
}

// brokerOnly are the sections the client profile does not gather.
var brokerOnly = map[string]bool{facts.SecPersisted: true, facts.SecChangelog: true, facts.SecNetstat: true,
	facts.SecListeners: true, facts.SecKafka: true, facts.SecNICs: true, facts.SecEvidence: true, facts.SecEstablished: true,
	facts.SecProcess: true, facts.SecLogDirs: true, facts.SecBrokerUnit: true,
	facts.SecCgroup: true, facts.SecLogDevices: true}

// secProfile is the section a client-profile run starts with ("client").
const secProfile = "profile"

// isClientRun reports whether the output is the client profile's.
func isClientRun(secs map[string]remote.Section) bool {
	s, ok := secs[secProfile]
	return ok && s.OK() && strings.TrimSpace(s.Body) == string(facts.RoleClient)
}

func (a *assembler) established(s remote.Section) {
	into(a, facts.SecEstablished, &a.f.Established)(parse.EstablishedCounts(s.Body))
}

func (a *assembler) conns(s remote.Section) {
	conns, total, err := parse.ConnsSection(s.Body)
	if err != nil {
		a.note(facts.SecConns, facts.SectionError, err.Error())
		return
	}
	a.f.Conns, a.f.ConnsTotal = conns, total
}
