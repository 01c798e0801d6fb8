package discover

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/kaudit/kaudit/internal/fanout"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/redact"
)

// ConfigKeys are the broker settings kaudit reads from the running broker:
// the ones its rules judge (the same keys it reads from server.properties).
var ConfigKeys = []string{
	"socket.listen.backlog.size", "socket.receive.buffer.bytes", "socket.send.buffer.bytes",
	"listeners", "log.dirs", "num.network.threads",
}

// Source is where a running broker's config value comes from.
type Source string

// The sources kaudit tells apart (kmsg.ConfigSource, KIP-226).
const (
	SourceStatic         Source = "static"          // the broker's server.properties (or --override)
	SourceDynamic        Source = "dynamic"         // a dynamic config of this broker
	SourceDynamicDefault Source = "dynamic-default" // a dynamic cluster-wide default
	SourceDefault        Source = "default"         // Kafka's built-in default
	SourceOther          Source = "other"
)

func sourceOf(s kmsg.ConfigSource) Source {
	switch s {
	case kmsg.ConfigSourceStaticBrokerConfig:
		return SourceStatic
	case kmsg.ConfigSourceDynamicBrokerConfig:
		return SourceDynamic
	case kmsg.ConfigSourceDynamicDefaultBrokerConfig:
		return SourceDynamicDefault
	case kmsg.ConfigSourceDefaultConfig:
		return SourceDefault
	}
	return SourceOther
}

// Config is one setting as the running broker reports it.
type Config struct {
	Value  string `json:"value"`
	Source Source `json:"source"`
}

// Broker is one broker as the cluster advertises it.
type Broker struct {
	NodeID int32  `json:"node_id"`
	Host   string `json:"host"`
	Port   int32  `json:"port"`
	Rack   string `json:"rack,omitempty"`
	// Configs are the running broker's ConfigKeys; nil when they could
	// not be read (Cluster.ConfigsError says why).
	Configs map[string]Config `json:"configs,omitempty"`
	// APIVersions is the broker's ApiVersions answer: each request (API
	// key) it accepts and the highest version; nil when it could not be
	// asked (APIVersionsError says why).
	APIVersions      map[int16]int16 `json:"api_versions,omitempty"`
	APIVersionsError string          `json:"api_versions_error,omitempty"`
}

// Addr is the broker's advertised host:port.
func (b Broker) Addr() string { return net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))) }

// Cluster is what the cluster said about itself.
type Cluster struct {
	ID         string   `json:"cluster_id"`
	Controller int32    `json:"controller"` // -1 when the cluster did not say
	Brokers    []Broker `json:"brokers"`
	// ConfigsError is why the brokers' configs could not be read (no
	// DESCRIBE_CONFIGS permission on the cluster, most often); "" when
	// they were read.
	ConfigsError string `json:"configs_error,omitempty"`
	// Quorum is the KRaft controller quorum (DescribeQuorum); nil when it
	// could not be read, QuorumError then says why.
	Quorum      *Quorum `json:"quorum,omitempty"`
	QuorumError string  `json:"quorum_error,omitempty"`
}

// Quorum is the KRaft controller quorum as a broker reports it
// (DescribeQuorum of __cluster_metadata, KIP-595; endpoints from v2,
// KIP-853).
type Quorum struct {
	Leader int32        `json:"leader"` // -1 when there is none
	Voters []QuorumNode `json:"voters"`
}

// QuorumNode is one voter: its node id and, when the broker gave them,
// its listeners ("CONTROLLER=ctl-1:9093").
type QuorumNode struct {
	ID        int32    `json:"id"`
	Endpoints []string `json:"endpoints,omitempty"`
}

// Broker returns the broker with the node id, if the cluster has it.
func (c *Cluster) Broker(id int32) (Broker, bool) {
	for _, b := range c.Brokers {
		if b.NodeID == id {
			return b, true
		}
	}
	return Broker{}, false
}

// CheckBootstrap refuses a bootstrap server that carries credentials
// (user:password@host:9092, as a URL would): Kafka addresses are
// HOST:PORT, and the entry is not repeated, since it holds a password.
func CheckBootstrap(bootstrap []string) error {
	for i, b := range bootstrap {
		if strings.Contains(b, "@") {
			return located.Hint(fmt.Errorf("bootstrap server %d of %d holds an '@' (USER:PASSWORD@HOST?): a Kafka address is HOST:PORT, and kaudit takes no credentials there (the entry is not shown: it may hold a password)", i+1, len(bootstrap)),
				"give --bootstrap HOST:PORT, the user with --sasl-user and the password with --sasl-password-file FILE or --sasl-password-env VAR")
		}
	}
	return nil
}

