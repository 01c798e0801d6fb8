package inventory

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kaudit/kaudit/internal/located"
	"gopkg.in/yaml.v3"
)

// Defaults applied when neither the inventory nor its groups set a value.
const (
	DefaultPort          = 22
	DefaultKafkaPort     = 9092
	DefaultHostKeyPolicy = "strict"
	DefaultConnection    = "ssh"
	DefaultKnownHosts    = "~/.ssh/known_hosts"
)

// Host key policies and connection kinds.
const (
	PolicyStrict    = "strict"
	PolicyAcceptNew = "accept-new"
	PolicyInsecure  = "insecure"

	ConnSSH   = "ssh"
	ConnLocal = "local"
)

// opt is a setting that may or may not have been given.
type opt[T any] struct {
	v  T
	ok bool
}

func (o *opt[T]) set(v T) { o.v, o.ok = v, true }

// or is the value when given, else def.
func (o opt[T]) or(def T) T {
	if o.ok {
		return o.v
	}
	return def
}

func over[T any](dst *opt[T], src opt[T]) {
	if src.ok {
		*dst = src
	}
}

// settings is one layer of host settings: defaults, a group's vars or a
// host's own entry. Layers are overlaid in precedence order.
type settings struct {
	address, user, proxyJump, become, hostKeyPolicy, connection opt[string]
	kafkaConfig, kafkaHome                                      opt[string]
	assumeKernel, assumeKafka, rack                             opt[string]
	port, kafkaPort                                             opt[int]
	identityFiles, knownHosts, interfaces                       opt[[]string]
	useAgent, sshConfig                                         opt[bool]
	connectTimeout, timeout                                     opt[time.Duration]
	profile                                                     map[string]any
	addressAt                                                   string // FILE:LINE where address was set
}

func (s *settings) overlay(o *settings) {
	if o == nil {
		return
	}
	if o.address.ok {
		s.address, s.addressAt = o.address, o.addressAt
	}
	over(&s.user, o.user)
	over(&s.proxyJump, o.proxyJump)
	over(&s.become, o.become)
	over(&s.hostKeyPolicy, o.hostKeyPolicy)
	over(&s.connection, o.connection)
	over(&s.kafkaConfig, o.kafkaConfig)
	over(&s.kafkaHome, o.kafkaHome)
	over(&s.assumeKernel, o.assumeKernel)
	over(&s.assumeKafka, o.assumeKafka)
	over(&s.rack, o.rack)
	over(&s.port, o.port)
	over(&s.kafkaPort, o.kafkaPort)
	over(&s.identityFiles, o.identityFiles)
	over(&s.knownHosts, o.knownHosts)
	over(&s.interfaces, o.interfaces)
	over(&s.useAgent, o.useAgent)
	over(&s.sshConfig, o.sshConfig)
	over(&s.connectTimeout, o.connectTimeout)
	over(&s.timeout, o.timeout)
	s.profile = mergeProfile(s.profile, o.profile)
}

// mergeProfile deep-merges src over dst (nested mappings merge, anything
// else replaces) and returns dst, never modifying src.
func mergeProfile(dst, src map[string]any) map[string]any {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = map[string]any{}
	}
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			dm, _ := dst[k].(map[string]any)
			dst[k] = mergeProfile(cloneMap(dm), sm)
			continue
		}
		dst[k] = v
	}
	return dst
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sm, ok := v.(map[string]any); ok {
			v = cloneMap(sm)
		}
		out[k] = v
	}
	return out
}

