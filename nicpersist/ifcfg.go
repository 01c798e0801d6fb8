package nicpersist

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// ifcfg is RHEL network-scripts: /etc/sysconfig/network-scripts/ifcfg-IF,
// whose ETHTOOL_OPTS ifup runs. The gather picks it only where ifup
// exists and NetworkManager does not manage the interface (on RHEL 9 the
// ifcfg files are NetworkManager's, read by its ifcfg-rh plugin). Read
// only: what it sets at boot is read, kaudit persists with the udev rule.
type ifcfg struct{ noFile }

func (ifcfg) Name() facts.PersistMechanism { return facts.PersistIfcfg }

// detect: an ifcfg file for the interface, and ifup; its last
// ETHTOOL_OPTS line and value (one level of quotes removed).
func (ifcfg) detect(p *facts.NICPersist, in *input) bool {
	file := in.last("@ifcfg")
	if file == "" || in.last("@ifup") == "" {
		return false
	}
	p.Mechanism, p.File = facts.PersistIfcfg, file
	in.each("@ifcfg-opts", func(val string) {
		n, text, ok := strings.Cut(val, ":")
		if ln, err := strconv.Atoi(n); ok && err == nil {
			_, v, _ := strings.Cut(text, "=")
			p.Line, p.EthtoolOpts = ln, unquoteShell(strings.TrimSpace(v))
		}
	})
	return true
}

// unquoteShell removes one level of "..." or '...' around a value.
func unquoteShell(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// boot applies an ifcfg file's ETHTOOL_OPTS ("-K eth0 gro on; -G eth0 rx
// 4096"); the legacy form (options for ethtool -s) sets nothing audited.
func (ifcfg) boot(b *builder, in *input) {
	ps := in.ps
	if !in.managedBy(facts.PersistIfcfg) || !strings.HasPrefix(strings.TrimSpace(ps.EthtoolOpts), "-") {
		return
	}
	src := fmt.Sprintf("%s:%d", ps.File, ps.Line)
	b.setFrom(ethtoolCommands(ps.EthtoolOpts, true), []string{in.name}, facts.PersistIfcfg, src, "ETHTOOL_OPTS")
}

// Plan persists with the udev rule: kaudit reads ETHTOOL_OPTS (boot) but
// no longer edits it (network-scripts are deprecated in RHEL 8 and gone
// from RHEL 9, where NetworkManager reads the ifcfg files). A setting
// ETHTOOL_OPTS sets otherwise wins at ifup: PlanFor lists it in Beaten.
func (ifcfg) Plan(nic facts.NIC, set map[string]string) Plan {
	ps := nic.Persist
	var cmds []string
	for _, s := range sortedKeys(set) {
		cmds = append(cmds, "-"+Setting{nic.Name, s, set[s]}.flag()+" "+nic.Name+" "+s+" "+set[s])
	}
	return Plan{Path: UdevPath,
		Manual: fmt.Sprintf("%s is brought up by network-scripts (%s): kaudit persisted its settings in %s (it reads ETHTOOL_OPTS but does not edit it: network-scripts are deprecated in RHEL 8 and removed in RHEL 9); to keep them in %s instead add \"%s\" to its ETHTOOL_OPTS, then remove %s's lines from %s",
			nic.Name, ps.File, UdevPath, ps.File, strings.Join(cmds, "; "), nic.Name, UdevPath),
		Note: fmt.Sprintf("%s is brought up by network-scripts (%s): persisted with the udev rule; ETHTOOL_OPTS there, if it sets them, wins at ifup", nic.Name, ps.File)}
}
