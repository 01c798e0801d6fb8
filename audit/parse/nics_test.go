package parse

import (
	"testing"
)

// TestNICs builds a nics section the way gather.sh prints it around the
// captured ethtool output of two interfaces: a virtio NIC whose ring and
// features read, and lo whose ring ethtool cannot read.
func TestNICs(t *testing.T) {
	body := "@if eth0\n@driver virtio_net\n@ring\n" + readTestdata(t, "ethtool-g/virtio_net-ethtool6.1-this-machine.txt") +
		"@features\n" + readTestdata(t, "ethtool-k/virtio_net-ethtool6.1-this-machine.txt") +
		"@mac 52:54:00:12:34:56\n" +
		"@if lo\n@ring\n" + readTestdata(t, "ethtool-g/lo-netlink-not-supported-ethtool6.1-this-machine.txt") +
		"@features\n" + readTestdata(t, "ethtool-k/lo-ethtool6.1-this-machine.txt")
	nics := NICs(body)
	if len(nics) != 2 {
		t.Fatalf("%d NICs, want 2: %+v", len(nics), nics)
	}
	eth0, lo := nics[0], nics[1]
	if eth0.Name != "eth0" || eth0.Driver != "virtio_net" || eth0.Ring == nil || eth0.Ring.RX != 256 || eth0.Ring.TXMax != 256 || eth0.RingErr != "" {
		t.Errorf("eth0 = %+v ring %+v", eth0, eth0.Ring)
	}
	if f, ok := eth0.Features["gro"]; !ok || !f.On || eth0.FeatErr != "" {
		t.Errorf("eth0 gro = %+v (%q)", f, eth0.FeatErr)
	}
	if eth0.Persist == nil || eth0.Persist.MAC != "52:54:00:12:34:56" || eth0.Persist.Mechanism != "udev" {
		t.Errorf("eth0 persist = %+v", eth0.Persist)
	}
	if lo.Name != "lo" || lo.Ring != nil || lo.RingErr == "" || lo.Persist != nil {
		t.Errorf("lo = %+v", lo)
	}
	if f, ok := lo.Features["tso"]; !ok || !f.On {
		t.Errorf("lo tso = %+v", f)
	}
}
