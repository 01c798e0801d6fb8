package discover

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/kaudit/kaudit/internal/located"
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

// Discover asks the cluster for its brokers and, when the credentials
// allow, each broker's running ConfigKeys.
func Discover(ctx context.Context, o Options) (*Cluster, error) {
	if len(o.Bootstrap) == 0 {
		return nil, located.Hint(errors.New("no bootstrap server"), "give --bootstrap host:9092[,host:9092…]")
	}
	t := o.Timeout
	if t <= 0 {
		t = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	cl, err := kgo.NewClient(clientOpts(o, t)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
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
	sort.Slice(c.Brokers, func(i, j int) bool { return c.Brokers[i].NodeID < c.Brokers[j].NodeID })
	readConfigs(ctx, adm, c)
	return c, nil
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
	for i := range c.Brokers {
		rc, ok := byName[strconv.Itoa(int(c.Brokers[i].NodeID))]
		if !ok {
			continue
		}
		c.Brokers[i].Configs = pick(rc.Configs)
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

func pick(cs []kadm.Config) map[string]Config {
	want := map[string]bool{}
	for _, k := range ConfigKeys {
		want[k] = true
	}
	m := map[string]Config{}
	for _, c := range cs {
		if !want[c.Key] || c.Sensitive || c.Value == nil {
			continue
		}
		m[c.Key] = Config{Value: *c.Value, Source: sourceOf(c.Source)}
	}
	return m
}
