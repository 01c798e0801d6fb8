package apply

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/props"
	"github.com/kaudit/kaudit/remediate/sysctld"
)

// prepared is what the apply step will do on a host.
type prepared struct {
	runID   string
	params  ApplyParams
	backups []remediate.Backup
	runtime []remediate.RuntimeValue
	// collected from the changes, written by the file steps
	persist     map[string]string            // sysctl key → boot-time value
	propsByFile map[string]map[string]string // server.properties → key → value
	nicPersist  []NICSetting
	dropIns     []dropInFile // dropin.go
}

// prepare computes the new file contents and the journal records from
// what was read. It changes nothing. Files are written in this order
// (their backups are numbered so): the properties files, the managed
// sysctl file, the NIC persistence files, the systemd drop-ins.
func prepare(runID string, changes []remediate.Change, st *readState) (*prepared, error) {
	p := &prepared{runID: runID, params: ApplyParams{RunID: runID}, persist: map[string]string{}, propsByFile: map[string]map[string]string{}}
	for _, c := range changes {
		var err error
		switch c.Kind {
		case remediate.KindNICRing, remediate.KindNICOffload:
			err = p.nic(c, st)
		case remediate.KindSysctl:
			err = p.sysctl(c, st)
		case remediate.KindKafkaProperty:
			err = p.property(c)
		case remediate.KindUnitDropIn:
			err = p.dropIn(c)
		default:
			err = fmt.Errorf("%s change %s: not applied by this kaudit", c.Kind, c.Target)
		}
		if err != nil {
			return nil, err
		}
	}
	// Properties first: a failure writing the managed sysctl file then
	// also exercises the restore of server.properties.
	if err := p.editProperties(st); err != nil {
		return nil, err
	}
	if err := p.persistSysctls(st); err != nil {
		return nil, err
	}
	nicFiles, nmWrites, err := renderNICPersist(p.nicPersist, st, runID)
	if err != nil {
		return nil, err
	}
	for _, nf := range nicFiles {
		p.addFile(nf.path, st.files[nf.path], nf.content, nf.mode)
	}
	for _, w := range nmWrites {
		p.setRuntime(w)
	}
	for _, d := range p.dropIns {
		p.addFile(d.path, st.files[d.path], d.content, "0644")
	}
	return p, nil
}

// setRuntime adds a running value to write and journal.
func (p *prepared) setRuntime(w RuntimeWrite) {
	p.params.Runtime = append(p.params.Runtime, w)
	p.runtime = append(p.runtime, remediate.RuntimeValue{Kind: w.Kind.OrSysctl(), Key: w.Key, Before: w.Before, After: w.To})
}

// nic validates a NIC change: its running value when it differs, its
// persistence for renderNICPersist.
func (p *prepared) nic(c remediate.Change, st *readState) error {
	iface, setting, err := nicTarget(c.Kind, c.Target)
	if err != nil {
		return err
	}
	if err := checkNICValue(c.Kind, c.Target, c.To); err != nil {
		return err
	}
	before := st.nic[c.Target]
	if err := checkNICValue(c.Kind, c.Target, before); err != nil {
		return fmt.Errorf("current value of %s: %w", c.Target, err)
	}
	if before != c.To {
		p.setRuntime(RuntimeWrite{Kind: c.Kind, Key: c.Target, Before: before, To: c.To})
	}
	if c.Persist {
		p.nicPersist = append(p.nicPersist, NICSetting{Kind: c.Kind, Iface: iface, Setting: setting, Value: c.To, Path: c.PersistPath, Match: c.PersistMatch, NM: c.NM})
	}
	return nil
}

// sysctl validates a sysctl change: its running value when it differs,
// its boot-time value for persistSysctls.
func (p *prepared) sysctl(c remediate.Change, st *readState) error {
	if err := CheckSysctlKey(c.Target); err != nil {
		return err
	}
	if err := CheckSysctlValue(c.Target, c.To); err != nil {
		return err
	}
	if c.Runtime {
		before := st.runtime[c.Target]
		if err := CheckSysctlValue(c.Target, before); err != nil {
			return fmt.Errorf("current value of %s: %w", c.Target, err)
		}
		if before != c.To {
			p.setRuntime(RuntimeWrite{Key: c.Target, Before: before, To: c.To})
		}
	}
	if c.Persist {
		p.persist[c.Target] = c.To
	}
	return nil
}

