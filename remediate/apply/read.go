package apply

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate/sysctld"
)

// readState is what the read step found on a host.
type readState struct {
	files   map[string]fileState
	runtime map[string]string // sysctl key → value
	nic     map[string]string // "eth0 gro" → value
	ethtool string            // its path on the host, when NICs were read
	notes   []string          // what the read step took over or cleaned up, for the log
}

type fileState struct {
	exists  bool
	sha     string
	mode    string // "644:root:root" or "-"
	content []byte
}

// runScript runs one script on h within opt.Timeout. step names the
// script in transport errors ("the apply script").
func runScript(ctx context.Context, opt Options, h inventory.Host, script []byte, step string) (*transport.Output, error) {
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	t := audit.Target(h, opt.ConnectTimeout)
	t.Step = step
	return opt.Runner.Run(ctx, t, script)
}

// stderrTail is a short excerpt of a script's stderr for an error
// message. The scripts never print file contents to stderr.
func stderrTail(out *transport.Output) string {
	if out == nil {
		return ""
	}
	s := strings.TrimSpace(string(out.Stderr))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// read runs the read step; with a lease, the read step of run
// opt.RunID, which takes the host's lock and the run's lease (a
// *HeldError while another run holds it).
func read(ctx context.Context, opt Options, h inventory.Host, files, keys []string, nics []NICRead, lease *Lease) (*readState, error) {
	marker := NewMarker()
	p := ReadParams{Marker: marker, Files: files, Sysctls: keys, NICs: nics}
	if lease != nil {
		p.RunID, p.Lease = opt.RunID, *lease
	}
	script, err := ReadScript(p)
	if err != nil {
		return nil, err
	}
	out, err := runScript(ctx, opt, h, script, "the read script")
	if err != nil {
		return nil, fmt.Errorf("read: %v", err)
	}
	rs, err := remote.ParseSteps(out.Stdout, marker, h.Name, readWords)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if f := rs.FirstFailure(); f != nil {
		if held := heldError(h.Name, f); held != nil {
			return nil, held
		}
		return nil, fmt.Errorf("read: %s%s", f.Text(), stderrTail(out))
	}
	if d := rs.Find("done"); d == nil {
		return nil, fmt.Errorf("read: the script did not finish%s", stderrTail(out))
	}
	st := &readState{files: map[string]fileState{}, runtime: map[string]string{}, nic: map[string]string{}}
	for _, r := range rs {
		switch {
		case r.Step == "stale":
			st.notes = append(st.notes, staleText(h.Name, r))
		case r.Step == "cleaned":
			st.notes = append(st.notes, fmt.Sprintf("%s: removed %s (left by a run that is gone)", h.Name, r.Text()))
		}
	}
	if lease != nil && rs.Find("lease") == nil {
		return nil, fmt.Errorf("read: the script took no lease%s", stderrTail(out))
	}
	for i, p := range files {
		fs, err := readFile(rs.Find(fmt.Sprintf("file-%d", i)), p)
		if err != nil {
			return nil, err
		}
		st.files[p] = fs
	}
	for i, k := range keys {
		r := rs.Find(fmt.Sprintf("sysctl-%d", i))
		if r == nil || len(r.Detail) == 0 {
			return nil, fmt.Errorf("read: no result for %s", k)
		}
		st.runtime[k] = sysctld.Fold(strings.Join(r.Detail, " "))
	}
	if len(nics) > 0 {
		r := rs.Find("ethtool")
		if r == nil || len(r.Detail) != 1 {
			return nil, errors.New("read: no ethtool path")
		}
		st.ethtool = r.Detail[0]
	}
	for i, n := range nics {
		r := rs.Find(fmt.Sprintf("nic-%d", i))
		if r == nil || len(r.Detail) != 1 {
			return nil, fmt.Errorf("read: no result for %s", n.Target)
		}
		st.nic[n.Target] = r.Detail[0]
	}
	return st, nil
}

// readFile decodes file p's read result: absent, or present with its
// SHA-256, mode and base64 content, which must match the SHA-256.
func readFile(r *remote.Result, p string) (fileState, error) {
	switch {
	case r == nil || !r.OK:
		return fileState{}, fmt.Errorf("read: no result for %s", p)
	case r.Word == wordAbsent:
		return fileState{}, nil
	case len(r.Detail) != 3:
		return fileState{}, fmt.Errorf("read: malformed result for %s", p)
	}
	content, err := base64.StdEncoding.DecodeString(r.Detail[2])
	if err != nil {
		return fileState{}, fmt.Errorf("read: %s: content is not base64", p)
	}
	if SHA256(content) != r.Detail[0] {
		return fileState{}, fmt.Errorf("read: %s: content does not match its sha256 (changing while read?)", p)
	}
	return fileState{exists: true, sha: r.Detail[0], mode: r.Detail[1], content: content}, nil
}
