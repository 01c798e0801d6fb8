package sshconfig

import (
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/internal/located"
)

// match evaluates a Match line as OpenSSH's match_cfg_line does: every
// criterion must hold. "all" stands alone or after canonical/final. A
// criterion kaudit does not evaluate (exec, localnetwork, tagged, version,
// sessiontype, command, or a misspelling) makes the block not apply and is
// warned about once.
func (st *state) match(d directive) (bool, error) {
	args := d.args
	result := true
	for i := 0; i < len(args); i++ {
		crit := strings.ToLower(args[i])
		neg := strings.HasPrefix(crit, "!")
		crit = strings.TrimPrefix(crit, "!")
		switch crit {
		case "all":
			if neg || !allAlone(args, i) {
				return false, fmt.Errorf("%s: Match: 'all' cannot be combined with other criteria (only after canonical or final)", d.where())
			}
			continue
		case "canonical", "final":
			if crit == "final" && !neg {
				st.wantFinal = true
			}
			// kaudit never canonicalizes: the canonical pass is the final one.
			if st.final == neg {
				result = false
			}
			continue
		}
		if i+1 >= len(args) {
			if !evaluated[crit] {
				st.unsupported(d, crit)
				return false, nil
			}
			return false, fmt.Errorf("%s: Match %s: missing argument", d.where(), crit)
		}
		i++
		if !evaluated[crit] {
			st.unsupported(d, crit)
			result = false
			continue
		}
		if st.criterion(crit, args[i]) == neg {
			result = false
		}
	}
	return result, nil
}

// evaluated are the criteria that take an argument and that kaudit checks.
var evaluated = setOf("host", "originalhost", "user", "localuser")

func (st *state) unsupported(d directive, crit string) {
	st.c.warn("match:"+d.where()+":"+crit, located.WithHint(fmt.Sprintf(
		"ssh_config %s: Match %s is not evaluated by kaudit: that block does not apply", d.where(), crit), "use Host or Match host/user instead"))
}

func allAlone(args []string, i int) bool {
	if i != len(args)-1 {
		return false
	}
	for _, a := range args[:i] {
		if a = strings.ToLower(a); a != "canonical" && a != "final" {
			return false
		}
	}
	return true
}

func (st *state) criterion(crit, arg string) bool {
	switch crit {
	case "host":
		return matchList(st.matchHost(), arg, true)
	case "originalhost":
		return matchList(st.q.Host, arg, true)
	case "user":
		return matchList(st.remoteUser(), arg, false)
	case "localuser":
		return matchList(st.c.opt.LocalUser, arg, false)
	}
	return false
}

// matchHost is what Match host sees: the HostName obtained so far (with %h
// expanded), else the name given.
func (st *state) matchHost() string {
	if st.final {
		return st.hostname
	}
	if v, ok := st.vals["hostname"]; ok {
		if h, err := expandPercent(v.args[0], map[byte]string{'h': st.q.Host}); err == nil {
			return h
		}
	}
	return st.q.Host
}

func (st *state) remoteUser() string {
	if v, ok := st.vals["user"]; ok {
		return v.args[0]
	}
	return st.c.opt.LocalUser
}
