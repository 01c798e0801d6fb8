package gather

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/parse"
)

// connParams renders the script's connection variables: PROFILE,
// CLIENT_PORTS, CONN_LIMIT and the two awk programs.
func connParams(p Params) (string, error) {
	limit := p.ConnLimit
	if limit == 0 {
		limit = DefaultConnLimit
	}
	if limit < 1 || limit > 1_000_000 {
		return "", fmt.Errorf("gather: connection limit %d out of range 1-1000000", limit)
	}
	profile := "broker"
	var ports []string
	if p.Client {
		profile = "client"
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
	return fmt.Sprintf("PROFILE=%s\nCLIENT_PORTS=%s\nCONN_LIMIT=%d\nEST_AWK=%s\nCONNS_AWK=%s\n",
		profile, Quote(strings.Join(ports, " ")), limit, Quote(establishedAwk), Quote(connsAwk)), nil
}

// brokerOnly are the sections the client profile does not gather.
var brokerOnly = []string{facts.SecPersisted, facts.SecChangelog, facts.SecNetstat, facts.SecListeners, facts.SecKafka,
	facts.SecKafkaConf, facts.SecNICs, facts.SecEvidence, facts.SecEstablished}

// secProfile is the section a client-profile run starts with ("client").
const secProfile = "profile"

// assembleConns reads the established and conns sections into f; for a
// client-profile run it also sets Role and drops the notes of the broker
// sections it never gathered.
func assembleConns(secs map[string]Section, f *facts.Facts, note func(name, state, msg string)) {
	client := strings.TrimSpace(secs[secProfile].Body) == facts.RoleClient
	if client {
		f.Role = facts.RoleClient
		for _, s := range brokerOnly {
			delete(f.Sections, s)
		}
	}
	if !client {
		if s, ok := usableSection(secs, facts.SecEstablished, note); ok {
			if est, err := parse.EstablishedCounts(s.Body); err != nil {
				note(facts.SecEstablished, "error", err.Error())
			} else {
				f.Established = est
			}
		}
	}
	if s, ok := usableSection(secs, facts.SecConns, note); ok {
		conns, total, err := parse.ConnsSection(s.Body)
		if err != nil {
			note(facts.SecConns, "error", err.Error())
			return
		}
		f.Conns, f.ConnsTotal = conns, total
	}
}

func usableSection(secs map[string]Section, name string, note func(name, state, msg string)) (Section, bool) {
	s, ok := secs[name]
	switch {
	case !ok:
		note(name, "error", "section missing from gather output")
	case s.State != "ok":
		note(name, s.State, s.Body)
	}
	return s, ok && s.State == "ok"
}
