package rules

import (
	"sort"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// onTheNode says in fd's fix where a kernel-wide sysctl it asks for is
// set when the host is a container (facts.Feasibility.Container): on the
// node, whose kernel the container shares and whose value the rule read.
// kaudit fix never plans such a key there (remediate.feasible).
func onTheNode(fd *Finding, f *facts.Facts) {
	if fd.Fix == nil || f == nil || f.Feasibility == nil || f.Feasibility.Container == "" {
		return
	}
	var keys []string
	for k := range fd.Fix.Sysctl {
		if KernelWide(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	sort.Strings(keys)
	fd.Fix.Summary += "; on the node that runs this container (" + f.Feasibility.Container + "): " +
		strings.Join(keys, ", ") + " is the node kernel's, not the container's"
}
