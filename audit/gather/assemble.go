package gather

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/parse"
	"github.com/kaudit/kaudit/internal/redact"
	"github.com/kaudit/kaudit/internal/remote"
)

// Parse turns the script's output into facts. A section that is missing,
// denied or unparseable is recorded in Facts.Sections; only output that is
// not kaudit's at all (no sections, truncated) is an error.
func Parse(out []byte, marker string, kafkaPort int) (*facts.Facts, error) {
	secs, err := remote.Sections(out, marker, "gather")
	if err != nil {
		return nil, err
	}
	return Assemble(secs, kafkaPort), nil
}

// sectionParsers says what each section of the script's output becomes,
// in the script's order. A parser is called only for a section that came
// back "ok" (a missing or failed one is noted in Facts.Sections instead),
// unless it is raw: then it sees the section whatever its state, with an
// empty Name when the section is missing.
var sectionParsers = []struct {
	name  string
	raw   bool
	parse func(a *assembler, s remote.Section)
}{
	{facts.SecKernel, false, (*assembler).kernel},
	{facts.SecOSRelease, false, (*assembler).osRelease},
	{facts.SecSysctl, false, (*assembler).sysctl},
	{facts.SecPersisted, false, (*assembler).persisted},
	{facts.SecChangelog, true, (*assembler).changelog},
	{facts.SecNetstat, false, (*assembler).netstat},
	{facts.SecListeners, false, (*assembler).listeners},
	{facts.SecKafka, true, (*assembler).kafka}, // and kafka-config
	{facts.SecProcess, false, (*assembler).brokerProcess},
	{facts.SecLogDirs, true, (*assembler).logDirs}, // before kafka-meta, which joins its entries by Path
	{facts.SecKafkaMeta, true, (*assembler).kafkaMeta},
	{facts.SecBrokerUnit, true, (*assembler).brokerUnit},
	{facts.SecCgroup, true, (*assembler).brokerCgroup},
	{facts.SecLogDevices, true, (*assembler).logDevices},
	{facts.SecFeasible, true, (*assembler).feasibility},
	{facts.SecKernelCaps, true, (*assembler).kernelCaps},
	{facts.SecEstablished, false, (*assembler).established},
	{facts.SecConns, false, (*assembler).conns},
	{facts.SecNICs, true, (*assembler).nics},
	{facts.SecHost, true, (*assembler).host}, // after nics: it adds their MTU
	{facts.SecTimeSync, true, (*assembler).timeSync},
	{facts.SecConntrack, true, (*assembler).conntrackStat},
	{facts.SecRDNS, true, (*assembler).rdns},
	{facts.SecEvidence, false, (*assembler).evidence},
}

// assembler builds one host's facts from its sections.
type assembler struct {
	f    *facts.Facts
	secs map[string]remote.Section
}

func (a *assembler) note(name string, state facts.SectionState, msg string) {
	a.f.Sections[name] = facts.SectionStatus{State: state, Message: strings.TrimSpace(firstLines(msg, 3))}
}

// into returns what stores a section's reading in *dst, or, when the
// reading failed, notes section name as an error and leaves *dst.
func into[T any](a *assembler, name string, dst *T) func(T, error) {
	return func(v T, err error) {
		if err != nil {
			a.note(name, facts.SectionError, err.Error())
			return
		}
		*dst = v
	}
}

// noteSection notes section s, which came back other than "ok", in the
// state its end line gives; a state kaudit does not know is an error.
func (a *assembler) noteSection(name string, s remote.Section, msg string) {
	st, err := facts.ParseSectionState(string(s.State))
	if err != nil {
		st, msg = facts.SectionError, "gather output malformed: "+err.Error()
	}
	a.note(name, st, msg)
}

// usable reports whether section s came back "ok", noting it otherwise.
func (a *assembler) usable(name string, s remote.Section) bool {
	if s.Name == "" {
		a.note(name, facts.SectionError, "section missing from gather output")
		return false
	}
	if !s.OK() {
		a.noteSection(name, s, s.Body)
		return false
	}
	return true
}

