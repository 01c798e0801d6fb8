package transport

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/kaudit/kaudit/internal/located"
)

// KnownHostsProblem is a known_hosts file that no host key can be checked
// against: a directory, a file that cannot be read, or a malformed line.
// Every host whose key is checked against it would fail as KindHostKey;
// CheckKnownHosts finds it before any connection is made.
type KnownHostsProblem struct {
	Path string
	Err  error // says what is wrong and what to do
	// SSHConfig: the path comes from ssh_config (UserKnownHostsFile,
	// GlobalKnownHostsFile or their defaults), not from the inventory.
	SSHConfig bool
}

func (p *KnownHostsProblem) Error() string {
	if p.SSHConfig {
		return p.Err.Error() + " (the file is named by ssh_config: UserKnownHostsFile or GlobalKnownHostsFile)"
	}
	return p.Err.Error()
}

// CheckKnownHostsPath checks one known_hosts path as HostKeys will read
// it: a file that does not exist is fine (an empty file, which accept-new
// and kaudit trust create), a directory or a file that cannot be opened
// is not. An unexpanded "~" (no home directory) is left to the check of
// the key, which reports it.
func CheckKnownHostsPath(p string) error {
	if p == "" || strings.HasPrefix(p, "~") {
		return nil
	}
	fi, err := os.Stat(p)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return located.Hint(fmt.Errorf("known_hosts %s: cannot be read: %v", p, located.PathCause(err)), "give known_hosts the path of a readable file, e.g. ~/.ssh/known_hosts")
	case fi.IsDir():
		return located.Hint(fmt.Errorf("known_hosts %s: is a directory, not a file", p), "give known_hosts the path of a file in it, e.g. "+strings.TrimRight(p, "/")+"/known_hosts")
	case !fi.Mode().IsRegular():
		return located.Hint(fmt.Errorf("known_hosts %s: is not a regular file", p), "give known_hosts the path of a file, e.g. ~/.ssh/known_hosts")
	}
	fh, err := os.Open(p)
	if err != nil {
		return located.Hint(fmt.Errorf("known_hosts %s: cannot be read: %v", p, located.PathCause(err)), "check its permissions, or give known_hosts another file")
	}
	return fh.Close()
}

// CheckKnownHosts checks every known_hosts file t's host key (and each of
// its jump hosts' keys) would be checked against, each path once over
// the calls of one runner (seen): its path (CheckKnownHostsPath), then
// its content, which is read and indexed here as the handshake would
// read it (and kept for it), so that a malformed line is reported with
// its FILE:LINE. A target verified with PolicyInsecure, or local, reads
// no file. A target that cannot be resolved is left to the connection,
// which reports it.
func (c *SSH) CheckKnownHosts(t Target, seen map[string]bool) *KnownHostsProblem {
	if t.Local {
		return nil
	}
	eps, err := c.route(t)
	if err != nil {
		return nil
	}
	for _, ep := range eps {
		if ep.policy == PolicyInsecure {
			continue
		}
		for _, p := range ep.knownHosts.all() {
			if seen[p] {
				continue
			}
			seen[p] = true
			fromConfig := !slices.Contains(t.KnownHosts, p)
			if err := CheckKnownHostsPath(p); err != nil {
				return &KnownHostsProblem{Path: p, Err: err, SSHConfig: fromConfig}
			}
			if strings.HasPrefix(p, "~") {
				continue
			}
			f := c.HostKeys.file(p)
			f.mu.RLock()
			err := f.ix.err
			f.mu.RUnlock()
			if err != nil {
				return &KnownHostsProblem{Path: p, Err: err, SSHConfig: fromConfig}
			}
		}
	}
	return nil
}
