package apply

import (
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/safe"
	"github.com/kaudit/kaudit/nicpersist"
	"github.com/kaudit/kaudit/remediate"
)

// nicTarget splits and validates "eth0 rx" / "eth0 gro" for kind, or a
// NetworkManager connection's setting "nm:<UUID> rx" (remediate.NMConnection.Key).
func nicTarget(kind remediate.ChangeKind, target string) (iface, setting string, err error) {
	iface, setting, ok := strings.Cut(target, " ")
	_, nm := remediate.NMConnectionOf(iface)
	if !ok || (!nm && (!safe.Iface(iface) || remediate.IsNMKey(iface) || iface == "." || iface == "..")) {
		return "", "", fmt.Errorf("NIC target %q: want \"IFACE SETTING\" with a valid interface name", target)
	}
	switch kind {
	case remediate.KindNICRing:
		if setting != "rx" && setting != "tx" {
			return "", "", fmt.Errorf("NIC target %q: ring setting must be rx or tx", target)
		}
	case remediate.KindNICOffload:
		if _, ok := facts.OffloadName(setting); !ok {
			return "", "", fmt.Errorf("NIC target %q: offload must be one of tso, gso, gro, lro", target)
		}
	default:
		return "", "", fmt.Errorf("NIC target %q: kind %q", target, kind)
	}
	return iface, setting, nil
}

// checkNICValue validates a ring size or on/off (or, in a NetworkManager
// connection, "unset").
func checkNICValue(kind remediate.ChangeKind, target, v string) error {
	if v == nmUnset && remediate.IsNMKey(target) {
		return nil
	}
	setting := "gro"
	if kind == remediate.KindNICRing {
		setting = "rx"
	}
	return nicpersist.CheckValue(setting, target, v)
}

// NICSetting is one persisted NIC setting.
type NICSetting struct {
	Kind                  remediate.ChangeKind
	Iface, Setting, Value string
	// Path is the file it is persisted in (remediate.Change.PersistPath;
	// "": remediate.NICPersistPath), Match the .link match
	// (remediate.Change.PersistMatch), NM the NetworkManager connection
	// (remediate.Change.NM).
	Path  string
	Match remediate.PersistMatch
	NM    remediate.NMConnection
}

// NetworkManager connection settings are running values of the NIC kinds
// whose key is remediate.NMConnection.Key: read with nmcli -g, written
// with nmcli connection modify; a property the connection does not set
// reads as nmUnset, and writing nmUnset removes it again.
const nmUnset = "unset"

func isNIC(kind remediate.ChangeKind) bool { return kind.IsNIC() }
