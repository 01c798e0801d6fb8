package parse

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func TestEthtoolRing(t *testing.T) {
	tests := []struct {
		file    string
		want    *facts.Ring
		hostErr string // when set: the *HostError text expected
	}{
		{file: "ethtool-g/virtio_net-ethtool6.1-this-machine.txt", want: &facts.Ring{RXMax: 256, TXMax: 256, RX: 256, TX: 256}},
		{file: "ethtool-g/atlantic-ethtool6-netlink.txt", want: &facts.Ring{RXMax: 8184, TXMax: 8184, RX: 2048, TX: 4096}},
		{file: "ethtool-g/netlink-8192-ethtool6-from-test-script.txt", want: &facts.Ring{RXMax: 8192, TXMax: 8192, RX: 1024, TX: 1024}},
		{file: "ethtool-g/insights-core-sosreport-ioctl.txt", want: &facts.Ring{RXMax: 2047, TXMax: 511, RX: 200, TX: 511}},
		{file: "ethtool-g/em1-ioctl-4078-oracle-host.txt", want: &facts.Ring{RXMax: 4078, TXMax: 4078, RX: 815, TX: 4078}},
		{file: "ethtool-g/ena-ethtool4-ioctl-reconstructed.txt", want: &facts.Ring{RXMax: 16384, TXMax: 1024, RX: 1024, TX: 1024}},
		{file: "ethtool-g/ixgbe-ethtool4-ioctl-reconstructed.txt", want: &facts.Ring{RXMax: 4096, TXMax: 4096, RX: 512, TX: 512}},
		{file: "ethtool-g/veth-netlink-ethtool6.1-this-machine.txt", hostErr: "Operation not supported"},
		{file: "ethtool-g/lo-netlink-not-supported-ethtool6.1-this-machine.txt", hostErr: "Operation not supported"},
		{file: "ethtool-g/veth-ioctl-not-supported-reconstructed.txt", hostErr: "Operation not supported"},
		{file: "ethtool-g/nosuchdev-ethtool6.1-this-machine.txt", hostErr: "No such device"},
		{file: "ethtool-g/insights-core-ioctl-no-such-device.txt", hostErr: "No such device"},
		{file: "ethtool-g/ioctl-no-such-device-stdout-first.txt", hostErr: "No such device"},
		{file: "ethtool-g/insights-core-bad-args.txt", hostErr: "ethtool: bad command line argument(s)"},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.file, "ethtool-g/"), func(t *testing.T) {
			got, err := EthtoolRing(readTestdata(t, tt.file))
			if tt.hostErr != "" {
				var he *HostError
				if got != nil || !errors.As(err, &he) || he.Text != tt.hostErr || err.Error() != tt.hostErr {
					t.Fatalf("EthtoolRing = %+v, %v; want nil and host error %q", got, err, tt.hostErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("EthtoolRing: %v", err)
			}
			if *got != *tt.want {
				t.Errorf("got %+v, want %+v", *got, *tt.want)
			}
		})
	}
}

