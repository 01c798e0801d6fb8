package discover

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Partition is one partition as the cluster's Metadata reports it, the
// way kafka-topics --describe reads it: its leader (-1: none, the
// partition is offline), its replicas and its in-sync replicas.
type Partition struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Leader    int32   `json:"leader"`
	Replicas  []int32 `json:"replicas"`
	ISR       []int32 `json:"isr"`
}

// Name is TOPIC-PARTITION, as Kafka's tools name a partition.
func (p Partition) Name() string { return p.Topic + "-" + strconv.Itoa(int(p.Partition)) }

// Health is one read of a cluster's replication state: the brokers
// registered, every partition, and each topic's min.insync.replicas.
type Health struct {
	Brokers    []int32     `json:"brokers"` // registered, sorted
	Partitions []Partition `json:"partitions"`
	// Unreadable are the topics (and their error) whose metadata came
	// back with an error: nothing says they are healthy.
	Unreadable []string `json:"unreadable,omitempty"`
	// MinISR is min.insync.replicas per topic; a topic missing from it
	// could not be read (MinISRError says why): Judge then assumes 1,
	// the least Kafka allows, and says so.
	MinISR      map[string]int `json:"min_isr,omitempty"`
	MinISRError string         `json:"min_isr_error,omitempty"`
}

// HealthOf reads a Metadata response (every topic asked). It is pure:
// the gate is decided from what the cluster said and nothing else.
func HealthOf(resp *kmsg.MetadataResponse) Health {
	h := Health{MinISR: map[string]int{}}
	for _, b := range resp.Brokers {
		h.Brokers = append(h.Brokers, b.NodeID)
	}
	sort.Slice(h.Brokers, func(i, j int) bool { return h.Brokers[i] < h.Brokers[j] })
	for _, t := range resp.Topics {
		name := ""
		if t.Topic != nil {
			name = *t.Topic
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			h.Unreadable = append(h.Unreadable, name+": "+err.Error())
			continue
		}
		for _, p := range t.Partitions {
			part := Partition{Topic: name, Partition: p.Partition, Leader: p.Leader, Replicas: p.Replicas, ISR: p.ISR}
			// LEADER_NOT_AVAILABLE is how a broker answers for an offline
			// partition; any error leaves the partition without a leader.
			if kerr.ErrorForCode(p.ErrorCode) != nil && !errors.Is(kerr.ErrorForCode(p.ErrorCode), kerr.ReplicaNotAvailable) {
				part.Leader = -1
			}
			h.Partitions = append(h.Partitions, part)
		}
	}
	sort.Slice(h.Partitions, func(i, j int) bool {
		a, b := h.Partitions[i], h.Partitions[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return h
}

// Verdict is what one Health read says for a rollout: whether the
// cluster is healthy (no under-replicated or offline partition, every
// expected broker registered, every topic read) and which partitions the
// brokers about to be changed hold at or below min.insync.replicas.
type Verdict struct {
	UnderReplicated []Partition `json:"under_replicated,omitempty"` // ISR shorter than replicas
	Offline         []Partition `json:"offline,omitempty"`          // leader -1
	Missing         []int32     `json:"missing,omitempty"`          // expected brokers not registered
	Unreadable      []string    `json:"unreadable,omitempty"`
	// AtMinISR are partitions a touched broker is in the ISR of whose ISR
	// is at or below the topic's min.insync.replicas: taking the broker
	// down stops acks=all producers. Judged only on a healthy read.
	AtMinISR []MinISRPartition `json:"at_min_isr,omitempty"`
	// MinISRAssumed: some topic's min.insync.replicas could not be read,
	// 1 was assumed for it (the error is Health.MinISRError).
	MinISRAssumed bool `json:"min_isr_assumed,omitempty"`
}

// MinISRPartition is a partition at or below its min.insync.replicas.
type MinISRPartition struct {
	Partition
	MinISR int   `json:"min_isr"`
	Broker int32 `json:"broker"` // the touched broker in its ISR
}

// Healthy reports whether the read shows a cluster a broker may be
// changed after: nothing under-replicated, offline, missing or unread.
func (v Verdict) Healthy() bool {
	return len(v.UnderReplicated) == 0 && len(v.Offline) == 0 && len(v.Missing) == 0 && len(v.Unreadable) == 0
}

// Judge is the gate of one read: h against the brokers the cluster must
// have registered (expect) and the brokers about to be changed
// (touching). It is a pure function of what the cluster said.
func Judge(h Health, expect, touching []int32) Verdict {
	v := Verdict{Unreadable: h.Unreadable}
	registered := map[int32]bool{}
	for _, b := range h.Brokers {
		registered[b] = true
	}
	for _, b := range expect {
		if !registered[b] {
			v.Missing = append(v.Missing, b)
		}
	}
	for _, p := range h.Partitions {
		switch {
		case p.Leader < 0:
			v.Offline = append(v.Offline, p)
		case len(p.ISR) < len(p.Replicas):
			v.UnderReplicated = append(v.UnderReplicated, p)
		}
	}
	if v.Healthy() {
		v.AtMinISR, v.MinISRAssumed = atMinISR(h, touching)
	}
	return v
}

// atMinISR are the partitions a touched broker is in the ISR of whose
// ISR would fall below min.insync.replicas without it (1 assumed where
// the topic's setting is unknown).
func atMinISR(h Health, touching []int32) (out []MinISRPartition, assumed bool) {
	for _, p := range h.Partitions {
		min, ok := h.MinISR[p.Topic]
		if !ok {
			min, assumed = 1, true
		}
		if len(p.ISR) > min {
			continue
		}
		for _, b := range touching {
			if slices.Contains(p.ISR, b) {
				out = append(out, MinISRPartition{Partition: p, MinISR: min, Broker: b})
			}
		}
	}
	return out, assumed
}

// ReadHealth asks the cluster once for every topic's partitions (a
// Metadata request) and min.insync.replicas (DescribeConfigs on the
// topics; its failure is kept in MinISRError, never fatal). An error is
// a cluster that could not be asked: the caller counts it unhealthy.
func ReadHealth(ctx context.Context, o Options) (*Health, error) {
	ctx, cl, done, err := connect(ctx, o)
	if err != nil {
		return nil, err
	}
	defer done()
	req := kmsg.NewPtrMetadataRequest() // Topics nil: every topic
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, explain(o, err)
	}
	h := HealthOf(resp)
	h.MinISRError = readMinISR(ctx, kadm.NewClient(cl), &h)
	return &h, nil
}

// readMinISR fills h.MinISR from the topics' configs, or says why not.
func readMinISR(ctx context.Context, adm *kadm.Client, h *Health) string {
	var topics []string
	seen := map[string]bool{}
	for _, p := range h.Partitions {
		if !seen[p.Topic] {
			seen[p.Topic] = true
			topics = append(topics, p.Topic)
		}
	}
	if len(topics) == 0 {
		return ""
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return "DescribeConfigs of the topics failed: " + err.Error()
	}
	msg := ""
	for _, rc := range rcs {
		if rc.Err != nil {
			msg = "DescribeConfigs of topic " + rc.Name + " failed: " + rc.Err.Error()
			continue
		}
		for _, c := range rc.Configs {
			if c.Key != "min.insync.replicas" || c.Value == nil {
				continue
			}
			if n, err := strconv.Atoi(*c.Value); err == nil && n >= 1 {
				h.MinISR[rc.Name] = n
			}
		}
	}
	return msg
}