// Assemble builds facts from split sections.
func Assemble(secs map[string]remote.Section, kafkaPort int) *facts.Facts {
	a := &assembler{f: &facts.Facts{KafkaPort: kafkaPort, Sections: map[string]facts.SectionStatus{}}, secs: secs}
	client := isClientRun(secs)
	if client {
		a.f.Role = facts.RoleClient
	}
	for _, p := range sectionParsers {
		if client && brokerOnly[p.name] {
			continue // the client profile gathers kernel, sysctls and conns only
		}
		s, present := secs[p.name]
		if present {
			s.Name = p.name
		}
		if p.raw || a.usable(p.name, s) {
			p.parse(a, s)
		}
	}
	if len(a.f.Sections) == 0 {
		a.f.Sections = nil
	}
	return a.f
}

func (a *assembler) kernel(s remote.Section) {
	k := &a.f.Kernel
	kv := keyValues(s.Body, "=")
	k.Release = strings.TrimSpace(kv["release"])
	k.Version = strings.TrimSpace(kv["version"])
	k.Signature = strings.TrimSpace(kv["signature"])
	k.Arch = strings.TrimSpace(kv["arch"])
	k.BootID = parse.BootID(kv["boot_id"])
	if strings.HasPrefix(k.Release, "!") {
		a.note(facts.SecKernel, facts.SectionDenied, k.Release)
		k.Release = ""
	}
}

func (a *assembler) osRelease(s remote.Section) {
	o := parse.ParseOSRelease(s.Body)
	k := &a.f.Kernel
	k.Distro, k.DistroVer, k.DistroLike, k.Pretty = o.ID, o.VersionID, o.IDLike, o.PrettyName
}

func (a *assembler) sysctl(s remote.Section) {
	a.f.Sysctl = map[string]string{}
	var bad []string
	for _, line := range strings.Split(s.Body, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			a.f.Sysctl[k] = strings.Join(strings.Fields(v), " ")
		} else if k, why, ok := strings.Cut(line, "!"); ok {
			bad = append(bad, k+" ("+why+")")
			if a.f.SysctlUnread == nil {
				a.f.SysctlUnread = map[string]string{}
			}
			a.f.SysctlUnread[k] = why
		}
	}
	if len(bad) > 0 {
		a.note(facts.SecSysctl, facts.SectionPartial, "not readable: "+strings.Join(bad, ", "))
	}
}

func (a *assembler) persisted(s remote.Section) {
	a.f.Persisted = parse.SysctlFiles(s.Body)
	if strings.Contains(s.Body, "\n!denied ") || strings.HasPrefix(s.Body, "!denied ") {
		a.note(facts.SecPersisted, facts.SectionPartial, deniedLines(s.Body))
	}
}

// changelog is optional: a missing or unreadable changelog is not noted.
func (a *assembler) changelog(s remote.Section) {
	if s.OK() {
		a.f.Kernel.Changelog = parse.KernelChangelog(s.Body)
	}
}

func (a *assembler) netstat(s remote.Section) {
	into(a, facts.SecNetstat, &a.f.Netstat)(parse.Netstat(s.Body))
}

func (a *assembler) listeners(s remote.Section) {
	ls, err := parse.SSListeners(s.Body)
	if err != nil {
		a.note(facts.SecListeners, facts.SectionError, err.Error())
		return
	}
	a.f.Listeners = ls
	if a.f.Listeners == nil {
		a.f.Listeners = []facts.Listener{}
	}
}

func (a *assembler) nics(s remote.Section) {
	if a.usable(facts.SecNICs, s) {
		a.f.NICs = parse.NICs(s.Body)
		return
	}
	if s.Name != "" {
		// ethtool missing: still list the interfaces, without settings.
		for _, n := range parse.NICs(s.Body) {
			n.RingErr, n.FeatErr = "ethtool not installed", "ethtool not installed"
			a.f.NICs = append(a.f.NICs, n)
		}
	}
}

// feasibility is optional: without the section (a host simulated by an
// older fake) the planner plans as before it existed, and nothing is
// noted; a section that came back other than "ok" is noted.
func (a *assembler) feasibility(s remote.Section) {
	switch {
	case s.Name == "":
	case !s.OK():
		a.noteSection(facts.SecFeasible, s, s.Body)
	default:
		a.f.Feasibility = parse.Feasibility(s.Body)
	}
}

