package discover

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kaudit/kaudit/test/fakecluster"
)

// metadata is a canned Metadata response: brokers, then per topic its
// partitions as {leader, replicas, isr}.
func metadata(brokers []int32, topics map[string][][3][]int32) *kmsg.MetadataResponse {
	resp := kmsg.NewPtrMetadataResponse()
	for _, id := range brokers {
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID = id
		resp.Brokers = append(resp.Brokers, b)
	}
	for name, parts := range topics {
		t := kmsg.NewMetadataResponseTopic()
		t.Topic = kmsg.StringPtr(name)
		for i, p := range parts {
			mp := kmsg.NewMetadataResponseTopicPartition()
			mp.Partition, mp.Leader, mp.Replicas, mp.ISR = int32(i), p[0][0], p[1], p[2]
			t.Partitions = append(t.Partitions, mp)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

func part(leader int32, replicas, isr []int32) [3][]int32 {
	return [3][]int32{{leader}, replicas, isr}
}

// TestJudge: the gate of one read, from canned Metadata responses: what
// kafka-topics --describe --under-replicated-partitions (ISR shorter than
// replicas) and --unavailable-partitions (leader -1) would list, a broker
// that is not registered, and a partition the next broker holds at
// min.insync.replicas.
func TestJudge(t *testing.T) {
	all := []int32{1, 2, 3}
	full := []int32{1, 2, 3}
	cases := []struct {
		name     string
		resp     *kmsg.MetadataResponse
		minISR   map[string]int
		touching []int32
		healthy  bool
		urp      []string
		offline  []string
		missing  []int32
		atMin    []string
		assumed  bool
	}{
		{name: "healthy", resp: metadata(all, map[string][][3][]int32{"orders": {part(1, full, full), part(2, full, full)}}),
			minISR: map[string]int{"orders": 2}, touching: []int32{1}, healthy: true},
		{name: "under-replicated", resp: metadata(all, map[string][][3][]int32{"orders": {part(1, full, full), part(2, full, []int32{2, 3})}}),
			minISR: map[string]int{"orders": 2}, touching: []int32{1}, urp: []string{"orders-1"}},
		{name: "offline", resp: metadata(all, map[string][][3][]int32{"orders": {part(-1, full, []int32{})}}),
			minISR: map[string]int{"orders": 2}, offline: []string{"orders-0"}},
		{name: "broker not registered", resp: metadata([]int32{1, 3}, map[string][][3][]int32{"orders": {part(1, full, full)}}),
			minISR: map[string]int{"orders": 1}, missing: []int32{2}},
		{name: "at min.insync.replicas", resp: metadata(all, map[string][][3][]int32{"orders": {part(1, []int32{1, 2}, []int32{1, 2})}, "logs": {part(3, []int32{3, 2}, []int32{3, 2})}}),
			minISR: map[string]int{"orders": 2, "logs": 2}, touching: []int32{1}, healthy: true, atMin: []string{"orders-0@1"}},
		{name: "min.insync.replicas unknown: 1 assumed", resp: metadata(all, map[string][][3][]int32{"single": {part(2, []int32{2}, []int32{2})}}),
			minISR: map[string]int{}, touching: []int32{2}, healthy: true, atMin: []string{"single-0@2"}, assumed: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := HealthOf(c.resp)
			h.MinISR = c.minISR
			v := Judge(h, all, c.touching)
			if v.Healthy() != c.healthy {
				t.Errorf("healthy %v, want %v: %+v", v.Healthy(), c.healthy, v)
			}
			if got := names(v.UnderReplicated); !reflect.DeepEqual(got, c.urp) {
				t.Errorf("under-replicated %v, want %v", got, c.urp)
			}
			if got := names(v.Offline); !reflect.DeepEqual(got, c.offline) {
				t.Errorf("offline %v, want %v", got, c.offline)
			}
			if !reflect.DeepEqual(v.Missing, c.missing) {
				t.Errorf("missing %v, want %v", v.Missing, c.missing)
			}
			var atMin []string
			for _, p := range v.AtMinISR {
				atMin = append(atMin, p.Name()+"@"+string(rune('0'+p.Broker)))
			}
			if !reflect.DeepEqual(atMin, c.atMin) || v.MinISRAssumed != c.assumed {
				t.Errorf("at min ISR %v (assumed %v), want %v (%v)", atMin, v.MinISRAssumed, c.atMin, c.assumed)
			}
		})
	}
}

func names(ps []Partition) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name())
	}
	return out
}

// TestHealthOfTopicError: a topic whose metadata came back with an error
// is unread, and an unread topic is never healthy.
func TestHealthOfTopicError(t *testing.T) {
	resp := metadata([]int32{1}, map[string][][3][]int32{"orders": {part(1, []int32{1}, []int32{1})}})
	resp.Topics[0].ErrorCode = 29 // TOPIC_AUTHORIZATION_FAILED
	v := Judge(HealthOf(resp), []int32{1}, nil)
	if v.Healthy() || len(v.Unreadable) != 1 {
		t.Errorf("a topic that could not be read judged %+v", v)
	}
}

// TestReadHealth: one read of a cluster (kfake, its Metadata and the
// topics' configs controlled): the partitions and min.insync.replicas as
// the cluster said them; a cut connection is an error, never a read.
func TestReadHealth(t *testing.T) {
	fc, err := fakecluster.New(3, "Health")
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	fc.Set(fakecluster.Partition{Topic: "orders", Partition: 0, Leader: 0, Replicas: []int32{0, 1, 2}, ISR: []int32{0, 2}},
		fakecluster.Partition{Topic: "orders", Partition: 1, Leader: -1, Replicas: []int32{1, 2}, ISR: []int32{}})
	fc.MinISR("orders", 2)
	o := Options{Bootstrap: fc.Cluster().ListenAddrs(), Timeout: 5 * time.Second}
	h, err := ReadHealth(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	v := Judge(*h, []int32{0, 1, 2}, nil)
	if got := names(v.UnderReplicated); !reflect.DeepEqual(got, []string{"orders-0"}) {
		t.Errorf("under-replicated %v", got)
	}
	if got := names(v.Offline); !reflect.DeepEqual(got, []string{"orders-1"}) {
		t.Errorf("offline %v", got)
	}
	if h.MinISR["orders"] != 2 || h.MinISRError != "" {
		t.Errorf("min.insync.replicas %v (%s)", h.MinISR, h.MinISRError)
	}
	fc.Down(true)
	o.Timeout = 2 * time.Second
	if _, err := ReadHealth(context.Background(), o); err == nil {
		t.Error("a cut connection read as a health answer")
	} else if e := (*Error)(nil); !errors.As(err, &e) {
		t.Errorf("error %v is not a named cluster failure", err)
	}
}