// host builds the final Host from the merged settings, filling defaults.
func (p *parser) host(name, source string, s *settings, groups []string) Host {
	h := Host{
		Name:           name,
		Address:        strings.TrimSuffix(strings.TrimPrefix(s.address.or(name), "["), "]"),
		Port:           s.port.or(DefaultPort),
		User:           s.user.v,
		IdentityFiles:  s.identityFiles.v,
		UseAgent:       s.useAgent.or(true),
		KnownHosts:     knownHostsOr(s.knownHosts),
		HostKeyPolicy:  s.hostKeyPolicy.or(DefaultHostKeyPolicy),
		ProxyJump:      s.proxyJump.v,
		Become:         s.become.v,
		ConnectTimeout: s.connectTimeout.v,
		Timeout:        s.timeout.v,
		Connection:     s.connection.or(DefaultConnection),
		KafkaPort:      s.kafkaPort.or(DefaultKafkaPort),
		KafkaConfig:    s.kafkaConfig.v,
		KafkaHome:      s.kafkaHome.v,
		Interfaces:     s.interfaces.v,
		Groups:         groups,
		Profile:        cloneMap(s.profile),
		AssumeKernel:   s.assumeKernel.v,
		AssumeKafka:    s.assumeKafka.v,
		Rack:           s.rack.v,
		Source:         source,
		SSHConfig:      !s.sshConfig.ok || s.sshConfig.v,
		Given:          s.given(),
	}
	if h.Profile == nil {
		h.Profile = map[string]any{}
	}
	if h.Groups == nil {
		h.Groups = []string{}
	}
	sort.Strings(h.Groups)
	return h
}

// given records which connection settings the inventory set explicitly.
func (s *settings) given() Given {
	return Given{Address: s.address.ok, Port: s.port.ok, User: s.user.ok, IdentityFiles: s.identityFiles.ok,
		UseAgent: s.useAgent.ok, KnownHosts: s.knownHosts.ok, HostKeyPolicy: s.hostKeyPolicy.ok,
		ProxyJump: s.proxyJump.ok, ConnectTimeout: s.connectTimeout.ok}
}

// knownHostsOr is the known_hosts setting, else ~/.ssh/known_hosts.
func knownHostsOr(o opt[[]string]) []string {
	if o.ok {
		return o.v
	}
	if home, err := os.UserHomeDir(); err == nil {
		return []string{filepath.Join(home, ".ssh", "known_hosts")}
	}
	return []string{DefaultKnownHosts} // unexpanded: the caller reports it when it opens it
}

// ---- typed decoders: each reports a precise error and returns ok=false ----

// str accepts a non-null scalar that is not a boolean.
func (p *parser) str(n *yaml.Node, field string) (string, bool) {
	n = located.Resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" || n.ShortTag() == "!!bool" {
		p.wrongType(n, field, "a string", "")
		return "", false
	}
	return n.Value, true
}

func (p *parser) wrongType(n *yaml.Node, field, want, hint string) {
	p.c.add(line(n), field, hint, "expected %s, got %s", want, located.DescribeNode(n))
}

func line(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

// integer accepts an integer; in Ansible mode also a string of digits.
func (p *parser) integer(n *yaml.Node, field string) (int, bool) {
	n = located.Resolve(n)
	if n != nil && n.Kind == yaml.ScalarNode {
		if n.ShortTag() == "!!int" {
			var v int
			if err := n.Decode(&v); err == nil {
				return v, true
			}
		}
		if _, err := strconv.Atoi(strings.TrimSpace(n.Value)); err == nil && n.ShortTag() == "!!str" {
			if p.lenient {
				v, _ := strconv.Atoi(strings.TrimSpace(n.Value))
				return v, true
			}
			p.wrongType(n, field, "an integer", "write the number without quotes")
			return 0, false
		}
	}
	p.wrongType(n, field, "an integer", "")
	return 0, false
}

// boolean accepts true/false; in Ansible mode also yes/no, on/off, 1/0.
func (p *parser) boolean(n *yaml.Node, field string) (bool, bool) {
	n = located.Resolve(n)
	if n != nil && n.Kind == yaml.ScalarNode {
		if n.ShortTag() == "!!bool" {
			var v bool
			if err := n.Decode(&v); err == nil {
				return v, true
			}
		}
		if p.lenient {
			switch strings.ToLower(n.Value) {
			case "true", "yes", "on", "1", "y":
				return true, true
			case "false", "no", "off", "0", "n":
				return false, true
			}
		}
	}
	p.wrongType(n, field, "true or false", "write true or false (no quotes)")
	return false, false
}

// strList accepts a list of strings, or a single string as a one-item list.
func (p *parser) strList(n *yaml.Node, field string) ([]string, bool) {
	n = located.Resolve(n)
	if n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		return []string{n.Value}, true
	}
	if n == nil || n.Kind != yaml.SequenceNode {
		p.wrongType(n, field, "a list of strings", "write a list such as [a, b], or one string")
		return nil, false
	}
	out := []string{}
	ok := true
	for i, e := range n.Content {
		s, good := p.str(e, index(field, i))
		ok = ok && good
		out = append(out, s)
	}
	return out, ok
}