// kernelCaps is optional like feasibility: without the section (an older
// script or fake host) nothing is judged on the kernel's modules; a
// section that came back other than "ok" or does not parse is noted and
// leaves Feasibility.Kernel nil.
func (a *assembler) kernelCaps(s remote.Section) {
	switch {
	case s.Name == "":
		return
	case !s.OK():
		a.noteSection(facts.SecKernelCaps, s, s.Body)
		return
	}
	k, err := parse.KernelCaps(s.Body)
	if err != nil {
		a.note(facts.SecKernelCaps, facts.SectionError, err.Error())
		return
	}
	if a.f.Feasibility == nil {
		a.f.Feasibility = &facts.Feasibility{}
	}
	a.f.Feasibility.Kernel = k
}

// host is optional like feasibility: without the section (an older
// script or fake host) nothing is judged on it; what it could not read is
// noted as partial, by name.
func (a *assembler) host(s remote.Section) {
	if !a.present(facts.SecHost, s) {
		return
	}
	h := parse.Host(s.Body)
	info := h.Info
	if len(h.Files) > 0 {
		a.f.Files = h.Files
	}
	for i := range a.f.NICs {
		a.f.NICs[i].MTU = h.MTU[a.f.NICs[i].Name]
	}
	if len(h.Unread) > 0 {
		info.Unread = h.Unread
		var bad []string
		for _, k := range slices.Sorted(maps.Keys(h.Unread)) {
			bad = append(bad, k+" ("+h.Unread[k]+")")
		}
		a.note(facts.SecHost, facts.SectionPartial, "not readable: "+strings.Join(bad, ", "))
	}
	a.f.Host = &info
}

func (a *assembler) evidence(s remote.Section) {
	if strings.Contains(s.Body, "Operation not permitted") || strings.Contains(s.Body, "Permission denied") || strings.Contains(s.Body, "read kernel buffer failed") {
		a.note(facts.SecEvidence, facts.SectionDenied, "dmesg: kernel log not readable by this user (kernel.dmesg_restrict); run with become: sudo to see SYN-flood lines")
	}
	a.f.Evidence.SynFlood = parse.SynFloodLines(s.Body)
}

// kafka reads the broker's section (pid, how it was found, its command
// line) and the kafka-config section (server.properties as numbered
// lines); --override arguments win over the file, as in Kafka.
func (a *assembler) kafka(s remote.Section) {
	switch {
	case s.Name == "":
		a.note(facts.SecKafka, facts.SectionError, "section missing from gather output")
		return
	case s.Absent():
		a.note(facts.SecKafka, facts.SectionAbsent, "no process listening on the Kafka port and no kafka.Kafka command line")
		return
	}
	k := &facts.Kafka{Properties: map[string]string{}}
	a.f.Kafka = k
	kv := keyValues(s.Body, "=")
	k.PID, _ = strconv.Atoi(kv["pid"])
	k.FoundBy = kv["found"]
	if !s.OK() {
		a.noteSection(facts.SecKafka, s, fmt.Sprintf("broker pid %d found but its command line is not readable", k.PID))
		return
	}
	cp, args, overrides := kafkaCmdline(s.Body)
	cmd, _ := parse.ParseKafkaCmdline(append([]string{"java", "-cp", strings.Join(cp, ":")}, args...))
	k.Config = cmd.Config
	if jar, path, ok := parse.KafkaVersionFromClasspath(cp); ok {
		k.Version, k.Distribution, k.Scala, k.Jar = jar.Version, jar.Distribution, jar.Scala, path
	} else {
		a.note(facts.SecKafka, facts.SectionPartial, "no kafka_<scala>-<version>.jar on the broker's classpath: version unknown")
	}
	if c, ok := a.secs[facts.SecKafkaConf]; ok {
		a.kafkaConfig(k, c)
	}
	for pk, pv := range overrides {
		k.Properties[pk] = redact.Value(pk, pv) // --override wins over the file, as in Kafka
		delete(k.PropertyLines, pk)
	}
}

