package discover

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// hostileMetadata makes c answer every Metadata request with the real
// answer changed by edit: what a cluster chosen by an attacker sends.
func hostileMetadata(c *kfake.Cluster, edit func(*kmsg.MetadataResponse)) {
	c.ControlKey(int16(kmsg.Metadata), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := req.(*kmsg.MetadataRequest).ResponseKind().(*kmsg.MetadataResponse)
		real := kmsg.NewPtrMetadataResponse()
		real.Version = req.GetVersion()
		real.ClusterID = resp.ClusterID
		real.ControllerID = 0
		real.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 0, Host: "127.0.0.1", Port: port(c)}}
		edit(real)
		return real, nil, true
	})
}

func port(c *kfake.Cluster) int32 {
	var p int32
	fmt.Sscanf(c.ListenAddrs()[0][strings.LastIndexByte(c.ListenAddrs()[0], ':')+1:], "%d", &p)
	return p
}

// TestDiscoverRefusesOversizedReplies: a Metadata reply over one of the
// bounds is refused before anything is made of it, the error naming the
// size and the bound and never the content.
func TestDiscoverRefusesOversizedReplies(t *testing.T) {
	mb := strings.Repeat("A", 1<<20)
	for _, tt := range []struct {
		name string
		edit func(*kmsg.MetadataResponse)
		want string
	}{
		{"a 1 MB cluster id", func(r *kmsg.MetadataResponse) { r.ClusterID = &mb }, "its cluster id is 1048576 bytes"},
		{"50,000 brokers", func(r *kmsg.MetadataResponse) {
			for i := int32(1); i < 50000; i++ {
				r.Brokers = append(r.Brokers, kmsg.MetadataResponseBroker{NodeID: i, Host: fmt.Sprintf("b%d.example", i), Port: 9092})
			}
		}, "it advertises 50000 brokers (kaudit takes at most 5000"},
		{"a host name over 253 bytes", func(r *kmsg.MetadataResponse) {
			r.Brokers = append(r.Brokers, kmsg.MetadataResponseBroker{NodeID: 7, Host: strings.Repeat("a.", 200) + "com", Port: 9092})
		}, "broker 7 advertises a host name of 403 bytes (DNS allows 253)"},
		{"a label over 63 bytes", func(r *kmsg.MetadataResponse) {
			r.Brokers = append(r.Brokers, kmsg.MetadataResponseBroker{NodeID: 8, Host: strings.Repeat("a", 64) + ".example", Port: 9092})
		}, "broker 8 advertises a host name with a label of 64 bytes (DNS allows 63 per label)"},
		{"a 1 MB rack", func(r *kmsg.MetadataResponse) { r.Brokers[0].Rack = &mb }, "broker 0's rack is 1048576 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, kfake.NumBrokers(1))
			hostileMetadata(c, tt.edit)
			_, err := Discover(context.Background(), Options{Bootstrap: c.ListenAddrs(), Timeout: 10 * time.Second})
			var de *Error
			if !errors.As(err, &de) || de.Kind != Refused || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %.300v, want kind refused saying %q", err, tt.want)
			}
			if len(err.Error()) > 600 {
				t.Errorf("error of %d bytes: it repeats the reply", len(err.Error()))
			}
		})
	}
}

// TestDiscoverLeavesOutOversizedConfigs: a running setting over
// MaxConfigValue is not used (the file's value is judged) and
// ConfigsError names its size; a setting with a password joined in is
// kept with the password hidden.
func TestDiscoverLeavesOutOversizedConfigs(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(1), kfake.BrokerConfigs(map[string]string{
		"log.dirs":            "/data/" + strings.Repeat("d", 1<<20),
		"num.network.threads": "8ssl.truststore.password=S3cr3t",
	}))
	cl, err := Discover(context.Background(), Options{Bootstrap: c.ListenAddrs(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	b := cl.Brokers[0]
	if _, ok := b.Configs["log.dirs"]; ok {
		t.Errorf("a 1 MB log.dirs was kept")
	}
	if want := "broker 0's log.dirs is 1048582 bytes (kaudit reads at most 4096): not used"; !strings.Contains(cl.ConfigsError, want) {
		t.Errorf("configs error %q, want %q", cl.ConfigsError, want)
	}
	if got := b.Configs["num.network.threads"].Value; got != "8ssl.truststore.password=[hidden]" {
		t.Errorf("num.network.threads %q", got)
	}
}