// duration accepts a Go duration string ("30s", "1m30s") or whole seconds.
func (p *parser) duration(n *yaml.Node, field string) (time.Duration, bool) {
	n = located.Resolve(n)
	const hint = `use a duration such as "5s", "30s" or "2m" (a bare number means seconds)`
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" || n.ShortTag() == "!!bool" {
		p.wrongType(n, field, "a duration", hint)
		return 0, false
	}
	var d time.Duration
	if n.ShortTag() == "!!int" || (p.lenient && atoiOrNeg(n.Value) >= 0) {
		secs, err := strconv.ParseInt(n.Value, 10, 32)
		if err != nil {
			p.c.add(n.Line, field, hint, "invalid duration %q", n.Value)
			return 0, false
		}
		d = time.Duration(secs) * time.Second
	} else {
		var err error
		if d, err = time.ParseDuration(n.Value); err != nil {
			p.c.add(n.Line, field, hint, "invalid duration %q", n.Value)
			return 0, false
		}
	}
	if d < 0 {
		p.c.add(n.Line, field, "omit the key or use 0 for kaudit's default", "negative duration %q", n.Value)
		return 0, false
	}
	return d, true
}

// report records a validation problem at n.
func (p *parser) report(n *yaml.Node, field string, pr *problem) bool {
	if pr == nil {
		return true
	}
	p.c.add(line(n), field, pr.hint, "%s", pr.msg)
	return false
}

// ---- the settings themselves; shared by both formats ----

func (p *parser) setAddress(s *settings, n *yaml.Node, field string) {
	if v, ok := p.str(n, field); ok && p.report(n, field, checkHost("address", v)) {
		s.address.set(v)
		s.addressAt = p.source(line(n))
	}
}

func (p *parser) setPort(dst *opt[int], n *yaml.Node, field, hint string) {
	if v, ok := p.integer(n, field); ok && p.report(n, field, checkPort(v, hint)) {
		dst.set(v)
	}
}

func (p *parser) setSSHPort(s *settings, n *yaml.Node, field string) {
	p.setPort(&s.port, n, field, "SSH listens on 22 unless configured otherwise")
}

func (p *parser) setUser(s *settings, n *yaml.Node, field string) {
	if v, ok := p.str(n, field); ok && p.report(n, field, checkUser(v)) {
		s.user.set(v)
	}
}

func (p *parser) setIdentityFiles(s *settings, n *yaml.Node, field string) {
	list, ok := p.strList(n, field)
	if !ok {
		return
	}
	elems := []*yaml.Node{located.Resolve(n)}
	if elems[0].Kind == yaml.SequenceNode {
		elems = elems[0].Content
	}
	out := make([]string, 0, len(list))
	for i, f := range list {
		el, ef := elems[i], field
		if located.Resolve(n).Kind == yaml.SequenceNode {
			ef = index(field, i)
		}
		path, good := p.localPath(el, ef, f)
		if !good {
			ok = false
			continue
		}
		fh, err := os.Open(path)
		if err != nil {
			p.c.add(line(el), ef, "fix the path, or remove it to use ssh-agent and the OpenSSH default keys",
				"cannot read identity file %q: %v", path, located.PathCause(err))
			ok = false
			continue
		}
		fh.Close()
		out = append(out, path)
	}
	if ok {
		s.identityFiles.set(out)
	}
}

