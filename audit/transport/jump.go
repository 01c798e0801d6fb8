package transport

// ProxyJump is the jump chain a connection to t goes through, as route
// decides it: the inventory's proxy_jump when given, else ssh_config's
// ProxyJump for t ("" or "none": direct). It lets callers that fetch a
// bastion's key first (kaudit trust) see bastions named only in
// ssh_config.
func (c *SSH) ProxyJump(t Target) string {
	if t.Given.ProxyJump || c.Config == nil || t.NoSSHConfig || t.Local {
		return t.ProxyJump
	}
	_, h, err := resolveEndpoint(c.Config, targetQuery(t, true), t, t.Given, t.Name)
	if err != nil || h == nil {
		return t.ProxyJump
	}
	if h.ProxyJump == "" || h.ProxyJump == "none" {
		return ""
	}
	return h.ProxyJump
}
