package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/discover"
	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// ClusterSource is scan --bootstrap: the Kafka cluster to ask for its
// brokers, and how to connect to it.
type ClusterSource struct {
	Bootstrap []string
	// CommandConfig is a Kafka CLI client.properties (--command-config);
	// when set it gives the client settings and Client's secrets and
	// TLS files are taken from it.
	CommandConfig string
	Client        discover.ClientConfig
	// Map pins node ids to inventory host names (a map file), read from
	// MapFile (--broker-map; serve reads it again on each reload).
	Map     map[int32]string
	MapFile string
	// Options, when set, replaces the connection settings (tests).
	Options *discover.Options
	// found is the answer the fleet was made from (no inventory): the
	// scan reuses it rather than ask again.
	found *discover.Cluster
	// named is, without an inventory, the node id the cluster gave each
	// host it named (discoveredInventory); nil with an inventory.
	named map[string]int32
	// leftOut are the inventory's hosts this run does not audit (--limit):
	// a broker that is one of them is not "in no inventory" (leaveOut).
	leftOut []inventory.Host
}

// Discover asks the cluster for its brokers.
func (s *ClusterSource) Discover(ctx context.Context) (*discover.Cluster, error) {
	if s.found != nil {
		return s.found, nil
	}
	o, err := s.options()
	if err != nil {
		return nil, err
	}
	return discover.Discover(ctx, o)
}

// ask is Discover with the answer kept for the rest of this command (a
// fix or rollback judges its hosts against the cluster the scan asked).
func (s *ClusterSource) ask(ctx context.Context) (*discover.Cluster, error) {
	cl, err := s.Discover(ctx)
	s.found = cl
	return cl, err
}

// Standing is the standing of host (its gathered facts f) toward the
// cluster s found (discover.Stand): a host the cluster named (no
// inventory) as the node id it gave, an inventory host otherwise,
// accepted when accept names it. Without a cluster every host stands.
func (s *ClusterSource) Standing(host string, f *facts.Facts, accept []string) (discover.Standing, bool) {
	if s == nil || s.found == nil {
		return discover.Standing{}, false
	}
	return s.standing(s.found, host, f, accept), true
}

func (s *ClusterSource) standing(cl *discover.Cluster, host string, f *facts.Facts, accept []string) discover.Standing {
	node, named := s.named[host]
	st := discover.Stand(cl, node, named, f)
	st.Accepted = slices.Contains(accept, host)
	return st
}

// mayProbe is audit.Options.MayProbe for a scan of s's hosts against
// cluster cl: a host the cluster alone named gets probe traffic only
// when it is proven its broker; an inventory host is the person's word
// (nil without a cluster).
func (s *ClusterSource) mayProbe(cl *discover.Cluster) func(inventory.Host, *facts.Facts) string {
	if s == nil || cl == nil || s.named == nil {
		return nil
	}
	return func(h inventory.Host, f *facts.Facts) string {
		return s.standing(cl, h.Name, f, nil).Refusal()
	}
}

// refusals are the hosts of r kaudit may not act on (Standing), with why.
func (s *ClusterSource) refusals(r *report.Report, accept []string) Refusals {
	out := Refusals{}
	for _, h := range r.Hosts {
		if st, ok := s.Standing(h.Name, h.Facts, accept); ok && !st.Acts() {
			out[h.Name] = st.Refusal()
		}
	}
	return out
}

func (s *ClusterSource) options() (discover.Options, error) {
	if s.Options != nil {
		return *s.Options, nil
	}
	c := s.Client
	if s.CommandConfig != "" {
		cc, err := discover.ReadCommandConfig(s.CommandConfig)
		if err != nil {
			return discover.Options{}, fmt.Errorf("--command-config %w", err)
		}
		cc.ServerName = c.ServerName
		if c.PasswordEnv != "" || c.PasswordFile != "" {
			cc.PasswordEnv, cc.PasswordFile = c.PasswordEnv, c.PasswordFile
		}
		c = cc
	}
	return c.Options(s.Bootstrap)
}

// clusterReport is what the report says about the cluster: its brokers,
// each matched to an audited broker host and proven by meta.properties,
// and the cluster-level findings (rules.ClusterCatalog), with their
// severity from the catalog.
//
// fleet, when given, is what the fleet pass kept of each host (aligned
// with hosts): the facts of a host whose own were spooled.
func clusterReport(cl *discover.Cluster, src *ClusterSource, hosts []report.Host, fleet []*facts.Facts) *report.Cluster {
	var dh []discover.Host
	for i, h := range hosts {
		f := h.Facts
		if f == nil && i < len(fleet) {
			f = fleet[i]
		}
		if f != nil && f.Role == facts.RoleClient {
			continue
		}
		dh = append(dh, discover.Host{Name: h.Name, Address: h.Address, Facts: f})
	}
	for _, h := range src.leftOut {
		dh = append(dh, discover.Host{Name: h.Name, Address: h.Address, LeftOut: true})
	}
	return clusterOf(cl, src.Bootstrap, dh, src.Map)
}

