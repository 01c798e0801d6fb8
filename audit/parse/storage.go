package parse

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// v1Unlimited is the least cgroup v1 limit that means none: the kernel
// reports "no limit" as PAGE_COUNTER_MAX pages (9223372036854771712 on
// 64-bit); anything past 2^62 bytes is no real machine's.
const v1Unlimited = int64(1) << 62

// CgroupMemory parses the gather's broker-cgroup section: "version N",
// "path P", "nodir DIR", "member yes|no|unknown", "limit FILE VALUE
// PATH". A line it does not know, or a value it cannot read, is an
// error: a limit is never guessed.
func CgroupMemory(body string) (*facts.CgroupMemory, error) {
	cg := &facts.CgroupMemory{}
	seen := false
	for _, line := range strings.Split(body, "\n") {
		if line == "" {
			continue
		}
		tag, rest, _ := strings.Cut(line, " ")
		switch tag {
		case "version":
			n, err := strconv.Atoi(rest)
			if err != nil || n < 0 || n > 2 {
				return nil, fmt.Errorf("broker-cgroup: version %q is not 0, 1 or 2", rest)
			}
			cg.Version, seen = n, true
		case "path":
			cg.Path = rest
		case "nodir":
			cg.NoDir = true
		case "member":
			m := facts.Membership(rest)
			if m != facts.MemberYes && m != facts.MemberNo && m != facts.MemberUnknown {
				return nil, fmt.Errorf("broker-cgroup: member %q is not yes, no or unknown", rest)
			}
			cg.Member = m
		case "limit":
			l, err := cgroupLimit(rest)
			if err != nil {
				return nil, err
			}
			cg.Limits = append(cg.Limits, l)
		default:
			return nil, fmt.Errorf("broker-cgroup: unexpected line %q", line)
		}
	}
	if !seen {
		return nil, fmt.Errorf("broker-cgroup: no version line")
	}
	return cg, nil
}

// cgroupLimit reads "FILE VALUE PATH".
func cgroupLimit(s string) (facts.CgroupLimit, error) {
	file, rest, _ := strings.Cut(s, " ")
	v, path, ok := strings.Cut(rest, " ")
	if !ok || path == "" || !strings.HasPrefix(path, "/") {
		return facts.CgroupLimit{}, fmt.Errorf("broker-cgroup: limit line %q is not FILE VALUE PATH", s)
	}
	switch file {
	case "memory.max", "memory.high", "memory.limit_in_bytes":
	default:
		return facts.CgroupLimit{}, fmt.Errorf("broker-cgroup: limit file %q is not memory.max, memory.high or memory.limit_in_bytes", file)
	}
	l := facts.CgroupLimit{Path: path, File: file}
	switch n, err := strconv.ParseInt(v, 10, 64); {
	case v == "!absent":
		l.Absent = true
	case v == "!denied":
		l.Unread = "denied"
	case v == "max" && file != "memory.limit_in_bytes":
		l.Bytes = facts.Unlimited
	case err == nil && n >= v1Unlimited, errors.Is(err, strconv.ErrRange) && n == math.MaxInt64:
		l.Bytes = facts.Unlimited
	case err == nil && n >= 0:
		l.Bytes = n
	default:
		l.Unread = "not a number: " + strconv.Quote(v)
	}
	return l, nil
}

// BlockDevices parses the gather's log-devices section: "dev MAJ:MIN
// NODE" (or "!absent"), "node NAME KIND [DISK|DMNAME]", "slave NAME
// BELOW", "queue NAME FILE VALUE" (or "!absent PATH", "!denied PATH"),
// "truncated", "!absent /sys/dev/block". A line it does not know is an
// error; a queue value it cannot read is noted in the node's Unread.
func BlockDevices(body string) (*facts.BlockDevices, error) {
	d := &facts.BlockDevices{ByNumber: map[string]string{}, Nodes: map[string]facts.BlockNode{}}
	for _, line := range strings.Split(body, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if err := blockLine(d, f); err != nil {
			return nil, fmt.Errorf("log-devices: %v in %q", err, line)
		}
	}
	return d, nil
}

