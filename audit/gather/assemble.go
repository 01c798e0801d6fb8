package gather

import (
	"fmt"
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
	for _, line := range strings.Split(body, "\n") {
		switch {
		case strings.HasPrefix(line, "@if "):
			flush()
			out = append(out, facts.NIC{Name: strings.TrimSpace(line[4:])})
			cur = &out[len(out)-1]
		case strings.HasPrefix(line, "@driver ") && cur != nil:
			cur.Driver = strings.TrimSpace(line[8:])
		case line == "@ring" || line == "@features":
			flush()
			part = line[1:]
		case part != "":
			buf.WriteString(line)
			buf.WriteByte('\n')
		}
	}
	flush()
	return out
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
