package gather

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/internal/safe"
)

//go:embed gather.sh
var scriptBody string

// The awk programs the script runs: SOCKETS_AWK on its one ss run,
// FEAS_AWK on its one ls of the feasibility section, KCONF_AWK on
// server.properties.
var (
	//go:embed kafkaconf.awk
	kafkaConfAwk string
	//go:embed sockets.awk
	socketsAwk string
	//go:embed feasibility.awk
	feasibilityAwk string
)

// DefaultConnLimit bounds the connections listed per host (ss -tin).
const DefaultConnLimit = 4096

// Params are the per-host inputs of the script.
type Params struct {
	KafkaPort   int
	KafkaConfig string   // absolute path override, or "" to discover
	Interfaces  []string // empty: the default-route interfaces
	SysctlKeys  []string // dotted keys to read from /proc/sys
	// Files are the /proc and /sys files the catalog names (the host
	// section reads each whole: facts.Facts.Files).
	Files []string
	// PropertyKeys are the server.properties keys the catalog's checks
	// name (rules.PropertyKeys), read beside KafkaKeys.
	PropertyKeys []string
	Marker       string // section marker; NewMarker() when empty
	// Client selects the client profile: kernel, sysctls and the
	// connections to ClientPorts (the brokers' Kafka ports) only.
	Client      bool
	ClientPorts []int
	ConnLimit   int // connections listed at most; DefaultConnLimit when 0
	// RDNSSelf and RDNSPeers are the host's own address and its peers'
	// (IPs or DNS names), resolved back on the host when the broker has a
	// SASL listener (the rdns section): at most MaxRDNSPeers peers.
	RDNSSelf  string
	RDNSPeers []string
}

var reSysctl = regexp.MustCompile(`^[a-z0-9_]+(\.[a-z0-9_-]+)+$`)

// NewMarker returns a random section marker for Params.Marker.
func NewMarker() string { return remote.NewMarker(remote.SectionPrefix) }

// Script renders the gather script for one host. Every parameter is
// validated here, whatever the inventory already checked: this is the last
// line before a remote shell.
func Script(p Params) ([]byte, error) {
	if p.Marker == "" {
		p.Marker = NewMarker()
	}
	if !remote.ValidMarker(p.Marker) {
		return nil, fmt.Errorf("gather: bad marker %q", p.Marker)
	}
	if p.KafkaPort < 1 || p.KafkaPort > 65535 {
		return nil, fmt.Errorf("gather: kafka port %d out of range 1-65535", p.KafkaPort)
	}
	if p.KafkaConfig != "" && !safe.RemotePath(p.KafkaConfig) {
		return nil, fmt.Errorf("gather: kafka config path %q: only absolute paths of letters, digits and %s are allowed", p.KafkaConfig, safe.PathExtra)
	}
	for _, i := range p.Interfaces {
		if !safe.Iface(i) {
			return nil, fmt.Errorf("gather: bad interface name %q", i)
		}
	}
	for _, k := range p.SysctlKeys {
		if !reSysctl.MatchString(k) {
			return nil, fmt.Errorf("gather: bad sysctl key %q", k)
		}
	}
	for _, f := range p.Files {
		if !safe.PseudoFile(f) {
			return nil, fmt.Errorf("gather: file %q: only files under /proc/ or /sys/ of letters, digits and %s are read", f, safe.PathExtra)
		}
	}
	if err := checkRDNS(p); err != nil {
		return nil, err
	}
	kkeys, err := kafkaKeysPattern(p.PropertyKeys)
	if err != nil {
		return nil, err
	}
	conns, err := connParams(p)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.Grow(len(scriptBody) + len(conns) + len(feasibilityAwk) + len(kafkaConfAwk) + 512)
	b.WriteString(conns)
	fmt.Fprintf(&b, "RDNS_SELF=%s\nRDNS_PEERS=%s\n", remote.Quote(p.RDNSSelf), remote.Quote(strings.Join(p.RDNSPeers, " ")))
	fmt.Fprintf(&b, "M=%s\nKAFKA_PORT=%d\nKAFKA_CONFIG=%s\nKKEYS=%s\nIFACES=%s\nSYSCTLS=%s\nFILES=%s\nFEAS_AWK=%s\nKCONF_AWK=%s\n",
		remote.Quote(p.Marker), p.KafkaPort, remote.Quote(p.KafkaConfig), remote.Quote(kkeys),
		remote.Quote(strings.Join(p.Interfaces, " ")), remote.Quote(strings.Join(p.SysctlKeys, " ")),
		remote.Quote(strings.Join(p.Files, " ")), remote.Quote(feasibilityAwk), remote.Quote(kafkaConfAwk))
	b.WriteString(scriptBody)
	return []byte(b.String()), nil
}

// KafkaKeys are the server.properties keys the gather reads off a host
// (the script's KKEYS) for kaudit's own rules, beside those the catalog's
// checks name (Params.PropertyKeys): nothing else leaves it, because the
// file can hold secrets.
var KafkaKeys = []string{
	"socket.listen.backlog.size",
	"socket.receive.buffer.bytes",
	"socket.send.buffer.bytes",
	"listeners",
	"log.dirs",
	"log.dir",
	"num.network.threads",
	"num.io.threads",
	"broker.rack",
	"listener.security.protocol.map",
}

var rePropertyKey = regexp.MustCompile(`^[a-z0-9]+(\.[a-z0-9]+)+$`)

// kafkaKeysPattern is the script's KKEYS: KafkaKeys and then the extra
// keys, as one awk regular expression ([.] rather than \. because awk -v
// would read the backslash).
func kafkaKeysPattern(extra []string) (string, error) {
	keys := slices.Clone(KafkaKeys)
	for _, k := range extra {
		if !rePropertyKey.MatchString(k) || len(k) > 128 {
			return "", fmt.Errorf("gather: bad server.properties key %q", k)
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for i, k := range keys {
		keys[i] = strings.ReplaceAll(k, ".", "[.]")
	}
	return strings.Join(keys, "|"), nil
}
