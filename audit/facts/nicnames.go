package facts

import "slices"

// The NIC settings kaudit audits and changes are named by the keywords
// ethtool takes: rx and tx (ethtool -G), tso, gso, gro and lro (ethtool
// -K). Their other names, listed here once: the long names ethtool -k
// prints (ethtool(8), "-k --show-features"), and the systemd.link [Link]
// keys (systemd.link(5)).
var nicNames = []struct{ setting, offload, link string }{
	{"rx", "", "RxBufferSize"},
	{"tx", "", "TxBufferSize"},
	{"tso", "tcp-segmentation-offload", "TCPSegmentationOffload"},
	{"gso", "generic-segmentation-offload", "GenericSegmentationOffload"},
	{"gro", "generic-receive-offload", "GenericReceiveOffload"},
	{"lro", "large-receive-offload", "LargeReceiveOffload"},
}

// OffloadName is the name `ethtool -k` prints for the offload an ethtool
// -K keyword turns on or off ("gro" → "generic-receive-offload").
func OffloadName(keyword string) (string, bool) {
	for _, n := range nicNames {
		if n.setting == keyword && n.offload != "" {
			return n.offload, true
		}
	}
	return "", false
}

// OffloadKeyword is the ethtool -K keyword of a name `ethtool -k` prints
// ("generic-receive-offload" → "gro").
func OffloadKeyword(name string) (string, bool) {
	for _, n := range nicNames {
		if n.offload == name && n.offload != "" {
			return n.setting, true
		}
	}
	return "", false
}

// LinkKey is the systemd.link [Link] key of a setting ("rx" →
// "RxBufferSize").
func LinkKey(setting string) (string, bool) {
	for _, n := range nicNames {
		if n.setting == setting {
			return n.link, true
		}
	}
	return "", false
}

// LinkSetting is the setting a systemd.link [Link] key sets
// ("RxBufferSize" → "rx").
func LinkSetting(key string) (string, bool) {
	for _, n := range nicNames {
		if n.link == key {
			return n.setting, true
		}
	}
	return "", false
}

// NICSettings lists the settings, sorted.
func NICSettings() []string {
	out := make([]string, len(nicNames))
	for i, n := range nicNames {
		out[i] = n.setting
	}
	slices.Sort(out)
	return out
}
