package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/props"
	"github.com/kaudit/kaudit/remediate/sysctld"
	"github.com/kaudit/kaudit/rules"
)

// verify gathers the host again and checks that every change reads back:
// the running sysctl value, the boot-time value (facts.Persisted: the
// managed file wins, or a file the plan already warned would override it
// at boot), and each property in its file (read again into memory).
func verify(ctx context.Context, h Host, opt Options, changes []remediate.Change) (*facts.Facts, error) {
	f, err := regather(ctx, h, opt, changes)
	if err != nil {
		return nil, err
	}
	var problems []string
	propsByFile := map[string]map[string]string{}
	for _, c := range changes {
		switch c.Kind {
		case remediate.KindSysctl:
			problems = append(problems, verifySysctl(f, c)...)
		case remediate.KindNICRing, remediate.KindNICOffload:
			if p := verifyNIC(f, c); p != "" {
				problems = append(problems, p)
			}
		case remediate.KindUnitDropIn:
			if p := verifyDropIn(f, c); p != "" {
				problems = append(problems, p)
			}
		case remediate.KindKafkaProperty:
			if propsByFile[c.PersistPath] == nil {
				propsByFile[c.PersistPath] = map[string]string{}
			}
			propsByFile[c.PersistPath][c.Target] = c.To
			if f.Kafka != nil && f.Kafka.Config == c.PersistPath {
				if v, ok := f.Kafka.Properties[c.Target]; ok && strings.TrimSpace(v) != c.To {
					problems = append(problems, fmt.Sprintf("%s: the gather reads %q in %s, want %q", c.Target, v, c.PersistPath, c.To))
				}
			}
		}
	}
	if len(propsByFile) > 0 {
		ps, err := verifyProperties(ctx, opt, h.Inv, propsByFile)
		if err != nil {
			return nil, err
		}
		problems = append(problems, ps...)
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	return f, nil
}

// regather gathers the host again, reading the planned sysctl and
// server.properties keys too.
func regather(ctx context.Context, h Host, opt Options, changes []remediate.Change) (*facts.Facts, error) {
	keys := append([]string(nil), opt.SysctlKeys...)
	props := rules.PropertyKeys()
	for _, c := range changes {
		switch c.Kind {
		case remediate.KindSysctl:
			keys = append(keys, c.Target)
		case remediate.KindKafkaProperty:
			props = append(props, c.Target)
		}
	}
	res := audit.Scan(ctx, []inventory.Host{h.Inv}, audit.Options{
		Concurrency: 1, Timeout: opt.Timeout, ConnectTimeout: opt.ConnectTimeout,
		SysctlKeys: keys, Files: opt.Files, PropertyKeys: props, Runner: opt.Runner, Probes: opt.Probes,
	})
	if len(res) != 1 {
		return nil, errors.New("re-gather returned no result")
	}
	if res[0].Err != nil {
		return nil, fmt.Errorf("re-gather: %s: %s", res[0].Err.Kind, res[0].Err.Msg)
	}
	return res[0].Facts, nil
}

// verifySysctl checks a sysctl change's running and boot-time values.
func verifySysctl(f *facts.Facts, c remediate.Change) []string {
	var problems []string
	if c.Runtime {
		if got := sysctld.Fold(f.Sysctl[c.Target]); got != c.To {
			problems = append(problems, fmt.Sprintf("%s is %q at runtime, want %q", c.Target, got, c.To))
		}
	}
	if !c.Persist {
		return problems
	}
	// A later file overriding ours was warned about in the plan; the
	// managed file itself was checked by SHA-256.
	p, ok := f.Persisted[c.Target]
	switch {
	case !ok:
		problems = append(problems, fmt.Sprintf("%s: no boot-time value found (want %q from %s)", c.Target, c.To, sysctld.ManagedPath))
	case p.File == sysctld.ManagedPath && sysctld.Fold(p.Value) != c.To:
		problems = append(problems, fmt.Sprintf("%s: %s says %q, want %q", c.Target, p.File, p.Value, c.To))
	case p.File != sysctld.ManagedPath && sysctld.Fold(p.Value) != c.To && !sysctld.WinsOver(p.File, sysctld.ManagedPath):
		problems = append(problems, fmt.Sprintf("%s: boot-time value %q from %s, want %q from %s", c.Target, p.Value, p.File, c.To, sysctld.ManagedPath))
	}
	return problems
}

// verifyProperties reads the properties files again and checks that
// each changed key reads back.
func verifyProperties(ctx context.Context, opt Options, h inventory.Host, propsByFile map[string]map[string]string) ([]string, error) {
	files := sortedKeys(propsByFile)
	st, err := read(ctx, opt, h, files, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, path := range files {
		fs := st.files[path]
		if !fs.exists {
			problems = append(problems, path+" is gone")
			continue
		}
		entries, err := props.Parse(fs.content)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s does not parse: %v", path, err))
			continue
		}
		for _, k := range sortedKeys(propsByFile[path]) {
			if e, ok := entries[k]; !ok || e.Value != propsByFile[path][k] {
				problems = append(problems, fmt.Sprintf("%s: %s does not read back as %q", path, k, propsByFile[path][k]))
			}
		}
	}
	return problems, nil
}

// verifyNIC checks a NIC change against the re-gathered facts ("" when
// it took): the running value, and for a persisted change what the host
// now sets at boot (facts.NIC.Boot, when gathered). The files were
// checked by SHA-256 when written.
func verifyNIC(f *facts.Facts, c remediate.Change) string {
	iface, setting, _ := nicTarget(c.Kind, c.Target)
	for _, n := range f.NICs {
		if n.Name != iface {
			continue
		}
		if p := verifyNICRunning(n, c, setting); p != "" || !c.Persist || n.Boot == nil {
			return p
		}
		switch bv, ok := n.Boot.Settings[setting]; {
		case !ok:
			return fmt.Sprintf("%s: nothing sets it at boot after the change (want %s from %s)", c.Target, c.To, cmp.Or(nicPersistFile(c), c.PersistPath))
		case bv.Value != c.To:
			return fmt.Sprintf("%s: %s sets %s at boot, want %s from %s", c.Target, bv.Source, bv.Value, c.To, cmp.Or(nicPersistFile(c), c.PersistPath))
		}
		return ""
	}
	return fmt.Sprintf("%s: interface not in the re-gathered facts", c.Target)
}

// verifyNICRunning checks the running value of a NIC change on n.
func verifyNICRunning(n facts.NIC, c remediate.Change, setting string) string {
	if c.Kind == remediate.KindNICRing {
		if n.Ring == nil {
			return fmt.Sprintf("%s: ring sizes not readable after the change (%s)", c.Target, n.RingErr)
		}
		got, _ := n.Ring.Size(setting)
		if strconv.Itoa(got) != c.To {
			return fmt.Sprintf("%s is %d, want %s", c.Target, got, c.To)
		}
		return ""
	}
	ft, ok := n.Features[setting]
	if !ok {
		return fmt.Sprintf("%s: feature not reported after the change", c.Target)
	}
	if ft.On != (c.To == "on") {
		return fmt.Sprintf("%s is %s, want %s", c.Target, map[bool]string{true: "on", false: "off"}[ft.On], c.To)
	}
	return ""
}
