package parse

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

var (
	reModName    = regexp.MustCompile(`^(tcp|sch)_[a-z0-9_]+$`)
	reCCName     = regexp.MustCompile(`^[a-z0-9_]+$`)
	reRelease    = regexp.MustCompile(`^[A-Za-z0-9._+~-]+$`)
	reConfigLine = regexp.MustCompile(`^(CONFIG_(?:MODULES|TCP_CONG_[A-Z0-9_]+|NET_SCH_[A-Z0-9_]+))=([ym])$`)
)

// KernelCaps parses the gather script's kernel-caps section: "release R",
// "proc-modules yes|no", "module-dir PATH|!absent", "cc-available NAMES",
// "modules-disabled 0|1", "dep MOD", "builtin MOD", "file MOD" (each of
// cc-available, modules-disabled, dep and builtin may instead read
// "!unreadable FILE"), then optionally "config-source SOURCE", "config
// CONFIG_X=y|m" lines, "config-done N" (the lines read; 0 when the
// configuration did not decompress) and "config-failed" (a decompression
// that said it failed).
//
// It is strict: an unknown line, a malformed name or a release the script
// would not have printed is an error (the planner then judges nothing on
// these facts). A configuration is kept only when it was read whole
// ("config-done" with at least one line read, no "config-failed").
func KernelCaps(body string) (*facts.KernelCaps, error) {
	k := &facts.KernelCaps{}
	var procModules, disabled string
	seen := map[string]bool{}
	var cfg map[string]string
	cfgDone, cfgFailed := false, false
	for n, line := range strings.Split(body, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		word, rest, _ := strings.Cut(line, " ")
		bad := func(why string) error {
			return fmt.Errorf("kernel-caps: line %d: %s: %q", n+1, why, clip(line))
		}
		unreadable := strings.HasPrefix(rest, "!")
		switch word {
		case "release", "proc-modules", "module-dir", "cc-available", "modules-disabled", "config-source", "config-done":
			if seen[word] {
				return nil, bad("repeated")
			}
			seen[word] = true
		}
		switch word {
		case "release":
			if !unreadable {
				if !reRelease.MatchString(rest) {
					return nil, bad("not a kernel release")
				}
				k.Release = rest
			}
		case "proc-modules":
			if rest != "yes" && rest != "no" {
				return nil, bad("want yes or no")
			}
			procModules = rest
		case "module-dir":
			if !unreadable {
				if !strings.HasPrefix(rest, "/") || strings.ContainsAny(rest, " \t") {
					return nil, bad("not a directory path")
				}
				k.ModuleDir = rest
			}
		case "cc-available":
			if unreadable {
				continue
			}
			names := strings.Fields(rest)
			for _, c := range names {
				if !reCCName.MatchString(c) {
					return nil, bad("not a congestion control name")
				}
			}
			k.Congestion = names
			if k.Congestion == nil {
				k.Congestion = []string{}
			}
		case "modules-disabled":
			if !unreadable {
				if rest != "0" && rest != "1" {
					return nil, bad("want 0 or 1")
				}
				disabled = rest
			}
		case "dep", "builtin", "file":
			if unreadable {
				continue
			}
			if !reModName.MatchString(rest) {
				return nil, bad("not a tcp_ or sch_ module name")
			}
			switch word {
			case "dep":
				k.ModuleDep = true
				k.Loadable = appendName(k.Loadable, rest)
			case "builtin":
				k.BuiltinRead = true
				k.Builtin = appendName(k.Builtin, rest)
			default:
				k.Files = appendName(k.Files, rest)
			}
		case "config-source":
			if !unreadable {
				if !strings.HasPrefix(rest, "/") || strings.ContainsAny(rest, " \t") {
					return nil, bad("not a file path")
				}
				k.ConfigSource = rest
				cfg = map[string]string{}
			}
		case "config":
			m := reConfigLine.FindStringSubmatch(rest)
			if m == nil || cfg == nil {
				return nil, bad("want CONFIG_X=y|m after config-source")
			}
			cfg[m[1]] = m[2]
		case "config-failed":
			cfgFailed = true
		case "config-done":
			nr, err := strconv.Atoi(rest)
			if err != nil || nr < 0 {
				return nil, bad("want a line count")
			}
			cfgDone = nr > 0
		default:
			return nil, bad("unknown line")
		}
	}
	if !seen["release"] || !seen["proc-modules"] || !seen["module-dir"] {
		return nil, fmt.Errorf("kernel-caps: want release, proc-modules and module-dir lines")
	}
	// A module tree lists modules.dep / modules.builtin as unreadable when
	// it has none: the "dep"/"builtin" words alone say whether they were read.
	if k.ModuleDir != "" {
		k.ModuleDep = k.ModuleDep || seenReadable(body, "dep")
		k.BuiltinRead = k.BuiltinRead || seenReadable(body, "builtin")
	}
	switch {
	case procModules == "no":
		k.Modules = facts.ModulesNone
	case disabled == "1":
		k.Modules = facts.ModulesDisabled
	case procModules == "yes":
		k.Modules = facts.ModulesYes
	}
	if cfg != nil && cfgDone && !cfgFailed {
		k.Config = cfg
	} else {
		k.ConfigSource = ""
	}
	return k, nil
}

// seenReadable reports whether the module tree had the file of word
// ("dep": modules.dep) even though it lists no tcp_/sch_ module: no
// "WORD !unreadable" line.
func seenReadable(body, word string) bool {
	return !strings.Contains("\n"+body, "\n"+word+" !unreadable")
}

func appendName(list []string, name string) []string {
	if slices.Contains(list, name) {
		return list
	}
	return append(list, name)
}