// property validates a server.properties change for editProperties.
func (p *prepared) property(c remediate.Change) error {
	if err := CheckPropertiesPath(c.PersistPath); err != nil {
		return err
	}
	if err := props.Check(c.Target, c.To); err != nil {
		return err
	}
	if p.propsByFile[c.PersistPath] == nil {
		p.propsByFile[c.PersistPath] = map[string]string{}
	}
	p.propsByFile[c.PersistPath][c.Target] = c.To
	return nil
}

// addFile adds a file to write with content, and its backup, unless it
// already holds content. mode is a created file's.
func (p *prepared) addFile(path string, fs fileState, content []byte, mode string) {
	if fs.exists && string(content) == string(fs.content) {
		return // already as wanted
	}
	i := len(p.params.Files)
	p.params.Files = append(p.params.Files, FileWrite{Path: path, Existed: fs.exists, OldSHA: fs.sha, Content: content, Mode: mode})
	b := remediate.Backup{Path: path, Existed: fs.exists}
	if fs.exists {
		b.SHA256 = fs.sha
		b.Stored = RunDir(p.runID) + "/" + BackupName(i)
		if m, owner, ok := strings.Cut(fs.mode, ":"); ok {
			b.Mode = "0" + m
			b.Owner = owner
		}
	}
	p.backups = append(p.backups, b)
}

// editProperties edits each server.properties file in memory.
func (p *prepared) editProperties(st *readState) error {
	for _, path := range sortedKeys(p.propsByFile) {
		fs := st.files[path]
		if !fs.exists {
			return fmt.Errorf("%s does not exist on the host: kaudit edits server.properties, it does not create it", path)
		}
		out, _, err := props.Set(fs.content, p.propsByFile[path], props.AppendComment("added by kaudit fix, run "+p.runID))
		if err != nil {
			// props.Set's messages can quote other keys' values, and the
			// file can hold secrets: say only which keys.
			return fmt.Errorf("%s: cannot edit %s safely (the edit's self-check failed)", path, strings.Join(sortedKeys(p.propsByFile[path]), ", "))
		}
		p.addFile(path, fs, out, "")
	}
	return nil
}

// persistSysctls renders the managed sysctl file, unless it already
// holds every boot-time value (then not even its header is rewritten).
func (p *prepared) persistSysctls(st *readState) error {
	if len(p.persist) == 0 {
		return nil
	}
	fs := st.files[sysctld.ManagedPath]
	var existing []byte
	if fs.exists {
		existing = fs.content
		cur, err := sysctld.Parse(existing)
		if err != nil {
			return err
		}
		same := true
		for k, v := range p.persist {
			if cur[k] != v {
				same = false
			}
		}
		if same {
			return nil
		}
	}
	out, err := sysctld.Render(existing, p.persist, p.runID)
	if err != nil {
		return err
	}
	p.addFile(sysctld.ManagedPath, fs, out, ManagedFileMode)
	return nil
}

// sortedKeys lists m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// filesOf lists the files, sysctls and NIC settings a set of changes
// touches.
func filesOf(changes []remediate.Change) (files, keys []string, nics []NICRead) {
	seen := map[string]bool{}
	for _, c := range changes {
		var f string
		switch c.Kind {
		case remediate.KindNICRing, remediate.KindNICOffload:
			if c.Runtime || c.Persist {
				nics = append(nics, NICRead{Kind: c.Kind, Target: c.Target})
			}
			if c.Persist {
				f = nicPersistFile(c)
				nics = append(nics, nmReads(c)...)
			}
		case remediate.KindSysctl:
			if c.Runtime {
				keys = append(keys, c.Target)
			}
			if c.Persist {
				f = sysctld.ManagedPath
			}
		case remediate.KindKafkaProperty, remediate.KindUnitDropIn:
			f = c.PersistPath
		}
		if f != "" && !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files, keys, nics
}
