// Package formats is the one registry of output formats: the report's,
// the diff's and the what-if's each keep a Registry of their writers,
// registered by name from the file that implements them, whose sorted
// names build the --format help and the "unknown format" error.
package formats

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Registry maps format names to writers of type W (a renderer function).
type Registry[W any] struct {
	what string // "format", "diff format": names the registry in errors
	m    map[string]W
}

// New is an empty registry; what names it in errors ("diff format").
func New[W any](what string) *Registry[W] {
	return &Registry[W]{what: what, m: map[string]W{}}
}

// Register adds a format; called from each format file's init. A name
// registered twice is a build mistake: it panics.
func (r *Registry[W]) Register(name string, w W) {
	if _, dup := r.m[name]; dup {
		panic("formats: " + r.what + " registered twice: " + name)
	}
	r.m[name] = w
}

// Names lists the registered names, sorted (a new slice each call).
func (r *Registry[W]) Names() []string {
	return slices.Sorted(maps.Keys(r.m))
}

// Lookup is the writer registered as name, or an error naming the known
// ones.
func (r *Registry[W]) Lookup(name string) (W, error) {
	w, ok := r.m[name]
	if !ok {
		return w, fmt.Errorf("unknown %s %q (known: %s)", r.what, name, strings.Join(r.Names(), ", "))
	}
	return w, nil
}

// JSON writes v as indented JSON: the json writer of the diff and the
// what-if.
func JSON[T any](w io.Writer, v T) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
