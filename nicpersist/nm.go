package nicpersist

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/internal/safe"
)

// nm is a NetworkManager connection's ethtool.* properties, applied when
// the connection is activated. kaudit writes them with nmcli connection
// modify; they are not a file: their previous values are read,
// journalled and restored as running values (Plan.NM, NMProperty).
type nm struct{ noFile }

func (nm) Name() facts.PersistMechanism { return facts.PersistNetworkManager }

// detect: NetworkManager manages the device with a connection.
func (nm) detect(p *facts.NICPersist, in *input) bool {
	conn := nmUnescape(in.last("@nm-connection"))
	if !nmManaged(in.last("@nm-state")) || conn == "" || conn == "--" {
		return false
	}
	p.Mechanism, p.Connection = facts.PersistNetworkManager, conn
	if u := strings.ToLower(in.last("@nm-uuid")); safe.NMUUID(u) {
		p.ConnectionUUID = u
	}
	return true
}

// nmManaged reads nmcli's GENERAL.STATE ("100 (connected)"): the device
// is managed when its state is above 20 (unmanaged 10, unavailable 20).
// A device "connected (externally)" runs a connection NetworkManager
// generated from what it found: changing that profile persists nothing.
func nmManaged(state string) bool {
	n, _, _ := strings.Cut(state, " ")
	code, err := strconv.Atoi(n)
	return err == nil && code > 20 && !strings.Contains(state, "externally")
}

// nmUnescape undoes nmcli -t's escaping of ':' and '\\'.
func nmUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// NMProperty is the nmcli property of a setting.
func NMProperty(setting string) string {
	if isRing(setting) {
		return "ethtool.ring-" + setting
	}
	return "ethtool.feature-" + setting
}

// boot applies the connection's ethtool.* properties: a ring size above
// 0, a feature on or off ("ignore", "", "--": not set).
func (nm) boot(b *builder, in *input) {
	if !in.managedBy(facts.PersistNetworkManager) {
		return
	}
	props := map[string]string{}
	in.each("@nm-ethtool", func(val string) {
		s, v, _ := strings.Cut(val, " ")
		props[s] = strings.TrimSpace(v)
	})
	src := fmt.Sprintf("NetworkManager connection %q", in.ps.Connection)
	for _, s := range []string{"rx", "tx", "tso", "gso", "gro", "lro"} {
		v, ok := props[s]
		switch {
		case !ok:
		case v == "!":
			b.unsure("%s: ethtool property for %s not read (nmcli failed)", src, s)
		case v == "" || v == "--" || v == "ignore" || v == "default" || v == "0":
		case CheckValue(s, "", v) == nil:
			b.set(s, v, facts.PersistNetworkManager, src)
		default:
			b.unsure("%s: ethtool property for %s is %q: not read", src, s, v)
		}
	}
}

// Plan persists in the connection (nmcli connection modify UUID
// ethtool.…) when its UUID is known and NetworkManager takes every
// setting: offloads from 1.14, ring sizes from 1.26. Else the udev rule,
// with the nmcli command that would keep them in NetworkManager.
func (nm) Plan(nic facts.NIC, set map[string]string) Plan {
	ps := nic.Persist
	need := 14
	var args []string
	for _, s := range sortedKeys(set) {
		if isRing(s) {
			need = 26
		}
		args = append(args, NMProperty(s)+" "+set[s])
	}
	if safe.NMUUID(ps.ConnectionUUID) && versionAtLeast(ps.NMVersion, 1, need) {
		return Plan{
			Path: fmt.Sprintf("NetworkManager connection %q", ps.Connection),
			NM:   ps.ConnectionUUID,
			Note: fmt.Sprintf("persisted in NetworkManager connection %q (nmcli connection modify %s %s; the previous values are journalled for rollback): NetworkManager applies it when the connection is next activated",
				ps.Connection, ps.ConnectionUUID, strings.Join(args, " ")),
		}
	}
	action := fmt.Sprintf("%s is managed by NetworkManager (connection %q): kaudit persisted its settings in %s; to keep them in NetworkManager instead run `nmcli connection modify %s %s`, then remove %s's lines from %s",
		nic.Name, ps.Connection, UdevPath, remote.QuoteWord(ps.Connection), strings.Join(args, " "), nic.Name, UdevPath)
	if need == 26 && !versionAtLeast(ps.NMVersion, 1, 26) {
		action = fmt.Sprintf("%s is managed by NetworkManager %s (connection %q): kaudit persisted its settings in %s (NetworkManager takes ring sizes only from 1.26 on)",
			nic.Name, cmp.Or(ps.NMVersion, "(version unknown)"), ps.Connection, UdevPath)
	}
	return Plan{Path: UdevPath, Manual: action,
		Note: fmt.Sprintf("%s is managed by NetworkManager (connection %q): persisted with the udev rule; ethtool settings in that connection, if any, win when it is activated", nic.Name, ps.Connection)}
}

var reMajorMinor = regexp.MustCompile(`^(\d+)\.(\d+)`)

// versionAtLeast compares a NetworkManager version ("1.42.2-1.el9") with
// major.minor.
func versionAtLeast(v string, major, minor int) bool {
	m := reMajorMinor.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	ma, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	return ma > major || (ma == major && mi >= minor)
}
