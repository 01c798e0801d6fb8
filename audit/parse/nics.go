package parse

import (
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/safe"
	"github.com/kaudit/kaudit/nicpersist"
)

// NICs parses the gather script's nics section: per interface "@if NAME",
// "@driver NAME", "@ring" and "@features" followed by ethtool -g / -k
// output, and the persistence lines (NICPersist). A part ethtool could not
// read keeps its error in RingErr / FeatErr.
func NICs(body string) []facts.NIC {
	var out []facts.NIC
	var cur *facts.NIC
	var part string
	var buf strings.Builder
	flush := func() {
		if cur == nil {
			return
		}
		text := buf.String()
		switch part {
		case "ring":
			r, err := EthtoolRing(text)
			cur.Ring = r
			if err != nil {
				cur.RingErr = err.Error()
			}
		case "features":
			fs, err := EthtoolFeatures(text)
			cur.Features = fs
			if err != nil {
				cur.FeatErr = err.Error()
			}
		}
		buf.Reset()
		part = ""
	}
	var persist [][]string // per NIC in out: its persistence lines
	for _, line := range strings.Split(body, "\n") {
		switch {
		case strings.HasPrefix(line, "@if "):
			flush()
			out = append(out, facts.NIC{Name: strings.TrimSpace(line[4:])})
			persist = append(persist, nil)
			cur = &out[len(out)-1]
		case strings.HasPrefix(line, "@driver ") && cur != nil:
			cur.Driver = strings.TrimSpace(line[8:])
		case line == "@ring" || line == "@features":
			flush()
			part = line[1:]
		case cur != nil && strings.HasPrefix(line, "@"): // a persistence line (npersist in gather.sh)
			flush()
			persist[len(persist)-1] = append(persist[len(persist)-1], line)
		case part != "":
			buf.WriteString(line)
			buf.WriteByte('\n')
		}
	}
	flush()
	for i := range out {
		if persist[i] != nil {
			out[i].Persist = NICPersist(out[i].Name, out[i].Driver, persist[i])
			out[i].Boot = nicpersist.Boot(out[i].Name, out[i].Driver, out[i].Persist, persist[i])
		}
	}
	return out
}

// NICPersist decides what persists interface name's settings from
// the gather script's persistence lines for it (npersist in gather.sh):
// NetworkManager when it manages the device with a connection, else an
// ifcfg file, else an ifupdown stanza (both only when ifup exists), else
// systemd .link files (99-default.link exists and udevadm --version is at
// least nicpersist.MinLinkRingsVersion, /etc/systemd/network exists), else a udev
// rule. File of
// a systemd-link result names an existing .link in /etc or /run that
// already matches the interface (by OriginalName, Name, MAC or driver),
// kaudit's own 10-kaudit-*.link excepted.
func NICPersist(name, driver string, lines []string) *facts.NICPersist {
	var pl persistLines
	for _, line := range lines {
		key, val, _ := strings.Cut(line, " ")
		pl.add(key, val, name, driver)
	}
	p := &facts.NICPersist{Mechanism: facts.PersistUdev, MAC: pl.mac, NMVersion: pl.nmVersion}
	switch {
	case nmManaged(pl.nmState) && pl.nmConn != "" && pl.nmConn != "--":
		p.Mechanism, p.Connection, p.ConnectionUUID = facts.PersistNetworkManager, pl.nmConn, pl.nmUUID
	case pl.ifcfg != "" && pl.ifup:
		p.Mechanism, p.File, p.Line, p.EthtoolOpts = facts.PersistIfcfg, pl.ifcfg, pl.optsLine, pl.opts
	case pl.ifaceFile != "" && pl.ifup:
		p.Mechanism, p.File, p.Line = facts.PersistIfupdown, pl.ifaceFile, pl.ifaceLine
	case pl.linkDefault != "" && pl.linkDir && pl.udevVersion >= nicpersist.MinLinkRingsVersion:
		p.Mechanism, p.File = facts.PersistSystemdLink, pl.matchLink
	}
	return p
}

// persistLines is what an interface's persistence lines say.
type persistLines struct {
	mac, nmVersion, nmState, nmConn, nmUUID string
	ifcfg, opts, ifaceFile                  string
	linkDefault, curLink, matchLink         string
	optsLine, ifaceLine, udevVersion        int
	ifup, linkDir                           bool
}

// add reads one persistence line (key and the rest) of interface name.
func (pl *persistLines) add(key, val, name, driver string) {
	switch key {
	case "@mac":
		if mac := strings.ToLower(strings.TrimSpace(val)); reMAC.MatchString(mac) && mac != "00:00:00:00:00:00" {
			pl.mac = mac
		}
	case "@nm-version":
		pl.nmVersion = strings.TrimSpace(val)
	case "@nm-state":
		pl.nmState = strings.TrimSpace(val)
	case "@nm-connection":
		pl.nmConn = nmUnescape(strings.TrimSpace(val))
	case "@nm-uuid":
		if u := strings.ToLower(strings.TrimSpace(val)); safe.NMUUID(u) {
			pl.nmUUID = u
		}
	case "@ifup":
		pl.ifup = strings.TrimSpace(val) != ""
	case "@ifcfg":
		pl.ifcfg = strings.TrimSpace(val)
	case "@ifcfg-opts":
		n, text, ok := strings.Cut(val, ":")
		ln, err := strconv.Atoi(n)
		if !ok || err != nil {
			return
		}
		_, v, _ := strings.Cut(text, "=")
		pl.optsLine, pl.opts = ln, unquoteShell(strings.TrimSpace(v))
	case "@iface":
		n, file, ok := strings.Cut(val, " ")
		ln, err := strconv.Atoi(n)
		if ok && err == nil && pl.ifaceFile == "" {
			pl.ifaceLine, pl.ifaceFile = ln, file
		}
	case "@link-default":
		pl.linkDefault = strings.TrimSpace(val)
	case "@link-dir":
		pl.linkDir = true
	case "@udev-version":
		pl.udevVersion, _ = strconv.Atoi(strings.TrimSpace(val))
	case "@link":
		pl.curLink = strings.TrimSpace(val)
	case "@link-key":
		if pl.curLink == "" || pl.matchLink != "" || strings.HasPrefix(pl.curLink, "/etc/systemd/network/10-kaudit-") {
			return
		}
		k, v, ok := strings.Cut(val, "=")
		if ok && linkKeyMatches(strings.TrimSpace(k), strings.TrimSpace(v), name, driver, pl.mac) {
			pl.matchLink = pl.curLink
		}
	}
}

var reMAC = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){5}$`)

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

// unquoteShell removes one level of "..." or '...' around a value.
func unquoteShell(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// linkKeyMatches reports whether one key of a .link file selects the
// interface: OriginalName and Name (globs, space-separated lists), MAC
// addresses, or its driver.
func linkKeyMatches(key, val, name, driver, mac string) bool {
	for _, w := range strings.Fields(val) {
		w = strings.TrimPrefix(w, "!")
		switch key {
		case "OriginalName", "Name":
			if ok, err := path.Match(w, name); ok && err == nil {
				return true
			}
		case "MACAddress", "PermanentMACAddress":
			if mac != "" && strings.EqualFold(w, mac) {
				return true
			}
		case "Driver":
			if driver != "" {
				if ok, err := path.Match(w, driver); ok && err == nil {
					return true
				}
			}
		}
	}
	return false
}