var devNumberRE = regexp.MustCompile(`^[0-9]+:[0-9]+$`)

// blockNameRE is a kernel block node name (sda, nvme0n1p2, dm-0, md127).
var blockNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:+-]{0,63}$`)

func blockLine(d *facts.BlockDevices, f []string) error {
	switch {
	case f[0] == "!absent":
		d.NoSys = true
	case f[0] == "truncated":
		d.Truncated = true
	case f[0] == "dev" && len(f) == 3 && devNumberRE.MatchString(f[1]):
		if f[2] != "!absent" {
			if !blockNameRE.MatchString(f[2]) {
				return fmt.Errorf("bad node name")
			}
			d.ByNumber[f[1]] = f[2]
		} else {
			d.ByNumber[f[1]] = ""
		}
	case f[0] == "node" && len(f) >= 3 && blockNameRE.MatchString(f[1]):
		return blockNode(d, f[1], facts.BlockKind(f[2]), f[3:])
	case f[0] == "slave" && len(f) == 3 && blockNameRE.MatchString(f[2]):
		n, ok := d.Nodes[f[1]]
		if !ok {
			return fmt.Errorf("slave of an unknown node")
		}
		n.Slaves = append(n.Slaves, f[2])
		d.Nodes[f[1]] = n
	case f[0] == "queue" && len(f) >= 4:
		n, ok := d.Nodes[f[1]]
		if !ok {
			return fmt.Errorf("queue of an unknown node")
		}
		if err := queueValue(&n, f[2], f[3:]); err != nil {
			return err
		}
		d.Nodes[f[1]] = n
	default:
		return fmt.Errorf("unexpected line")
	}
	return nil
}

func blockNode(d *facts.BlockDevices, name string, kind facts.BlockKind, rest []string) error {
	n := facts.BlockNode{Name: name, Kind: kind, ReadAheadKB: -1, Rotational: -1}
	switch {
	case kind == facts.BlockPartition && len(rest) == 1 && blockNameRE.MatchString(rest[0]):
		n.Disk = rest[0]
	case kind == facts.BlockDM:
		if len(rest) > 0 && !strings.HasPrefix(rest[0], "!") {
			n.DMName = strings.Join(rest, " ")
		}
	case (kind == facts.BlockMD || kind == facts.BlockDisk || kind == facts.BlockLoop) && len(rest) == 0:
	default:
		return fmt.Errorf("bad node kind or fields")
	}
	d.Nodes[name] = n
	return nil
}

// queueValue sets one queue file's value ("scheduler none [mq-deadline]
// kyber": the bracketed one is selected; "none" alone, as dm and md
// print it, is selected too).
func queueValue(n *facts.BlockNode, file string, v []string) error {
	if strings.HasPrefix(v[0], "!") {
		if n.Unread == nil {
			n.Unread = map[string]string{}
		}
		n.Unread[file] = strings.TrimPrefix(v[0], "!")
		return nil
	}
	switch file {
	case "scheduler":
		for _, w := range v {
			if strings.HasPrefix(w, "[") && strings.HasSuffix(w, "]") {
				n.Scheduler = strings.Trim(w, "[]")
			}
		}
		if len(v) == 1 && n.Scheduler == "" {
			n.Scheduler = v[0]
		}
		if n.Scheduler == "" {
			return fmt.Errorf("no selected scheduler")
		}
	case "read_ahead_kb":
		k, err := strconv.Atoi(v[0])
		if err != nil || k < 0 || len(v) != 1 {
			return fmt.Errorf("read_ahead_kb not a number")
		}
		n.ReadAheadKB = k
	case "rotational":
		if len(v) != 1 || (v[0] != "0" && v[0] != "1") {
			return fmt.Errorf("rotational not 0 or 1")
		}
		n.Rotational = int(v[0][0] - '0')
	default:
		return fmt.Errorf("unknown queue file")
	}
	return nil
}
