package inventory

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/kaudit/kaudit/internal/located"
)

// Select returns the hosts matching limit, in inventory order.
//
// limit is a comma-separated list of terms; "" selects every host. A term
// is a group name, a host name, or a glob (path.Match syntax: * ? [...])
// matched against host names and group names. A term starting with '!'
// excludes what it matches; a limit made only of exclusions starts from
// every host. "all" selects every host unless a group of that name exists.
// A term that matches nothing is an error naming it (a typo in --limit
// must not silently audit fewer hosts), and so is a limit that leaves no
// host selected.
func (inv *Inventory) Select(limit string) ([]Host, error) {
	if strings.TrimSpace(limit) == "" {
		return append([]Host(nil), inv.Hosts...), nil
	}
	include := map[string]bool{}
	exclude := map[string]bool{}
	var errs []error
	anyInclude := false
	for _, raw := range strings.Split(limit, ",") {
		term := strings.TrimSpace(raw)
		if term == "" {
			continue
		}
		neg := strings.HasPrefix(term, "!")
		if neg {
			term = strings.TrimSpace(term[1:])
		} else {
			anyInclude = true
		}
		if term == "" || strings.HasPrefix(term, "&") {
			errs = append(errs, located.Hint(fmt.Errorf("limit: unsupported term %q", strings.TrimSpace(raw)), "use NAME, GLOB or !NAME, separated by commas"))
			continue
		}
		matched, err := inv.match(term)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(matched) == 0 {
			if _, isGroup := inv.Groups[term]; isGroup {
				errs = append(errs, fmt.Errorf("limit: group %q has no hosts", term))
			} else {
				errs = append(errs, located.Hint(fmt.Errorf("limit: %q matches no host or group in %s", term, inv.Path), "check the spelling; globs use * and ?"))
			}
			continue
		}
		for _, h := range matched {
			if neg {
				exclude[h] = true
			} else {
				include[h] = true
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var out []Host
	for _, h := range inv.Hosts {
		if (!anyInclude || include[h.Name]) && !exclude[h.Name] {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("limit: %q selects no hosts", limit)
	}
	return out, nil
}

// match returns the names of the hosts a single term selects.
func (inv *Inventory) match(term string) ([]string, error) {
	isGlob := strings.ContainsAny(term, "*?[")
	if isGlob {
		if _, err := path.Match(term, ""); err != nil {
			return nil, fmt.Errorf("limit: invalid glob %q: %v", term, err)
		}
	}
	if term == "all" {
		if _, ok := inv.Groups["all"]; !ok {
			names := make([]string, len(inv.Hosts))
			for i, h := range inv.Hosts {
				names[i] = h.Name
			}
			return names, nil
		}
	}
	like := func(name string) bool {
		if isGlob {
			ok, _ := path.Match(term, name)
			return ok
		}
		return name == term
	}
	var out []string
	for _, h := range inv.Hosts {
		hit := like(h.Name)
		for _, g := range h.Groups {
			hit = hit || like(g)
		}
		if hit {
			out = append(out, h.Name)
		}
	}
	return out, nil
}