func TestEthtoolRingNA(t *testing.T) {
	in := "Ring parameters for eth0:\nPre-set maximums:\nRX:\t\tn/a\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t512\nCurrent hardware settings:\nRX:\t\tn/a\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t256\nTCP data split:\tn/a\n"
	got, err := EthtoolRing(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := (facts.Ring{RXMax: -1, TXMax: 512, RX: -1, TX: 256}); *got != want {
		t.Errorf("got %+v, want %+v", *got, want)
	}
}

func TestEthtoolRingErrors(t *testing.T) {
	full := readTestdata(t, "ethtool-g/virtio_net-ethtool6.1-this-machine.txt")
	tests := []struct {
		name, in, wantSub string
	}{
		{"empty", "", `expected "Pre-set maximums:" and "Current hardware settings:" sections`},
		{"truncated", full[:strings.Index(full, "Current")], `expected "Pre-set maximums:" and "Current hardware settings:"`},
		{"missing TX", "Pre-set maximums:\nRX: 1\nTX: 1\nCurrent hardware settings:\nRX: 1\n", `no TX: line in "Current hardware settings"`},
		{"bad number", "Pre-set maximums:\nRX: lots\n", `RX: value "lots" is neither a count nor n/a`},
		{"values before section", "RX: 1\n", "RX before any"},
		{"no colon", "Pre-set maximums:\nRX 1\n", `expected "Name: value"`},
		{"other tool", "Settings for eth0:\n\tSpeed: 1000Mb/s\n", `expected "Pre-set maximums:"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EthtoolRing(tt.in)
			var he *HostError
			if got != nil || err == nil || errors.As(err, &he) || !strings.Contains(err.Error(), tt.wantSub) {
				t.Fatalf("EthtoolRing = %v, %v; want a parse error containing %q", got, err, tt.wantSub)
			}
		})
	}
}

func TestEthtoolFeatures(t *testing.T) {
	tests := []struct {
		file   string
		want   map[string]facts.Feature // subset
		absent []string
		count  int
	}{
		{
			file: "ethtool-k/virtio_net-ethtool6.1-this-machine.txt",
			want: map[string]facts.Feature{
				"tso": {On: true}, "gso": {On: true}, "gro": {On: true}, "lro": {On: false, Fixed: true},
				"rx-checksumming": {On: true, Fixed: true}, "tx-checksum-ipv4": {Fixed: true},
				"tx-tcp-segmentation": {On: true}, "rx-gro-hw": {On: true, Fixed: true},
			},
			absent: []string{"tcp-segmentation-offload", "generic-receive-offload"},
			count:  63,
		},
		{
			file: "ethtool-k/veth-requested-ethtool6.1-this-machine.txt",
			want: map[string]facts.Feature{
				// ethtool prints the legacy tcp-segmentation-offload as "on" when any
				// child is on: here only tx-tcp-accecn-segmentation is, while
				// tx-tcp-segmentation itself is off. tso reports what was printed.
				"tso": {On: true}, "gso": {Requested: "on"}, "gro": {}, "lro": {Fixed: true},
				"tx-tcp-segmentation": {Requested: "on"}, "tx-tcp-accecn-segmentation": {On: true}, "tx-checksumming": {On: false},
			},
		},
		{
			// The kernel dropped TSO and GSO when SG went off (netdev_fix_features).
			file: "ethtool-k/veth-sg-off-ethtool6.1-this-machine.txt",
			want: map[string]facts.Feature{
				"gso": {Requested: "on"}, "scatter-gather": {}, "tx-scatter-gather": {},
				"tx-tcp-segmentation": {Requested: "on"}, "tx-tcp6-segmentation": {Requested: "on"},
				"tx-checksumming": {On: true}, "tx-checksum-ip-generic": {On: true},
			},
		},
		{
			file: "ethtool-k/veth-tx-off-ethtool6.1-this-machine.txt",
			want: map[string]facts.Feature{
				"gso": {On: true}, "scatter-gather": {On: true}, "tx-checksumming": {}, "tx-checksum-ip-generic": {},
				"tx-checksum-ipv4": {Fixed: true}, "tx-tcp-segmentation": {Requested: "on"},
			},
		},
		{
			// The group lines carry no annotation; the children do.
			file: "ethtool-k/tap-fresh-ethtool6.1-this-machine.txt",
			want: map[string]facts.Feature{
				"tx-checksumming": {}, "tx-checksum-ip-generic": {Requested: "on"}, "tx-checksum-ipv4": {Fixed: true},
				"scatter-gather": {On: true}, "tso": {}, "tx-tcp-segmentation": {Requested: "on"},
				"tx-tcp-mangleid-segmentation": {}, "gso": {On: true}, "gro": {On: true},
			},
		},
		{
			file: "ethtool-k/tap-tso-requested-ethtool6.1-this-machine.txt",
			want: map[string]facts.Feature{"tx-tcp-mangleid-segmentation": {Requested: "on"}, "tx-tcp-segmentation": {Requested: "on"}},
		},
		{
			file: "ethtool-k/virtio_net-no-csum-debian12-reconstructed.txt",
			want: map[string]facts.Feature{
				// The group lines, printed "off", are [fixed] in all their children.
				"tx-checksumming": {Fixed: true}, "tx-checksum-ip-generic": {Fixed: true}, "tx-checksum-ipv4": {Fixed: true},
				"scatter-gather": {Fixed: true}, "tx-scatter-gather": {Fixed: true}, "tso": {Fixed: true}, "tx-tcp-segmentation": {Fixed: true},
				"gso": {Requested: "on"}, "gro": {On: true}, "lro": {Fixed: true},
			},
			count: 62,
		},
		{
			file: "ethtool-k/veth-ethtool6.1-this-machine.txt",
			want: map[string]facts.Feature{"tso": {On: true}, "gso": {On: true}, "gro": {}, "lro": {Fixed: true}},
		},
		{
			file: "ethtool-k/lo-ethtool6.1-this-machine.txt",
			want: map[string]facts.Feature{"tso": {On: true}, "lro": {Fixed: true}, "loopback": {On: true, Fixed: true}},
		},
		{
			file: "ethtool-k/atlantic-ethtool6-netlink.txt",
			want: map[string]facts.Feature{"tso": {On: true}, "gso": {On: true}, "gro": {On: true}, "lro": {}, "hw-tc-offload": {On: true}},
		},
		{
			file: "ethtool-k/insights-core-bond0-spaces.txt",
			want: map[string]facts.Feature{
				"tso": {On: true}, "gso": {Requested: "on"}, "gro": {On: true}, "lro": {On: true},
				"tx-checksum-unneeded": {On: true, Fixed: true}, "udp-fragmentation-offload": {Fixed: true},
			},
			count: 34,
		},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.file, "ethtool-k/"), func(t *testing.T) {
			got, err := EthtoolFeatures(readTestdata(t, tt.file))
			if err != nil {
				t.Fatalf("EthtoolFeatures: %v", err)
			}
			for k, v := range tt.want {
				if g, ok := got[k]; !ok || !reflect.DeepEqual(g, v) {
					t.Errorf("%s = %+v (present %v), want %+v", k, g, ok, v)
				}
			}
			for _, k := range tt.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s present, want it under its short name", k)
				}
			}
			if tt.count != 0 && len(got) != tt.count {
				t.Errorf("%d features, want %d", len(got), tt.count)
			}
		})
	}
}

func TestEthtoolFeaturesErrors(t *testing.T) {
	tests := []struct {
		name, in string
		hostErr  string // *HostError text, or
		wantSub  string // a parse error
	}{
		{name: "no such device (netlink)", in: readTestdata(t, "ethtool-k/nosuchdev-ethtool6.1-this-machine.txt"), hostErr: "No such device"},
		{name: "cannot get feature names", in: readTestdata(t, "ethtool-k/ioctl-cannot-get-feature-names-reconstructed.txt"), hostErr: "No such device"},
		{name: "cannot get stats strings", in: readTestdata(t, "ethtool-k/insights-core-cannot-get-stats-strings.txt"), hostErr: "Operation not supported"},
		{name: "bad args", in: readTestdata(t, "ethtool-k/insights-core-bad-args.txt"), hostErr: "ethtool: bad command line argument(s)"},
		{name: "missing colon", in: readTestdata(t, "ethtool-k/insights-core-missing-colon.txt"), wantSub: `line 2: expected "name: on|off [fixed]"`},
		{name: "empty", in: "", wantSub: `expected "Features for IF:"`},
		{name: "header only", in: "Features for eth0:\n", wantSub: "without any feature line"},
		{name: "bad state", in: "Features for eth0:\ngro: maybe\n", wantSub: `gro: state "maybe" is neither on nor off`},
		{name: "bad annotation", in: "Features for eth0:\ngro: on [sometimes]\n", wantSub: `unexpected annotation "[sometimes]"`},
		{name: "other tool", in: "driver: virtio_net\nversion: 1.0.0\n", wantSub: `expected "Features for IF:"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EthtoolFeatures(tt.in)
			if got != nil || err == nil {
				t.Fatalf("EthtoolFeatures = %v, %v; want an error", got, err)
			}
			var he *HostError
			isHost := errors.As(err, &he)
			if tt.hostErr != "" {
				if !isHost || he.Text != tt.hostErr {
					t.Fatalf("error %v (host %v), want host error %q", err, isHost, tt.hostErr)
				}
				return
			}
			if isHost || !strings.Contains(err.Error(), tt.wantSub) {
				t.Fatalf("error %v (host %v), want parse error containing %q", err, isHost, tt.wantSub)
			}
		})
	}
}
