package inventory

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/internal/assume"
	"github.com/kaudit/kaudit/internal/safe"
)

// Values in this file end up on an ssh command line or inside the gather
// script run by a remote shell. They are checked against allow-lists and
// rejected when they do not fit: kaudit never tries to escape them.

var (
	hostRE  = regexp.MustCompile(`^[A-Za-z0-9._:%\[\]-]+$`)
	userRE  = regexp.MustCompile(`^[a-z_][a-z0-9_.-]*$`)
	groupRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

const maxHostLen = 255

// problem is a rejected value: what is wrong and what to do.
type problem struct{ msg, hint string }

func bad(hint, format string, args ...any) *problem {
	return &problem{msg: fmt.Sprintf(format, args...), hint: hint}
}

// templateHint is added when a value looks like an Ansible/Jinja template,
// which kaudit does not evaluate.
func templateHint(s, hint string) string {
	if strings.Contains(s, "{{") || strings.Contains(s, "{%") {
		return "kaudit does not evaluate Jinja templates; write the value out"
	}
	return hint
}

// firstBad returns the first character of s outside the allowed set, quoted.
func firstBad(s string, ok func(r rune) bool) string {
	for _, r := range s {
		if !ok(r) {
			return strconv.QuoteRune(r)
		}
	}
	return ""
}

func hostChar(r rune) bool {
	return r < 128 && hostRE.MatchString(string(r))
}

// checkHost validates a host name or address (kind is "host name" or
// "address"). IPv6 literals, with or without brackets and zone, are accepted.
func checkHost(kind, s string) *problem {
	const hint = "use a DNS name or an IP address: letters, digits and . - _ : % [ ] only"
	switch {
	case s == "":
		return bad(hint, "empty %s", kind)
	case strings.HasPrefix(s, "-"):
		return bad("a leading '-' would be read as an ssh option", "%s %q must not start with '-'", kind, s)
	case len(s) > maxHostLen:
		return bad(hint, "%s is longer than %d characters", kind, maxHostLen)
	case !hostRE.MatchString(s):
		return bad(templateHint(s, hint), "%s %q contains %s, which is not allowed", kind, s, firstBad(s, hostChar))
	case strings.ContainsAny(s, "[]") && !(strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") && isIPv6(s[1:len(s)-1])):
		return bad("brackets are only allowed around an IPv6 address, e.g. [2001:db8::1]", "%s %q has misplaced brackets", kind, s)
	}
	return nil
}

// checkUser validates a login name (POSIX portable, lower case, at most 32).
func checkUser(s string) *problem {
	const hint = "user names start with a lower-case letter or '_' and contain only a-z 0-9 _ . -"
	switch {
	case s == "":
		return bad("remove the key to use the default user", "empty user")
	case strings.HasPrefix(s, "-"):
		return bad("a leading '-' would be read as an ssh option", "user %q must not start with '-'", s)
	case len(s) > 32:
		return bad(hint, "user %q is longer than 32 characters", s)
	case !userRE.MatchString(s):
		return bad(templateHint(s, hint), "invalid user %q", s)
	}
	return nil
}

// checkInterface validates a network interface name (Linux IFNAMSIZ-1).
func checkInterface(s string) *problem {
	const hint = "interface names have 1-15 characters: letters, digits and _ . : @ -"
	switch {
	case strings.HasPrefix(s, "-"):
		return bad("a leading '-' would be read as an option", "interface %q must not start with '-'", s)
	case !safe.IfaceChars(s):
		return bad(templateHint(s, hint), "invalid interface name %q", s)
	}
	return nil
}

// checkRemotePath validates a path used on the remote host (Kafka config
// and home): absolute, and only characters that mean nothing to a shell.
func checkRemotePath(s string) *problem {
	const hint = "use an absolute path made of letters, digits and / . _ - + @ = , : % ~"
	switch {
	case s == "":
		return bad("remove the key to let kaudit discover it", "empty path")
	case !strings.HasPrefix(s, "/"):
		return bad(hint, "path %q is not absolute", s)
	case len(s) > 4096:
		return bad(hint, "path is longer than 4096 characters")
	}
	if c := firstBad(s, safe.PathRune); c != "" {
		return bad(templateHint(s, hint), "path %q contains %s, which is not allowed", s, c)
	}
	return nil
}

// checkLocalPath validates a path read on the machine running kaudit
// (known_hosts, identity files): no control characters.
func checkLocalPath(s string) *problem {
	if s == "" {
		return bad("remove the entry", "empty path")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return bad("remove the control character", "path %q contains %s, which is not allowed", s, strconv.QuoteRune(r))
		}
	}
	return nil
}

// checkGroup validates a group name.
func checkGroup(s string) *problem {
	switch {
	case strings.HasPrefix(s, "-") || strings.HasPrefix(s, "!"):
		return bad("group names start with a letter, digit, '_' or '.'", "group name %q must not start with %q", s, s[:1])
	case !groupRE.MatchString(s):
		return bad("group names contain only letters, digits and _ . -", "invalid group name %q", s)
	}
	return nil
}

// checkPort validates a TCP port.
func checkPort(n int, hint string) *problem {
	if n < 1 || n > 65535 {
		return bad(hint, "port %d out of range 1-65535", n)
	}
	return nil
}

// splitHostPort splits "host", "host:port", "[v6]", "[v6]:port" or a bare
// IPv6 literal. port is 0 when absent. Brackets are removed from the host.
func splitHostPort(s string) (host string, port int, portStr string) {
	if strings.HasPrefix(s, "[") {
		if i := strings.Index(s, "]"); i > 0 {
			host, rest := s[1:i], s[i+1:]
			if strings.HasPrefix(rest, ":") {
				return host, atoiOrNeg(rest[1:]), rest[1:]
			}
			if rest == "" {
				return host, 0, ""
			}
		}
		return s, 0, ""
	}
	if strings.Count(s, ":") == 1 {
		i := strings.Index(s, ":")
		return s[:i], atoiOrNeg(s[i+1:]), s[i+1:]
	}
	return s, 0, "" // a name, or a bare IPv6 literal
}

func atoiOrNeg(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || s == "" || s[0] == '+' || s[0] == '-' {
		return -1
	}
	return n
}

// checkProxyJump validates "[user@]host[:port]" (a single jump host).
func checkProxyJump(s string) *problem {
	if s == "" {
		return bad("remove the key when no jump host is needed", "empty proxy_jump")
	}
	if strings.HasPrefix(s, "-") {
		return bad("a leading '-' would be read as an ssh option", "proxy_jump %q must not start with '-'", s)
	}
	for _, hop := range strings.Split(s, ",") {
		if pr := checkHop(s, hop); pr != nil {
			return pr
		}
	}
	return nil
}

// checkHop validates one [user@]host[:port] of a proxy_jump list (whole s,
// for the message).
func checkHop(s, hop string) *problem {
	const hint = `use [user@]host[:port], e.g. "ops@bastion.example.com:2222"; several hops are separated by commas`
	if hop == "" {
		return bad(hint, "proxy_jump %q has an empty hop", s)
	}
	if strings.HasPrefix(hop, "-") {
		return bad("a leading '-' would be read as an ssh option", "proxy_jump %q: hop %q must not start with '-'", s, hop)
	}
	rest := hop
	if i := strings.Index(hop, "@"); i >= 0 {
		if pr := checkUser(hop[:i]); pr != nil {
			return bad(hint, "proxy_jump %q: %s", s, pr.msg)
		}
		rest = hop[i+1:]
	}
	host, port, portStr := splitHostPort(rest)
	if strings.HasPrefix(rest, "[") && !isIPv6(host) {
		return bad(hint, "proxy_jump %q: brackets are only allowed around an IPv6 address", s)
	}
	if pr := checkHost("host", host); pr != nil {
		return bad(templateHint(s, hint), "proxy_jump %q: %s", s, pr.msg)
	}
	if portStr != "" || port != 0 {
		if port < 1 || port > 65535 {
			return bad(hint, "proxy_jump %q: port %q out of range 1-65535", s, portStr)
		}
	}
	return nil
}

// maxAssumeLen bounds assume_kernel and assume_kafka.
const maxAssumeLen = 128

func kernelChar(r rune) bool {
	return r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-+~", r))
}

// checkKernelRelease validates assume_kernel: a kernel release as uname -r
// prints it (what the what-if accepts: it starts with a digit).
func checkKernelRelease(s string) *problem {
	const hint = "use a kernel release as uname -r prints it, e.g. 5.15.0-91-generic: letters, digits and . _ - + ~ only"
	switch {
	case len(s) > maxAssumeLen:
		return bad(hint, "kernel release is longer than %d characters", maxAssumeLen)
	case firstBad(s, kernelChar) != "":
		return bad(templateHint(s, hint), "kernel release %q contains %s, which is not allowed", s, firstBad(s, kernelChar))
	case s[0] < '0' || s[0] > '9':
		return bad(hint, "kernel release %q does not start with a digit", s)
	}
	return nil
}

// rackRE is a rack name kaudit prints in a plan: Kafka's broker.rack is
// free text, an inventory's is held to a plain label.
var rackRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`)

// checkRack validates rack: a label, as broker.rack usually is.
func checkRack(s string) *problem {
	if !rackRE.MatchString(s) {
		return bad("use the broker's broker.rack, e.g. eu-west-1a: letters, digits and _ . : - only, at most 64", "rack %q is not a plain label", s)
	}
	return nil
}

// checkAssumeKafka validates assume_kafka, in the syntax of --assume-kafka:
// comma-separated versions, each optionally prefixed with its distribution
// ("3.6.1", "apache:3.6.1", "confluent:7.6.0"), at most one per
// distribution (internal/assume, shared with --assume-kafka).
func checkAssumeKafka(s string) *problem {
	const hint = "use a version such as 3.6.1, or confluent:7.6.0 for Confluent Platform (both: 3.6.1,confluent:7.6.0)"
	if len(s) > maxAssumeLen {
		return bad(hint, "Kafka version is longer than %d characters", maxAssumeLen)
	}
	_, perr := assume.Kafka(s)
	switch {
	case perr == nil:
		return nil
	case perr.Kind == assume.BadDistribution:
		return bad("prefix the version with apache: or confluent:, or with nothing for Apache Kafka",
			"unknown Kafka distribution %q in %q", perr.Dist, s)
	case perr.Kind == assume.Duplicate:
		return bad("give one version per distribution", "%q gives two versions for %s", s, perr.Dist)
	default:
		return bad(templateHint(s, hint), "invalid Kafka version %q", perr.Item)
	}
}
