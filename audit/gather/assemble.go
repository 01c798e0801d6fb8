package gather

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/parse"
)

// Parse turns the script's output into facts. A section that is missing,
// denied or unparseable is recorded in Facts.Sections; only output that is
// not kaudit's at all (no sections, truncated) is an error.
func Parse(out []byte, marker string, kafkaPort int) (*facts.Facts, error) {
	secs, err := Split(out, marker)
	if err != nil {
		return nil, err
	}
	return Assemble(secs, kafkaPort), nil
}

// Assemble builds facts from split sections.
func Assemble(secs map[string]Section, kafkaPort int) *facts.Facts {
	f := &facts.Facts{KafkaPort: kafkaPort, Sections: map[string]facts.SectionStatus{}}
	note := func(name, state, msg string) {
		f.Sections[name] = facts.SectionStatus{State: state, Message: strings.TrimSpace(firstLines(msg, 3))}
	}
	get := func(name string) (Section, bool) {
		s, ok := secs[name]
		if !ok {
			note(name, "error", "section missing from gather output")
			return s, false
		}
		if s.State != "ok" {
			note(name, s.State, s.Body)
			return s, false
		}
		return s, true
	}

	if s, ok := get(facts.SecKernel); ok {
		kv := keyValues(s.Body, "=")
		f.Kernel.Release = strings.TrimSpace(kv["release"])
		f.Kernel.Version = strings.TrimSpace(kv["version"])
		f.Kernel.Signature = strings.TrimSpace(kv["signature"])
		f.Kernel.Arch = strings.TrimSpace(kv["arch"])
		if strings.HasPrefix(f.Kernel.Release, "!") {
			note(facts.SecKernel, "denied", f.Kernel.Release)
			f.Kernel.Release = ""
		}
	}
	if s, ok := get(facts.SecOSRelease); ok {
		o := parse.ParseOSRelease(s.Body)
		f.Kernel.Distro, f.Kernel.DistroVer, f.Kernel.DistroLike, f.Kernel.Pretty = o.ID, o.VersionID, o.IDLike, o.PrettyName
	}
	if s, ok := get(facts.SecSysctl); ok {
		f.Sysctl = map[string]string{}
		var bad []string
		for _, line := range strings.Split(s.Body, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				f.Sysctl[k] = strings.Join(strings.Fields(v), " ")
			} else if k, why, ok := strings.Cut(line, "!"); ok {
				bad = append(bad, k+" ("+why+")")
			}
		}
		if len(bad) > 0 {
			note(facts.SecSysctl, "partial", "not readable: "+strings.Join(bad, ", "))
		}
	}
	if s, ok := get(facts.SecPersisted); ok {
		f.Persisted = parse.SysctlFiles(s.Body)
		if strings.Contains(s.Body, "\n!denied ") || strings.HasPrefix(s.Body, "!denied ") {
			note(facts.SecPersisted, "partial", deniedLines(s.Body))
		}
	}
	if s, ok := secs[facts.SecChangelog]; ok && s.State == "ok" {
		f.Kernel.Changelog = parseChangelog(s.Body)
	}
	if s, ok := get(facts.SecNetstat); ok {
		nt, err := parse.Netstat(s.Body)
		if err != nil {
			note(facts.SecNetstat, "error", err.Error())
		} else {
			f.Netstat = nt
		}
	}
	if s, ok := get(facts.SecListeners); ok {
		ls, err := parse.SSListeners(s.Body)
		if err != nil {
			note(facts.SecListeners, "error", err.Error())
		} else {
			f.Listeners = ls
			if f.Listeners == nil {
				f.Listeners = []facts.Listener{}
			}
		}
	}
	f.Kafka = assembleKafka(secs, note)
	if s, ok := get(facts.SecNICs); ok {
		f.NICs = parseNICs(s.Body)
	} else if s.Name != "" {
		// ethtool missing: still list the interfaces, without settings.
		for _, n := range parseNICs(s.Body) {
			n.RingErr, n.FeatErr = "ethtool not installed", "ethtool not installed"
			f.NICs = append(f.NICs, n)
		}
	}
	if s, ok := get(facts.SecEvidence); ok {
		if strings.Contains(s.Body, "Operation not permitted") || strings.Contains(s.Body, "Permission denied") || strings.Contains(s.Body, "read kernel buffer failed") {
			note(facts.SecEvidence, "denied", "dmesg: kernel log not readable by this user (kernel.dmesg_restrict); run with become: sudo to see SYN-flood lines")
		}
		f.Evidence.SynFlood = parse.SynFloodLines(s.Body)
	}
	assembleConns(secs, f, note)
	if len(f.Sections) == 0 {
		f.Sections = nil
	}
	return f
}