func (p *parser) setKnownHosts(s *settings, n *yaml.Node, field string) {
	list, ok := p.strList(n, field)
	if !ok {
		return
	}
	out := make([]string, 0, len(list))
	for i, f := range list {
		el, ef := located.Resolve(n), field
		if el.Kind == yaml.SequenceNode {
			el, ef = el.Content[i], index(field, i)
		}
		path, good := p.localPath(el, ef, f)
		if !good {
			ok = false
			continue
		}
		out = append(out, path)
	}
	if ok {
		s.knownHosts.set(out)
	}
}

// localPath validates and expands a path on the machine running kaudit: "~/"
// is the user's home, a relative path is relative to the inventory file.
func (p *parser) localPath(n *yaml.Node, field, f string) (string, bool) {
	if !p.report(n, field, checkLocalPath(f)) {
		return "", false
	}
	switch {
	case f == "~" || strings.HasPrefix(f, "~/"):
		home, err := os.UserHomeDir()
		if err != nil {
			p.c.add(line(n), field, "set $HOME or use an absolute path", "cannot expand %q: %v", f, err)
			return "", false
		}
		return filepath.Join(home, f[1:]), true
	case strings.HasPrefix(f, "~"):
		p.c.add(line(n), field, "write the path out, e.g. /home/NAME/.ssh/id_ed25519", "cannot expand %q: only ~/ (your own home) is supported", f)
		return "", false
	case filepath.IsAbs(f):
		return filepath.Clean(f), true
	}
	return filepath.Join(p.dir, f), true
}

func (p *parser) setUseAgent(s *settings, n *yaml.Node, field string) {
	if v, ok := p.boolean(n, field); ok {
		s.useAgent.set(v)
	}
}

func (p *parser) setSSHConfig(s *settings, n *yaml.Node, field string) {
	if v, ok := p.boolean(n, field); ok {
		s.sshConfig.set(v)
	}
}

func (p *parser) setHostKeyPolicy(s *settings, n *yaml.Node, field string) {
	v, ok := p.str(n, field)
	if !ok {
		return
	}
	switch v {
	case PolicyStrict, PolicyAcceptNew, PolicyInsecure:
		s.hostKeyPolicy.set(v)
	default:
		p.c.add(line(n), field, "use strict, accept-new or insecure", "unknown host key policy %q", v)
	}
}

func (p *parser) setProxyJump(s *settings, n *yaml.Node, field string) {
	if v, ok := p.str(n, field); ok && p.report(n, field, checkProxyJump(v)) {
		s.proxyJump.set(v)
	}
}

func (p *parser) setBecome(s *settings, n *yaml.Node, field string) {
	rn := located.Resolve(n)
	if rn != nil && rn.ShortTag() == "!!bool" {
		p.c.add(line(n), field, `write become: sudo (or "" for none)`, "expected \"sudo\" or \"\", got %s", located.DescribeNode(n))
		return
	}
	v, ok := p.str(n, field)
	if !ok {
		return
	}
	if v != "" && v != "sudo" {
		p.c.add(line(n), field, `only "sudo" is supported; use "" to run as the login user`, "unsupported become method %q", v)
		return
	}
	s.become.set(v)
}

func (p *parser) setDuration(dst *opt[time.Duration], n *yaml.Node, field string) {
	if v, ok := p.duration(n, field); ok {
		dst.set(v)
	}
}

func (p *parser) setConnection(s *settings, n *yaml.Node, field string) {
	v, ok := p.str(n, field)
	if !ok {
		return
	}
	switch v {
	case ConnSSH, ConnLocal:
		s.connection.set(v)
	default:
		p.c.add(line(n), field, "use ssh or local", "unknown connection %q", v)
	}
}