// Options say how to reach the cluster.
type Options struct {
	Bootstrap []string
	TLS       *tls.Config    // nil: plaintext
	SASL      sasl.Mechanism // nil: no SASL
	// Timeout bounds the whole discovery (dial, metadata, configs); 0
	// means 15 s. A bootstrap server that accepts and never answers
	// cannot hang kaudit beyond it.
	Timeout time.Duration
	// Dialer, when set, dials the brokers (tests).
	Dialer func(ctx context.Context, network, host string) (net.Conn, error)
}

const defaultTimeout = 15 * time.Second

// connect is a client of the cluster of o and ctx bounded by o.Timeout
// (defaultTimeout when 0); done closes the client and ends ctx.
func connect(ctx context.Context, o Options) (context.Context, *kgo.Client, func(), error) {
	t := o.Timeout
	if t <= 0 {
		t = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	cl, err := kgo.NewClient(clientOpts(o, t)...)
	if err != nil {
		cancel()
		return ctx, nil, nil, fmt.Errorf("kafka client: %w", err)
	}
	return ctx, cl, func() { cl.Close(); cancel() }, nil
}

// Discover asks the cluster for its brokers and, when the credentials
// allow, each broker's running ConfigKeys.
func Discover(ctx context.Context, o Options) (*Cluster, error) {
	if len(o.Bootstrap) == 0 {
		return nil, located.Hint(errors.New("no bootstrap server"), "give --bootstrap host:9092[,host:9092…]")
	}
	if err := CheckBootstrap(o.Bootstrap); err != nil {
		return nil, err
	}
	ctx, cl, done, err := connect(ctx, o)
	if err != nil {
		return nil, err
	}
	defer done()
	adm := kadm.NewClient(cl)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return nil, explain(o, err)
	}
	c := &Cluster{ID: md.Cluster, Controller: md.Controller}
	for _, b := range md.Brokers {
		br := Broker{NodeID: b.NodeID, Host: b.Host, Port: b.Port}
		if b.Rack != nil {
			br.Rack = *b.Rack
		}
		c.Brokers = append(c.Brokers, br)
	}
	if err := checkReply(o, c); err != nil {
		return nil, err
	}
	sort.Slice(c.Brokers, func(i, j int) bool { return c.Brokers[i].NodeID < c.Brokers[j].NodeID })
	readConfigs(ctx, adm, c)
	readAPIVersions(ctx, cl, c)
	readQuorum(ctx, cl, c)
	return c, nil
}

// apiVersionsAtOnce bounds the brokers asked at once: a broker that does
// not answer holds one of them until the deadline, the rest go on.
const apiVersionsAtOnce = 64

// readAPIVersions asks each broker which requests it accepts, at which
// versions (ApiVersions, the first request every client sends), through
// the one fan-out; an error is kept on the broker, never fatal.
func readAPIVersions(ctx context.Context, cl *kgo.Client, c *Cluster) {
	fanout.Run(ctx, len(c.Brokers), fanout.Options{Limit: apiVersionsAtOnce}, func(i int) bool {
		b := &c.Brokers[i]
		b.APIVersions, b.APIVersionsError = apiVersions(ctx, cl.Broker(int(b.NodeID)))
		return b.APIVersionsError == ""
	})
}

func apiVersions(ctx context.Context, b *kgo.Broker) (map[int16]int16, string) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kaudit", "1"
	resp, err := req.RequestWith(ctx, b)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		return nil, "ApiVersions failed: " + err.Error()
	}
	m := make(map[int16]int16, len(resp.ApiKeys))
	for _, k := range resp.ApiKeys {
		m[k.ApiKey] = k.MaxVersion
	}
	return m, ""
}

func clientOpts(o Options, t time.Duration) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(o.Bootstrap...),
		kgo.DialTimeout(t / 3),
		kgo.RequestTimeoutOverhead(t / 3),
		kgo.RequestRetries(1),
		kgo.RetryTimeout(t / 2),
		kgo.MetadataMinAge(time.Second),
	}
	if o.Dialer != nil {
		opts = append(opts, kgo.Dialer(o.Dialer))
	}
	if o.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(o.TLS.Clone()))
	}
	if o.SASL != nil {
		opts = append(opts, kgo.SASL(o.SASL))
	}
	return opts
}