func assembleKafka(secs map[string]Section, note func(name, state, msg string)) *facts.Kafka {
	s, ok := secs[facts.SecKafka]
	if !ok {
		note(facts.SecKafka, "error", "section missing from gather output")
		return nil
	}
	if s.State == "absent" {
		note(facts.SecKafka, "absent", "no process listening on the Kafka port and no kafka.Kafka command line")
		return nil
	}
	k := &facts.Kafka{Properties: map[string]string{}}
	kv := keyValues(s.Body, "=")
	k.PID, _ = strconv.Atoi(kv["pid"])
	k.FoundBy = kv["found"]
	if s.State != "ok" {
		note(facts.SecKafka, s.State, fmt.Sprintf("broker pid %d found but its command line is not readable", k.PID))
		return k
	}
	var cp, args []string
	overrides := map[string]string{}
	for _, line := range strings.Split(s.Body, "\n") {
		key, val, _ := strings.Cut(line, "=")
		switch key {
		case "cp":
			cp = append(cp, val)
		case "main":
			args = append(args, val)
		case "arg":
			args = append(args, val)
		case "override":
			if pk, pv, found := strings.Cut(val, "="); found {
				overrides[pk] = pv
			}
		}
	}
	cmd, _ := parse.ParseKafkaCmdline(append([]string{"java", "-cp", strings.Join(cp, ":")}, args...))
	k.Config = cmd.Config
	if jar, path, ok := parse.KafkaVersionFromClasspath(cp); ok {
		k.Version, k.Distribution, k.Scala, k.Jar = jar.Version, jar.Distribution, jar.Scala, path
	} else {
		note(facts.SecKafka, "partial", "no kafka_<scala>-<version>.jar on the broker's classpath: version unknown")
	}
	if c, ok := secs[facts.SecKafkaConf]; ok {
		kv := keyValues(c.Body, "=")
		if p := kv["path"]; p != "" {
			k.Config = p
		}
		if c.State != "ok" {
			note(facts.SecKafkaConf, c.State, fmt.Sprintf("server.properties %s: %s", k.Config, c.State))
		} else {
			k.PropertyLines = map[string]int{}
			for _, line := range strings.Split(c.Body, "\n") {
				n, text, ok := strings.Cut(line, ":")
				ln, err := strconv.Atoi(n)
				if !ok || err != nil {
					continue
				}
				props, _ := parse.Properties(text)
				for pk, pv := range props {
					k.Properties[pk] = pv
					k.PropertyLines[pk] = ln
				}
			}
		}
	}
	for pk, pv := range overrides {
		k.Properties[pk] = pv // --override wins over the file, as in Kafka
		delete(k.PropertyLines, pk)
	}
	return k
}

func parseNICs(body string) []facts.NIC {
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
			r, err := parse.EthtoolRing(text)
			cur.Ring = r
			if err != nil {
				cur.RingErr = err.Error()
			}
		case "features":
			fs, err := parse.EthtoolFeatures(text)
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
		case cur != nil && isPersistLine(line):
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
			out[i].Persist = ParseNICPersist(out[i].Name, out[i].Driver, persist[i])
		}
	}
	return out
}

var persistKeys = []string{"@mac ", "@nm-version ", "@nm-state ", "@nm-connection ", "@nm-uuid ", "@ifup ", "@ifcfg ", "@ifcfg-opts ", "@iface ", "@link-default ", "@udev-version ", "@link-dir ", "@link ", "@link-key "}

func isPersistLine(line string) bool {
	for _, k := range persistKeys {
		if strings.HasPrefix(line, k) || line == strings.TrimSpace(k) {
			return true
		}
	}
	return false
}

