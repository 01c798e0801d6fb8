package apply

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/safe"
	"github.com/kaudit/kaudit/remediate"
)

// NIC changes: ring sizes (ethtool -G) and offloads (ethtool -K), set at
// runtime and persisted in the file the plan names (nicpersist.go): by
// default remediate.NICPersistPath, a udev rule file kaudit owns (one rule
// per setting, running ethtool when the interface appears).

var (
	reEthtool = regexp.MustCompile(`^/[A-Za-z0-9_./-]+$`)
	reRing    = regexp.MustCompile(`^[1-9][0-9]{0,6}$`)
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
	switch kind {
	case remediate.KindNICRing:
		if !reRing.MatchString(v) {
			return fmt.Errorf("%s: ring size %q is not a positive number", target, v)
		}
	default:
		if v != "on" && v != "off" {
			return fmt.Errorf("%s: %q is not on or off", target, v)
		}
	}
	return nil
}

const nicRulesHeader = "# Managed by kaudit — do not edit by hand; changes are overwritten by 'kaudit fix'."

var reNICRule = regexp.MustCompile(`^ACTION=="add", SUBSYSTEM=="net", KERNEL=="([A-Za-z0-9_.:@-]{1,15})", RUN\+="(/[A-Za-z0-9_./-]+) -([GK]) ([A-Za-z0-9_.:@-]{1,15}) ([a-z]+) ([a-z0-9]+)"$`)

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

// RenderNICRules returns the new content of the udev rule file: the header
// with runID, then one rule per setting of existing (kaudit's own earlier
// rules; anything else in the file is refused) and set, sorted; set wins.
func RenderNICRules(existing []byte, set []NICSetting, ethtool, runID string) ([]byte, error) {
	if !reEthtool.MatchString(ethtool) || strings.Contains(ethtool, "..") {
		return nil, fmt.Errorf("ethtool path %q: want an absolute path of [A-Za-z0-9_./-]", ethtool)
	}
	if !remediate.ValidRunID(runID) {
		return nil, fmt.Errorf("run id %q", runID)
	}
	vals := map[string]NICSetting{}
	for i, line := range strings.Split(string(existing), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := reNICRule.FindStringSubmatch(line)
		if m == nil || m[1] != m[4] {
			return nil, fmt.Errorf("%s line %d is not a rule kaudit wrote: fix or remove the line, then re-run", remediate.NICPersistPath, i+1)
		}
		kind := remediate.KindNICOffload
		if m[3] == "G" {
			kind = remediate.KindNICRing
		}
		s := NICSetting{Kind: kind, Iface: m[1], Setting: m[5], Value: m[6]}
		if _, _, err := nicTarget(kind, s.Iface+" "+s.Setting); err != nil {
			return nil, fmt.Errorf("%s line %d: %v", remediate.NICPersistPath, i+1, err)
		}
		if err := checkNICValue(kind, s.Iface+" "+s.Setting, s.Value); err != nil {
			return nil, fmt.Errorf("%s line %d: %v", remediate.NICPersistPath, i+1, err)
		}
		vals[s.Iface+" "+s.Setting] = s
	}
	if err := checkSettings(set); err != nil {
		return nil, err
	}
	for _, s := range set {
		vals[s.Iface+" "+s.Setting] = s
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(nicRulesHeader + "\n# Last run: " + runID + "\n")
	for _, k := range keys {
		s := vals[k]
		flag := "K"
		if s.Kind == remediate.KindNICRing {
			flag = "G"
		}
		fmt.Fprintf(&b, "ACTION==\"add\", SUBSYSTEM==\"net\", KERNEL==\"%s\", RUN+=\"%s -%s %s %s %s\"\n", s.Iface, ethtool, flag, s.Iface, s.Setting, s.Value)
	}
	return []byte(b.String()), nil
}

// nicRulesHold reports whether a rule file already holds every setting.
func nicRulesHold(existing []byte, set []NICSetting) bool {
	have := map[string]string{}
	for _, line := range strings.Split(string(existing), "\n") {
		if m := reNICRule.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			have[m[1]+" "+m[5]] = m[6]
		}
	}
	for _, s := range set {
		if have[s.Iface+" "+s.Setting] != s.Value {
			return false
		}
	}
	return true
}

// NetworkManager connection settings are running values of the NIC kinds
// whose key is remediate.NMConnection.Key: read with nmcli -g, written
// with nmcli connection modify; a property the connection does not set
// reads as nmUnset, and writing nmUnset removes it again.
const nmUnset = "unset"

// nmProperty is the nmcli property of a setting.
func nmProperty(kind remediate.ChangeKind, setting string) string {
	if kind == remediate.KindNICRing {
		return "ethtool.ring-" + setting
	}
	return "ethtool.feature-" + setting
}

func isNIC(kind remediate.ChangeKind) bool { return kind.IsNIC() }