// readConfigs fills each broker's Configs, or c.ConfigsError.
func readConfigs(ctx context.Context, adm *kadm.Client, c *Cluster) {
	ids := make([]int32, 0, len(c.Brokers))
	for _, b := range c.Brokers {
		ids = append(ids, b.NodeID)
	}
	rcs, err := adm.DescribeBrokerConfigs(ctx, ids...)
	if err == nil {
		err = firstErr(rcs)
	}
	if err != nil {
		c.ConfigsError = configsError(err)
		return
	}
	byName := map[string]kadm.ResourceConfig{}
	for _, rc := range rcs {
		byName[rc.Name] = rc
	}
	var cut []string
	for i := range c.Brokers {
		rc, ok := byName[strconv.Itoa(int(c.Brokers[i].NodeID))]
		if !ok {
			continue
		}
		c.Brokers[i].Configs, cut = pick(c.Brokers[i].NodeID, rc.Configs, cut)
	}
	if len(cut) > 0 {
		c.ConfigsError = strings.Join(cut, "; ")
	}
}

func firstErr(rcs kadm.ResourceConfigs) error {
	for _, rc := range rcs {
		if rc.Err != nil {
			return rc.Err
		}
	}
	return nil
}

func configsError(err error) string {
	if errors.Is(err, kerr.ClusterAuthorizationFailed) {
		return "DescribeConfigs refused (CLUSTER_AUTHORIZATION_FAILED): the user needs DESCRIBE_CONFIGS on the cluster resource to read the running brokers' settings; kaudit uses server.properties as read over SSH instead"
	}
	return "DescribeConfigs failed: " + err.Error() + "; kaudit uses server.properties as read over SSH instead"
}

// pick keeps node's ConfigKeys of cs, each value as kaudit may show it
// (redact.Value); a value over MaxConfigValue is left out and why is
// added to cut (the first few: a cluster may send one per broker).
func pick(node int32, cs []kadm.Config, cut []string) (map[string]Config, []string) {
	want := map[string]bool{}
	for _, k := range ConfigKeys {
		want[k] = true
	}
	m := map[string]Config{}
	for _, c := range cs {
		if !want[c.Key] || c.Sensitive || c.Value == nil {
			continue
		}
		if why := configTooLong(node, c.Key, *c.Value); why != "" {
			if len(cut) < maxCutNamed {
				cut = append(cut, why)
			}
			continue
		}
		m[c.Key] = Config{Value: redact.Value(c.Key, *c.Value), Source: sourceOf(c.Source)}
	}
	return m, cut
}

// maxCutNamed is how many settings left out for their size ConfigsError
// names.
const maxCutNamed = 5

// describeQuorumKey is DescribeQuorum's API key; brokers accept it in
// KRaft mode from 3.3 and forward it to the controllers.
const describeQuorumKey = 55

// readQuorum asks a broker that accepts DescribeQuorum for the controller
// quorum, or says in c.QuorumError why it is not listed. It never fails
// the discovery.
func readQuorum(ctx context.Context, cl *kgo.Client, c *Cluster) {
	for _, b := range c.Brokers {
		if _, ok := b.APIVersions[describeQuorumKey]; ok {
			c.Quorum, c.QuorumError = quorum(ctx, cl.Broker(int(b.NodeID)))
			return
		}
	}
	c.QuorumError = "no broker accepts DescribeQuorum (a ZooKeeper-mode cluster, or KRaft before 3.3): the controller quorum is not listed"
}

func quorum(ctx context.Context, b *kgo.Broker) (*Quorum, string) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = "__cluster_metadata"
	p := kmsg.NewDescribeQuorumRequestTopicPartition()
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, b)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err == nil && (len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1) {
		err = errors.New("the answer names no __cluster_metadata partition")
	}
	if err == nil {
		err = kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	}
	if errors.Is(err, kerr.ClusterAuthorizationFailed) {
		return nil, "DescribeQuorum refused (CLUSTER_AUTHORIZATION_FAILED): the user needs DESCRIBE on the cluster resource to list the controller quorum"
	}
	if err != nil {
		return nil, "DescribeQuorum failed: " + err.Error()
	}
	part := resp.Topics[0].Partitions[0]
	if why := quorumTooLarge(resp); why != "" {
		return nil, "DescribeQuorum answer not used: " + why
	}
	endpoints := map[int32][]string{}
	for _, n := range resp.Nodes {
		for _, l := range n.Listeners {
			endpoints[n.NodeID] = append(endpoints[n.NodeID], l.Name+"="+net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port))))
		}
	}
	q := &Quorum{Leader: part.LeaderID}
	for _, v := range part.CurrentVoters {
		q.Voters = append(q.Voters, QuorumNode{ID: v.ReplicaID, Endpoints: endpoints[v.ReplicaID]})
	}
	sort.Slice(q.Voters, func(i, j int) bool { return q.Voters[i].ID < q.Voters[j].ID })
	return q, ""
}
