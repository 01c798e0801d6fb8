package apply

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/internal/safe"
	"github.com/kaudit/kaudit/nicpersist"
	"github.com/kaudit/kaudit/remediate"
)

// NIC changes: ring sizes (ethtool -G) and offloads (ethtool -K), set at
// runtime (nic.go) and persisted through the mechanism the planner picked
// (package nicpersist; remediate.Change.PersistPath, PersistMatch, NM): a
// file rendered by the mechanism that owns its path, backed up, written and
// restored like any other file of a run; or a NetworkManager connection,
// whose properties are read, journalled and restored as running values
// (keys "nm:UUID SETTING", nic.go).

// nicPersistFile is the file a NIC change is persisted in ("" for a
// NetworkManager connection).
func nicPersistFile(c remediate.Change) string {
	if c.NM != "" {
		return ""
	}
	return cmp.Or(c.PersistPath, remediate.NICPersistPath)
}

// nmReads are the NetworkManager connection values the read step reads
// for a NIC change persisted there (their previous values are journalled).
func nmReads(c remediate.Change) []NICRead {
	if c.NM == "" || !c.Persist {
		return nil
	}
	_, setting, _ := strings.Cut(c.Target, " ")
	return []NICRead{{Kind: c.Kind, Target: c.NM.Key(setting)}}
}

// nicFile is one file persisting NIC settings, as the apply step writes it.
type nicFile struct {
	path    string
	content []byte // unchanged content: nothing to write
	mode    string // of a created file
}

// renderNICPersist computes the new content of every file that persists
// set (grouped by NICSetting.Path), from what the read step found, and
// the NetworkManager connection values to set (running values of the NIC
// kinds, keyed remediate.NMConnection.Key, their Before read by the read
// step: nmReads).
func renderNICPersist(set []NICSetting, st *readState, runID string) ([]nicFile, []RuntimeWrite, error) {
	byPath := map[string][]NICSetting{}
	var nm []RuntimeWrite
	for _, s := range set {
		if s.NM != "" {
			w, change, err := nmWrite(s, st)
			if err != nil {
				return nil, nil, err
			}
			if change {
				nm = append(nm, w)
			}
			continue
		}
		p := cmp.Or(s.Path, remediate.NICPersistPath)
		byPath[p] = append(byPath[p], s)
	}
	var out []nicFile
	for _, p := range sortedKeys(byPath) {
		content, hold, err := renderNICFile(p, byPath[p], st, runID)
		if err != nil {
			return nil, nil, err
		}
		if !hold {
			out = append(out, nicFile{path: p, content: content, mode: ManagedFileMode})
		}
	}
	return out, nm, nil
}

// nmWrite is the NetworkManager connection value that persists s (in its
// connection s.NM), and whether it differs from what was read.
func nmWrite(s NICSetting, st *readState) (RuntimeWrite, bool, error) {
	uuid := string(s.NM)
	if err := nicpersist.Check([]nicpersist.Setting{{Iface: s.Iface, Setting: s.Setting, Value: s.Value}}); err != nil {
		return RuntimeWrite{}, false, err
	}
	if !safe.NMUUID(uuid) {
		return RuntimeWrite{}, false, fmt.Errorf("%s %s: NetworkManager connection UUID %q", s.Iface, s.Setting, uuid)
	}
	key := s.NM.Key(s.Setting)
	before, ok := st.nic[key]
	if !ok {
		return RuntimeWrite{}, false, fmt.Errorf("%s: not read", key)
	}
	if err := checkNICValue(s.Kind, key, before); err != nil {
		return RuntimeWrite{}, false, fmt.Errorf("NetworkManager connection %s: current value: %w", uuid, err)
	}
	return RuntimeWrite{Kind: s.Kind, Key: key, Before: before, To: s.Value}, before != s.Value, nil
}

// renderNICFile computes the new content of persistence file p for the
// settings ss, by the mechanism that owns p. hold: the file already holds
// them, nothing to write.
func renderNICFile(p string, ss []NICSetting, st *readState, runID string) (content []byte, hold bool, err error) {
	if err := checkPath(p); err != nil {
		return nil, false, err
	}
	if !remediate.ValidRunID(runID) {
		return nil, false, fmt.Errorf("run id %q", runID)
	}
	m := nicpersist.ForPath(p)
	if m == nil {
		return nil, false, fmt.Errorf("%s: kaudit does not persist NIC settings there", p)
	}
	fs := st.files[p]
	set := make([]nicpersist.Setting, len(ss))
	for i, s := range ss {
		set[i] = nicpersist.Setting{Iface: s.Iface, Setting: s.Setting, Value: s.Value}
	}
	return m.Render(nicpersist.File{Path: p, Content: fs.content, Exists: fs.exists}, set, nicpersist.Env{Ethtool: st.ethtool, RunID: runID, Match: string(ss[0].Match)})
}
