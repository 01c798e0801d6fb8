// Package fakecluster is a franz-go kfake cluster whose replication
// state a test sets: every Metadata request is answered with the
// cluster's real brokers and the partitions the test gives (ISR shorter
// than replicas, leader -1), every DescribeConfigs of a topic with its
// min.insync.replicas, and the connection can be cut. It drives the
// health gate of kaudit fix --apply in tests (pipeline, test/e2e).
package fakecluster

import (
	"errors"
	"net"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Partition is one partition as the fake cluster reports it.
type Partition struct {
	Topic     string
	Partition int32
	Leader    int32 // -1: offline
	Replicas  []int32
	ISR       []int32
}

// Control is the state a test sets; the zero value is never used (New).
type Control struct {
	k      *kfake.Cluster
	id     string
	addrs  []string // the brokers' listeners, node id = index
	mu     sync.Mutex
	parts  []Partition
	minISR map[string]int
	down   bool
	reads  int
	onMeta func(read int, all bool) // called (unlocked) before each Metadata answer
}

// New starts a kfake cluster of n brokers (node ids 0…n-1) with cluster
// id id (and opts, e.g. kfake.ListenFn) and takes over its Metadata and
// DescribeConfigs answers; closed with the cluster (Close).
func New(n int, id string, opts ...kfake.Opt) (*Control, error) {
	k, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(n), kfake.ClusterID(id)}, opts...)...)
	if err != nil {
		return nil, err
	}
	c := &Control{k: k, id: id, addrs: k.ListenAddrs(), minISR: map[string]int{}}
	k.ControlKey(int16(kmsg.Metadata), c.metadata)
	k.ControlKey(int16(kmsg.DescribeConfigs), c.describeConfigs)
	return c, nil
}

// Cluster is the kfake cluster.
func (c *Control) Cluster() *kfake.Cluster { return c.k }

// Close shuts the cluster down.
func (c *Control) Close() { c.k.Close() }

// Set replaces the partitions every Metadata answer lists.
func (c *Control) Set(parts ...Partition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.parts = append([]Partition(nil), parts...)
}

// Healthy sets one fully replicated partition per topic over brokers.
func Healthy(topic string, partitions int32, replicas ...int32) []Partition {
	var out []Partition
	for p := range partitions {
		out = append(out, Partition{Topic: topic, Partition: p, Leader: replicas[int(p)%len(replicas)], Replicas: replicas, ISR: replicas})
	}
	return out
}

// MinISR sets a topic's min.insync.replicas (unset topics: 1).
func (c *Control) MinISR(topic string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.minISR[topic] = n
}

// Down cuts every Metadata and DescribeConfigs request (the connection is
// closed) while true.
func (c *Control) Down(down bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down = down
}

// OnMetadata calls fn before each Metadata answer, with the number of
// answers so far (0 first) and whether the request asks for every topic
// (a health read does; a discovery asks for none); fn may call Set, Down.
func (c *Control) OnMetadata(fn func(read int, all bool)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onMeta = fn
}

var errDown = errors.New("fakecluster: connection cut")

func (c *Control) metadata(kreq kmsg.Request) (kmsg.Response, error, bool) {
	c.k.KeepControl()
	c.mu.Lock()
	fn, read := c.onMeta, c.reads
	c.reads++
	c.mu.Unlock()
	req := kreq.(*kmsg.MetadataRequest)
	if fn != nil {
		fn(read, req.Topics == nil)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down {
		return nil, errDown, true
	}
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	resp.Version = req.Version
	resp.ClusterID = kmsg.StringPtr(c.id)
	resp.ControllerID = 0
	for i, addr := range c.addrs {
		host, port, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(port)
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = int32(i), host, int32(p)
		resp.Brokers = append(resp.Brokers, b)
	}
	byTopic := map[string]int{}
	for _, p := range c.parts {
		i, ok := byTopic[p.Topic]
		if !ok {
			t := kmsg.NewMetadataResponseTopic()
			t.Topic = kmsg.StringPtr(p.Topic)
			resp.Topics = append(resp.Topics, t)
			i = len(resp.Topics) - 1
			byTopic[p.Topic] = i
		}
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition, mp.Leader, mp.Replicas, mp.ISR = p.Partition, p.Leader, p.Replicas, p.ISR
		if p.Leader < 0 {
			mp.ErrorCode = 5 // LEADER_NOT_AVAILABLE
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, mp)
	}
	return resp, nil, true
}

func (c *Control) describeConfigs(kreq kmsg.Request) (kmsg.Response, error, bool) {
	req := kreq.(*kmsg.DescribeConfigsRequest)
	for _, r := range req.Resources {
		if r.ResourceType != kmsg.ConfigResourceTypeTopic {
			return nil, nil, false // brokers' configs: kfake's own answer
		}
	}
	c.k.KeepControl()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down {
		return nil, errDown, true
	}
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	resp.Version = req.Version
	for _, r := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		n, ok := c.minISR[r.ResourceName]
		if !ok {
			n = 1
		}
		cfg := kmsg.NewDescribeConfigsResponseResourceConfig()
		cfg.Name, cfg.Value = "min.insync.replicas", kmsg.StringPtr(strconv.Itoa(n))
		rr.Configs = append(rr.Configs, cfg)
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil, true
}
