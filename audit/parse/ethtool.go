package parse

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// EthtoolRing parses `ethtool -g IF`: the RX and TX lines of the
// "Pre-set maximums:" and "Current hardware settings:" sections, from both
// the ioctl-era (ethtool 3.x/4.x) and the netlink-era (5.x/6.x) output.
// Other lines (RX Mini, RX Jumbo, RX Buf Len, CQE Size, TX Push, TCP data
// split, …) are ignored; "n/a" becomes -1.
//
// When the host says the ring cannot be read ("Cannot get device ring
// settings: Operation not supported", "netlink error: Operation not
// supported", "No such device", a usage error) the result is nil and a
// *HostError carrying the host's own words.
func EthtoolRing(text string) (*facts.Ring, error) {
	if herr := ethtoolHostError(text, "Cannot get device ring settings"); herr != nil {
		return nil, herr
	}
	const (
		none = iota
		max
		cur
	)
	section := none
	seenMax, seenCur := false, false
	vals := map[string]int{}
	for _, l := range nonBlankLines(text) {
		t := strings.TrimSpace(l.text)
		switch {
		case strings.HasPrefix(t, "Ring parameters for "):
			continue
		case t == "Pre-set maximums:":
			section, seenMax = max, true
			continue
		case t == "Current hardware settings:":
			section, seenCur = cur, true
			continue
		}
		key, val, ok := strings.Cut(t, ":")
		if !ok {
			return nil, fmt.Errorf("ethtool -g: line %d: expected \"Name: value\", got %q", l.n, clip(t))
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if key != "RX" && key != "TX" {
			continue
		}
		if section == none {
			return nil, fmt.Errorf("ethtool -g: line %d: %s before any \"Pre-set maximums:\" section", l.n, key)
		}
		n, err := ringValue(val)
		if err != nil {
			return nil, fmt.Errorf("ethtool -g: line %d: %s: %w", l.n, key, err)
		}
		prefix := "max "
		if section == cur {
			prefix = "cur "
		}
		vals[prefix+key] = n
	}
	if !seenMax || !seenCur {
		return nil, fmt.Errorf("ethtool -g: expected \"Pre-set maximums:\" and \"Current hardware settings:\" sections, got %q", clip(firstLine(text)))
	}
	for _, k := range []string{"max RX", "max TX", "cur RX", "cur TX"} {
		if _, ok := vals[k]; !ok {
			sec := "Pre-set maximums"
			if strings.HasPrefix(k, "cur") {
				sec = "Current hardware settings"
			}
			return nil, fmt.Errorf("ethtool -g: no %s: line in %q", k[4:], sec)
		}
	}
	return &facts.Ring{RXMax: vals["max RX"], TXMax: vals["max TX"], RX: vals["cur RX"], TX: vals["cur TX"]}, nil
}

func ringValue(s string) (int, error) {
	if s == "n/a" {
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("value %q is neither a count nor n/a", s)
	}
	return n, nil
}

// EthtoolFeatures parses `ethtool -k IF`: "Features for IF:" then
// "name: on|off" lines with an optional " [fixed]", " [requested on]" or
// " [requested off]"; child features are indented (tab or spaces) and kept
// under their own names. tcp-segmentation-offload, generic-segmentation-
// offload, generic-receive-offload and large-receive-offload are returned as
// tso, gso, gro and lro.
//
// When the host could not list the features ("Cannot get device feature
// names: …", "netlink error: No such device", a usage error) the error is a
// *HostError with the host's own words.
//
// Netlink-era ethtool prints a group of several features (tx-checksumming,
// scatter-gather, tcp-segmentation-offload) without annotation, "on" when
// any child is: "tx-checksumming: off" over children all "off [fixed]".
// A group that is off, unannotated, and whose every child listed is
// [fixed] is returned Fixed, as the driver allows none of it.
func EthtoolFeatures(text string) (map[string]facts.Feature, error) {
	out := make(map[string]facts.Feature)
	header := false
	parent := ""
	children := map[string][]string{}
	for _, l := range nonBlankLines(text) {
		t := strings.TrimSpace(l.text)
		if strings.HasPrefix(t, "Features for ") && strings.HasSuffix(t, ":") {
			header = true
			continue
		}
		if isEthtoolErrorLine(t) {
			continue // judged below, once we know whether any feature was listed
		}
		if !header {
			break // not ethtool -k output; reported below
		}
		name, rest, ok := strings.Cut(t, ": ")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("ethtool -k: line %d: expected \"name: on|off [fixed]\", got %q", l.n, clip(t))
		}
		f, err := parseFeature(rest)
		if err != nil {
			return nil, fmt.Errorf("ethtool -k: line %d: %s: %w", l.n, name, err)
		}
		if short, ok := facts.OffloadKeyword(name); ok {
			name = short
		}
		out[name] = f
		if l.text[0] == ' ' || l.text[0] == '\t' {
			if parent != "" {
				children[parent] = append(children[parent], name)
			}
		} else {
			parent = name
		}
	}
	for group, cs := range children {
		g := out[group]
		if g.On || g.Fixed || g.Requested != "" {
			continue
		}
		all := true
		for _, c := range cs {
			all = all && out[c].Fixed
		}
		if all {
			g.Fixed = true
			out[group] = g
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	if herr := ethtoolHostError(text, ""); herr != nil {
		return nil, herr
	}
	if !header {
		return nil, fmt.Errorf("ethtool -k: expected \"Features for IF:\" followed by \"name: on|off\" lines, got %q", clip(firstLine(text)))
	}
	return nil, fmt.Errorf("ethtool -k: \"Features for\" header without any feature line")
}

func parseFeature(s string) (facts.Feature, error) {
	s = strings.TrimSpace(s)
	state, extra, _ := strings.Cut(s, " ")
	var f facts.Feature
	switch state {
	case "on":
		f.On = true
	case "off":
	default:
		return f, fmt.Errorf("state %q is neither on nor off", state)
	}
	extra = strings.TrimSpace(extra)
	switch extra {
	case "":
	case "[fixed]":
		f.Fixed = true
	case "[requested on]":
		f.Requested = "on"
	case "[requested off]":
		f.Requested = "off"
	case "[not requested]":
	default:
		return f, fmt.Errorf("unexpected annotation %q after %s", extra, state)
	}
	return f, nil
}

// isEthtoolErrorLine reports lines in which ethtool explains a failure.
func isEthtoolErrorLine(t string) bool {
	return strings.HasPrefix(t, "Cannot ") || strings.HasPrefix(t, "netlink error: ") ||
		strings.HasPrefix(t, "ethtool: ") || strings.HasPrefix(t, "For more information run ethtool")
}

// ethtoolHostError returns the host's own error text from ethtool output, or
// nil when there is none. "Cannot get device ring settings: Operation not
// supported" yields "Operation not supported"; of several "netlink error:"
// lines the last one (the errno text) is used; a usage error is returned
// whole. When prefer is not empty, only "Cannot …" lines starting with it
// (and netlink or usage errors) count.
func ethtoolHostError(text, prefer string) *HostError {
	var msg string
	for _, l := range nonBlankLines(text) {
		t := strings.TrimSpace(l.text)
		switch {
		case strings.HasPrefix(t, "netlink error: "):
			msg = strings.TrimSpace(strings.TrimPrefix(t, "netlink error: "))
		case strings.HasPrefix(t, "Cannot "):
			if prefer != "" && !strings.HasPrefix(t, prefer) {
				continue
			}
			if _, after, ok := strings.Cut(t, ": "); ok {
				msg = strings.TrimSpace(after)
			} else {
				msg = t
			}
		case strings.HasPrefix(t, "ethtool: "):
			msg = t
		}
	}
	if msg == "" {
		return nil
	}
	return &HostError{Text: msg}
}

func firstLine(text string) string {
	for _, l := range nonBlankLines(text) {
		return l.text
	}
	return ""
}
