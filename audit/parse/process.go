package parse

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// ProcLimit reads one limit (name as the kernel prints it, "Max open
// files") from the text of /proc/PID/limits (fs/proc/base.c,
// proc_pid_limits: "%-25s %-20s %-20s %-10s", "unlimited" for
// RLIM_INFINITY). ok is false when the line is absent.
func ProcLimit(text, name string) (l facts.Limit, ok bool, err error) {
	for _, line := range strings.Split(text, "\n") {
		rest, found := strings.CutPrefix(line, name+" ")
		if !found {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 2 {
			return l, false, fmt.Errorf("limits: %q: want a soft and a hard value", strings.TrimSpace(line))
		}
		if l.Soft, err = limitValue(f[0]); err != nil {
			return l, false, err
		}
		if l.Hard, err = limitValue(f[1]); err != nil {
			return l, false, err
		}
		return l, true, nil
	}
	return l, false, nil
}

func limitValue(s string) (int64, error) {
	if s == "unlimited" {
		return facts.Unlimited, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("limits: %q is neither a count nor \"unlimited\"", s)
	}
	return n, nil
}

// KBField reads "Key:   N kB" from /proc/PID/status or /proc/meminfo
// (key without the colon: "VmSwap", "MemTotal"). ok is false when the
// key is absent; a present key with a malformed value is an error.
func KBField(text, key string) (n int64, ok bool, err error) {
	for _, line := range strings.Split(text, "\n") {
		rest, found := strings.CutPrefix(line, key+":")
		if !found {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, false, fmt.Errorf("%s: %q: want \"N kB\"", key, strings.TrimSpace(rest))
		}
		n, err = strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 {
			return 0, false, fmt.Errorf("%s: %q is not a size in kB", key, f[0])
		}
		return n, true, nil
	}
	return 0, false, nil
}

// JavaVersion reads JAVA_VERSION="17.0.9" from a JDK's or JRE's release
// file. Only digits, dots, underscores, '+' and '-' are accepted (the
// value comes from the host): "1.8.0_392", "21.0.1", "25".
func JavaVersion(text string) (string, bool) {
	for _, line := range strings.Split(text, "\n") {
		v, found := strings.CutPrefix(strings.TrimSpace(line), "JAVA_VERSION=")
		if !found {
			continue
		}
		v = strings.Trim(v, `"`)
		if v == "" || strings.Trim(v, "0123456789._+-") != "" || v[0] < '0' || v[0] > '9' {
			return "", false
		}
		return v, true
	}
	return "", false
}

// HeapFlag reads a JVM -Xms/-Xmx flag's size in bytes: "-Xmx6g" (k, m,
// g, t in either case, powers of 1024; no suffix: bytes). flag is "Xms"
// or "Xmx"; ok is false for any other argument.
func HeapFlag(arg, flag string) (int64, bool) {
	v, found := strings.CutPrefix(arg, "-"+flag)
	if !found || v == "" {
		return 0, false
	}
	mult := int64(1)
	switch v[len(v)-1] {
	case 'k', 'K':
		mult = 1 << 10
	case 'm', 'M':
		mult = 1 << 20
	case 'g', 'G':
		mult = 1 << 30
	case 't', 'T':
		mult = 1 << 40
	}
	if mult > 1 {
		v = v[:len(v)-1]
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, false
	}
	return n * mult, true
}