// kafkaCmdline splits the kafka section's command-line lines: classpath
// entries (cp=), the main class and its arguments (main=, arg=) and the
// --override properties (override=key=value).
func kafkaCmdline(body string) (cp, args []string, overrides map[string]string) {
	overrides = map[string]string{}
	for _, line := range strings.Split(body, "\n") {
		key, val, _ := strings.Cut(line, "=")
		switch key {
		case "cp":
			cp = append(cp, val)
		case "main", "arg":
			args = append(args, val)
		case "override":
			if pk, pv, found := strings.Cut(val, "="); found {
				overrides[pk] = pv
			}
		}
	}
	return cp, args, overrides
}

// kafkaConfig reads the kafka-config section into k: the path the script
// read, and each property with its line number, its value as kaudit may
// show it (redact.Value: a continuation can join a password's line to a
// key kaudit reads).
func (a *assembler) kafkaConfig(k *facts.Kafka, c remote.Section) {
	kv := keyValues(c.Body, "=")
	if p := kv["path"]; p != "" {
		k.Config = p
	}
	if !c.OK() {
		a.noteSection(facts.SecKafkaConf, c, fmt.Sprintf("server.properties %s: %s", k.Config, c.State))
		return
	}
	k.PropertyLines = map[string]int{}
	for _, line := range strings.Split(c.Body, "\n") {
		n, text, ok := strings.Cut(line, ":")
		ln, err := strconv.Atoi(n)
		if !ok || err != nil {
			continue
		}
		props, _ := parse.Properties(text)
		for pk, pv := range props {
			k.Properties[pk] = redact.Value(pk, pv)
			k.PropertyLines[pk] = ln
		}
	}
}

// logDirs reads the log-dirs section into Kafka.LogDirs. Absent (no
// broker, no readable configuration) is noted only when a broker was
// found: the kafka sections already say why otherwise.
func (a *assembler) logDirs(s remote.Section) {
	k := a.f.Kafka
	switch {
	case k == nil:
		return
	case s.Name == "":
		a.note(facts.SecLogDirs, facts.SectionError, "section missing from gather output")
		return
	case !s.OK():
		a.noteSection(facts.SecLogDirs, s, logDirsWhy(s))
		return
	}
	into(a, facts.SecLogDirs, &k.LogDirs)(parse.LogDirs(s.Body))
}

func logDirsWhy(s remote.Section) string {
	if s.Absent() {
		return "the broker's log.dirs are not known: its server.properties was not read"
	}
	return s.Body
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

// kafkaMeta reads the kafka-meta section into each log directory's Meta,
// creating the LogDir by path when the log-dirs section did not. A
// directory whose meta.properties is absent or not readable keeps a nil
// Meta, and the section's note names it.
func (a *assembler) kafkaMeta(s remote.Section) {
	k := a.f.Kafka
	switch {
	case k == nil:
		return // no broker: the kafka section says why
	case s.Name == "":
		a.note(facts.SecKafkaMeta, facts.SectionError, "section missing from gather output")
		return
	case s.Absent():
		a.note(facts.SecKafkaMeta, facts.SectionAbsent, "no log directories: the broker's server.properties was not read")
		return
	}
	dirs, err := parse.KafkaMeta(s.Body)
	if err != nil {
		a.note(facts.SecKafkaMeta, facts.SectionError, err.Error())
		return
	}
	var bad []string
	for _, d := range dirs {
		ld := logDir(k, d.Path)
		ld.Meta = d.Meta
		if d.State != "" {
			bad = append(bad, d.Path+"/meta.properties "+string(d.State))
		}
	}
	if len(bad) > 0 {
		a.note(facts.SecKafkaMeta, facts.SectionPartial, strings.Join(bad, ", "))
	}
}

// logDir is k's log directory at path, added when it is not there yet.
func logDir(k *facts.Kafka, path string) *facts.LogDir {
	for i := range k.LogDirs {
		if k.LogDirs[i].Path == path {
			return &k.LogDirs[i]
		}
	}
	k.LogDirs = append(k.LogDirs, facts.LogDir{Path: path, Segments: -1})
	return &k.LogDirs[len(k.LogDirs)-1]
}