func (p *parser) setRemotePath(dst *opt[string], n *yaml.Node, field string) {
	if v, ok := p.str(n, field); ok && p.report(n, field, checkRemotePath(v)) {
		dst.set(v)
	}
}

// setAssumeKernel reads the kernel release planned for the what-if. An
// empty string is accepted: it cancels a value inherited from defaults or
// a group (no kernel upgrade planned for these hosts).
func (p *parser) setAssumeKernel(s *settings, n *yaml.Node, field string) {
	if v, ok := p.str(n, field); ok && (v == "" || p.report(n, field, checkKernelRelease(v))) {
		s.assumeKernel.set(v)
	}
}

// setRack reads the broker's rack (fix --apply --batch-by rack when the
// cluster's metadata does not say it); "" cancels an inherited value.
func (p *parser) setRack(s *settings, n *yaml.Node, field string) {
	if v, ok := p.str(n, field); ok && (v == "" || p.report(n, field, checkRack(v))) {
		s.rack.set(v)
	}
}

// setAssumeKafka reads the Kafka version(s) planned for the what-if, in the
// syntax of --assume-kafka; "" cancels an inherited value.
func (p *parser) setAssumeKafka(s *settings, n *yaml.Node, field string) {
	if v, ok := p.str(n, field); ok && (v == "" || p.report(n, field, checkAssumeKafka(v))) {
		s.assumeKafka.set(v)
	}
}

func (p *parser) setInterfaces(s *settings, n *yaml.Node, field string) {
	rn := located.Resolve(n)
	if rn != nil && rn.Kind == yaml.ScalarNode && rn.Value == "auto" {
		s.interfaces.set(nil)
		return
	}
	list, ok := p.strList(n, field)
	if !ok {
		return
	}
	for i, name := range list {
		el, ef := rn, field
		if rn.Kind == yaml.SequenceNode {
			el, ef = rn.Content[i], index(field, i)
		}
		if name == "auto" {
			p.c.add(line(el), ef, `write interfaces: auto on its own, not inside a list`, `"auto" cannot be mixed with interface names`)
			ok = false
			continue
		}
		ok = p.report(el, ef, checkInterface(name)) && ok
	}
	if ok {
		s.interfaces.set(list)
	}
}

func (p *parser) setProfile(s *settings, n *yaml.Node, field string) {
	rn := located.Resolve(n)
	if isNull(rn) {
		return
	}
	if rn.Kind != yaml.MappingNode {
		p.wrongType(n, field, "a mapping of threshold overrides", "e.g. profile: {somaxconn: 8192}")
		return
	}
	if m, ok := p.profileValue(rn, field, 0).(map[string]any); ok {
		s.profile = mergeProfile(s.profile, m)
	}
}

// profileValue converts a profile node to plain values: map[string]any,
// []any, string, int, float64, bool or nil. Keys must be strings.
func (p *parser) profileValue(n *yaml.Node, field string, depth int) any {
	n = located.Resolve(n)
	if n == nil || depth > 20 {
		p.c.add(line(n), field, "keep profile values flat: numbers, strings, lists or small mappings", "profile nested too deeply")
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for _, e := range p.entries(n, field) {
			if e.kNode.ShortTag() != "!!str" {
				p.c.add(e.kNode.Line, field, "profile keys are threshold names such as somaxconn", "profile key must be a name, got %s", located.DescribeNode(e.kNode))
				continue
			}
			m[e.key] = p.profileValue(e.value, join(field, e.key), depth+1)
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			l = append(l, p.profileValue(e, index(field, i), depth+1))
		}
		return l
	}
	var v any
	if err := n.Decode(&v); err != nil {
		p.c.add(n.Line, field, "", "invalid value %s", located.DescribeNode(n))
		return nil
	}
	return v
}