func clusterOf(cl *discover.Cluster, bootstrap []string, hosts []discover.Host, pin map[int32]string) *report.Cluster {
	maps, probs := discover.Map(cl, hosts, pin)
	type brokerKey struct { // a node id the cluster gives twice is two brokers
		id   int32
		addr string
	}
	byID := map[brokerKey]discover.Mapping{}
	for _, m := range maps {
		byID[brokerKey{m.NodeID, m.Advertised}] = m
	}
	rc := &report.Cluster{ID: cl.ID, Bootstrap: strings.Join(bootstrap, ","), Controller: cl.Controller, ConfigsError: cl.ConfigsError,
		Quorum: quorumOf(cl.Quorum), QuorumError: cl.QuorumError, Problems: []report.ClusterProblem{}}
	factsOf := map[string]*facts.Facts{}
	for _, h := range hosts {
		factsOf[h.Name] = h.Facts
	}
	for _, b := range cl.Brokers {
		m := byID[brokerKey{b.NodeID, b.Addr()}]
		cb := report.ClusterBroker{NodeID: b.NodeID, Advertised: b.Addr(), Rack: b.Rack, Host: m.Host, By: m.By, Proof: m.Proof, Detail: m.Detail}
		if b.Configs != nil {
			cb.Configs = map[string]report.ClusterConfig{}
			for k, v := range b.Configs {
				cb.Configs[k] = report.ClusterConfig{Value: v.Value, Source: string(v.Source)}
			}
		}
		bound, ok := kafkaBound(b, &cb)
		if f := factsOf[m.Host]; ok && m.Proof == facts.ProofProven && f != nil {
			if msg, bad := rules.BrokerVersionMismatch(b.NodeID, m.Host, bound, f.Kafka); bad {
				probs = append(probs, discover.Problem{Kind: rules.RuleBrokerVersionMismatch, NodeID: b.NodeID, Host: m.Host, Message: msg})
			}
		}
		rc.Brokers = append(rc.Brokers, cb)
	}
	for _, p := range probs {
		r, _ := rules.Lookup(string(p.Kind))
		rc.Problems = append(rc.Problems, report.ClusterProblem{Rule: string(p.Kind), Severity: string(r.Severity), NodeID: p.NodeID, Host: p.Host, Message: p.Message})
	}
	sort.SliceStable(rc.Problems, func(i, j int) bool {
		return rules.Severity(rc.Problems[i].Severity).Rank() > rules.Severity(rc.Problems[j].Severity).Rank()
	})
	return rc
}

func quorumOf(q *discover.Quorum) *report.ClusterQuorum {
	if q == nil {
		return nil
	}
	rq := &report.ClusterQuorum{Leader: q.Leader, Voters: []report.QuorumVoter{}}
	for _, v := range q.Voters {
		rq.Voters = append(rq.Voters, report.QuorumVoter{ID: v.ID, Endpoints: v.Endpoints})
	}
	return rq
}

// kafkaBound is the lower bound on b's Kafka release its ApiVersions
// answer proves, written into cb with its evidence (or why there is none).
func kafkaBound(b discover.Broker, cb *report.ClusterBroker) (rules.KafkaBound, bool) {
	if b.APIVersions == nil {
		cb.KafkaEvidence = cmp.Or(b.APIVersionsError, "ApiVersions not asked")
		return rules.KafkaBound{}, false
	}
	bound, ok := rules.KafkaLowerBound(b.APIVersions)
	if !ok {
		cb.KafkaEvidence = "its ApiVersions answer lists no request version that proves a release"
		return bound, false
	}
	cb.KafkaAtLeast, cb.KafkaEvidence = bound.Release, bound.Evidence()
	return bound, true
}

// attachRunning gives f the running settings of the broker its
// meta.properties proves it is (discover.Prove: every readable
// meta.properties names cl's cluster and one node id, which the cluster
// gives one broker), and the cluster reported that broker's settings.
// Anything less leaves f as gathered: the rules then judge the file,
// never a guessed broker's settings.
func attachRunning(cl *discover.Cluster, f *facts.Facts) {
	if f == nil || f.Kafka == nil {
		return
	}
	id := -1
	for _, d := range f.Kafka.LogDirs {
		if d.Meta != nil {
			id = d.Meta.ID()
			break
		}
	}
	b, ok := cl.Broker(int32(id))
	if p, _ := discover.Prove(cl, int32(id), f); p != facts.ProofProven || !ok || b.Configs == nil {
		return
	}
	f.Kafka.Running = map[string]facts.RunningConfig{}
	for k, v := range b.Configs {
		f.Kafka.Running[k] = facts.RunningConfig{Value: v.Value, Source: string(v.Source)}
	}
}

// warnCluster tells the fix flow's user (who sees a plan, not a report)
// what the cluster cross-check found: a broker no plan covers, a running
// setting that could not be read.
func warnCluster(c Console, rc *report.Cluster) {
	if rc == nil {
		return
	}
	warnConfigs(c, rc, "the plan is from server.properties")
	for _, p := range rc.Problems {
		c.Warnf("cluster %s: %s (%s): %s", termsafe.Line(rc.ID), p.Rule, p.Severity, termsafe.Line(p.Message))
	}
}

// warnConfigs says, when the running brokers' settings could not be read
// (no DESCRIBE_CONFIGS), what the command used instead (then).
func warnConfigs(c Console, rc *report.Cluster, then string) {
	if rc != nil && rc.ConfigsError != "" {
		c.Warnf("cluster %s: the running brokers' settings could not be read (%s): %s", termsafe.Line(rc.ID), termsafe.Line(rc.ConfigsError), then)
	}
}
