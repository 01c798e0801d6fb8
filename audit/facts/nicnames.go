package facts

// The NIC settings kaudit audits and changes are named by the keywords
// ethtool takes: rx and tx (ethtool -G), tso, gso, gro and lro (ethtool
// -K). The offloads' other names, listed here once, are the long names
// ethtool -k prints (ethtool(8), "-k --show-features"); a .link file's
// keys are nicpersist's.
var offloadNames = [][2]string{
	{"tso", "tcp-segmentation-offload"},
	{"gso", "generic-segmentation-offload"},
	{"gro", "generic-receive-offload"},
	{"lro", "large-receive-offload"},
}

// OffloadName is the name `ethtool -k` prints for the offload an ethtool
// -K keyword turns on or off ("gro" → "generic-receive-offload").
func OffloadName(keyword string) (string, bool) { return offloadLookup(keyword, 0) }

// OffloadKeyword is the ethtool -K keyword of a name `ethtool -k` prints
// ("generic-receive-offload" → "gro").
func OffloadKeyword(name string) (string, bool) { return offloadLookup(name, 1) }

func offloadLookup(v string, from int) (string, bool) {
	for _, n := range offloadNames {
		if n[from] == v {
			return n[1-from], true
		}
	}
	return "", false
}
