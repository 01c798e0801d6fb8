package parse

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// conntrackDropColumns are the /proc/net/stat/nf_conntrack columns of
// connections the table failed to take. The header names the columns:
// their order and set changed between kernels (searched became clashres,
// delete_list chainlength), so they are found by name.
var conntrackDropColumns = []string{"drop", "early_drop", "insert_failed"}

// ConntrackStat reads /proc/net/stat/nf_conntrack: a header line of
// column names, then one line per possible CPU of as many 8-digit hex
// counters. The drop counters are summed over the CPUs. Anything else (a
// column missing, a line of another width, a value not hex) is an error:
// never a sum of what could be read.
func ConntrackStat(text string) (*facts.ConntrackStat, error) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	head := strings.Fields(lines[0])
	if len(head) == 0 || head[0] != "entries" {
		return nil, fmt.Errorf("nf_conntrack stat: no header line (it starts %q)", firstField(head))
	}
	idx := map[string]int{}
	for i, h := range head {
		idx[h] = i
	}
	for _, c := range conntrackDropColumns {
		if _, ok := idx[c]; !ok {
			return nil, fmt.Errorf("nf_conntrack stat: no %s column in the header", c)
		}
	}
	st := &facts.ConntrackStat{}
	for n, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != len(head) {
			return nil, fmt.Errorf("nf_conntrack stat: line %d has %d values, the header %d", n+2, len(f), len(head))
		}
		var v [3]uint64
		for i, c := range conntrackDropColumns {
			x, err := strconv.ParseUint(f[idx[c]], 16, 32)
			if err != nil {
				return nil, fmt.Errorf("nf_conntrack stat: line %d: %s %q is not a 32-bit hex counter", n+2, c, f[idx[c]])
			}
			v[i] = x
		}
		st.CPUs++
		st.Drop += v[0]
		st.EarlyDrop += v[1]
		st.InsertFailed += v[2]
	}
	if st.CPUs == 0 {
		return nil, fmt.Errorf("nf_conntrack stat: a header and no CPU line")
	}
	return st, nil
}

func firstField(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