// ParseNICPersist decides what persists interface name's settings from
// the gather script's persistence lines for it (npersist in gather.sh):
// NetworkManager when it manages the device with a connection, else an
// ifcfg file, else an ifupdown stanza (both only when ifup exists), else
// systemd .link files (99-default.link exists and udevadm --version is at
// least MinLinkRingsVersion, /etc/systemd/network exists), else a udev
// rule. File of
// a systemd-link result names an existing .link in /etc or /run that
// already matches the interface (by OriginalName, Name, MAC or driver),
// kaudit's own 10-kaudit-*.link excepted.
func ParseNICPersist(name, driver string, lines []string) *facts.NICPersist {
	p := &facts.NICPersist{Mechanism: facts.PersistUdev}
	var nmState, nmConn, nmUUID, ifcfg, ifaceFile, linkDefault, curLink, matchLink string
	var ifaceLine, optsLine, udevVersion int
	var opts string
	ifup, linkDir := false, false
	for _, line := range lines {
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "@mac":
			if mac := strings.ToLower(strings.TrimSpace(val)); reMAC.MatchString(mac) && mac != "00:00:00:00:00:00" {
				p.MAC = mac
			}
		case "@nm-version":
			p.NMVersion = strings.TrimSpace(val)
		case "@nm-state":
			nmState = strings.TrimSpace(val)
		case "@nm-connection":
			nmConn = nmUnescape(strings.TrimSpace(val))
		case "@nm-uuid":
			if u := strings.ToLower(strings.TrimSpace(val)); reUUID.MatchString(u) {
				nmUUID = u
			}
		case "@ifup":
			ifup = strings.TrimSpace(val) != ""
		case "@ifcfg":
			ifcfg = strings.TrimSpace(val)
		case "@ifcfg-opts":
			n, text, ok := strings.Cut(val, ":")
			ln, err := strconv.Atoi(n)
			if !ok || err != nil {
				continue
			}
			_, v, _ := strings.Cut(text, "=")
			optsLine, opts = ln, unquoteShell(strings.TrimSpace(v))
		case "@iface":
			n, file, ok := strings.Cut(val, " ")
			ln, err := strconv.Atoi(n)
			if ok && err == nil && ifaceFile == "" {
				ifaceLine, ifaceFile = ln, file
			}
		case "@link-default":
			linkDefault = strings.TrimSpace(val)
		case "@link-dir":
			linkDir = true
		case "@udev-version":
			udevVersion, _ = strconv.Atoi(strings.TrimSpace(val))
		case "@link":
			curLink = strings.TrimSpace(val)
		case "@link-key":
			if curLink == "" || matchLink != "" || strings.HasPrefix(curLink, "/etc/systemd/network/10-kaudit-") {
				continue
			}
			k, v, ok := strings.Cut(val, "=")
			if ok && linkKeyMatches(strings.TrimSpace(k), strings.TrimSpace(v), name, driver, p.MAC) {
				matchLink = curLink
			}
		}
	}
	switch {
	case nmManaged(nmState) && nmConn != "" && nmConn != "--":
		p.Mechanism, p.Connection, p.ConnectionUUID = facts.PersistNetworkManager, nmConn, nmUUID
	case ifcfg != "" && ifup:
		p.Mechanism, p.File, p.Line, p.EthtoolOpts = facts.PersistIfcfg, ifcfg, optsLine, opts
	case ifaceFile != "" && ifup:
		p.Mechanism, p.File, p.Line = facts.PersistIfupdown, ifaceFile, ifaceLine
	case linkDefault != "" && linkDir && udevVersion >= MinLinkRingsVersion:
		p.Mechanism, p.File = facts.PersistSystemdLink, matchLink
	}
	return p
}

// MinLinkRingsVersion is the first systemd whose .link files take
// RxBufferSize=/TxBufferSize= (244; the offload keys came in 232): on an
// older one kaudit keeps to the udev rule.
const MinLinkRingsVersion = 244

var reUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

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

const fixTitle = "net: Update window_clamp if SOCK_RCVBUF is set"

func parseChangelog(body string) *facts.KernelChangelog {
	c := &facts.KernelChangelog{}
	var best []int
	for _, line := range strings.Split(body, "\n") {
		switch {
		case strings.HasPrefix(line, "source="):
			c.Source = strings.TrimPrefix(line, "source=")
		case strings.Contains(line, fixTitle):
			c.HasFix = true
		}
		if i := strings.Index(line, "LTS tag: v"); i >= 0 {
			tag := strings.Fields(line[i+len("LTS tag: v"):])
			if len(tag) == 0 {
				continue
			}
			if v := versionInts(tag[0]); v != nil && lessInts(best, v) {
				best, c.LastLTSTag = v, "v"+strings.TrimRight(tag[0], ".,;")
			}
		}
	}
	if c.Source == "" {
		return nil
	}
	return c
}

func versionInts(s string) []int {
	var out []int
	for _, p := range strings.Split(strings.TrimRight(s, ".,;"), ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}

func lessInts(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

func keyValues(body, sep string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(body, "\n") {
		if k, v, ok := strings.Cut(line, sep); ok {
			if _, dup := m[k]; !dup {
				m[k] = v
			}
		}
	}
	return m
}

func deniedLines(body string) string {
	var d []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "!denied ") {
			d = append(d, strings.TrimPrefix(line, "!denied "))
		}
	}
	sort.Strings(d)
	return "not readable: " + strings.Join(d, ", ")
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
