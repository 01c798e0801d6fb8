package transport

import "strings"

// ProxyJump is the jump chain a connection to t goes through, as route
// decides it ("" when direct, also for ProxyJump none). It lets callers
// that fetch a bastion's key first (kaudit trust) see bastions named only
// in ssh_config. A target that does not resolve keeps its own proxy_jump:
// its connection reports the error.
func (c *SSH) ProxyJump(t Target) string {
	if t.Local {
		return t.ProxyJump
	}
	_, _, jump, err := c.target(t)
	if err != nil {
		return t.ProxyJump
	}
	if strings.EqualFold(jump, "none") {
		return ""
	}
	return jump
}
