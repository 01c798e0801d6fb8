package report

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"os"
	"reflect"
	"sync"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/fanout"
	"github.com/kaudit/kaudit/internal/located"
)

// Spool holds hosts' facts out of memory, as the JSON the report would
// print for them, in one temporary file: a scan of 10,000 hosts keeps
// each host's findings and ≈ 1 KB of what the fleet rules read instead of
// its whole fact set (pipeline.Config.SpoolFacts). The file is removed
// from its directory as soon as it is created, so nothing is left behind
// when kaudit ends, however it ends; its space is freed on Close (or when
// the process exits).
type Spool struct {
	mu    sync.Mutex
	f     *os.File
	end   int64
	views bool // Put keeps what the formats other than JSON read (viewFacts)
	// alike: the views kept, by a hash of their JSON, so that hosts with
	// equal ones share one (10,000 simulated hosts: 10 MB of views).
	alike map[uint64][]*facts.Facts
	seed  maphash.Seed
}

// SpooledFacts is where one host's facts are in a Spool, and the few of
// them the formats other than JSON read (viewFacts), kept in memory.
type SpooledFacts struct {
	spool *Spool
	off   int64
	n     int
	view  *facts.Facts
}

// NewSpool creates a spool in dir (os.TempDir() when ""), for a report
// rendered in any format.
func NewSpool(dir string) (*Spool, error) { return NewSpoolFor(dir, true) }

// NewSpoolFor is NewSpool for a report rendered as JSON only when views
// is false: a host put in it keeps nothing in memory for the other
// formats (viewFacts, ≈ 1 KB a host), and rendering it in one of them is
// an error (Render).
func NewSpoolFor(dir string, views bool) (*Spool, error) {
	f, err := os.CreateTemp(dir, "kaudit-facts-*.json")
	if n := fanout.LocalFault(err); n != 0 {
		return nil, located.Hint(fmt.Errorf("facts spool: %w (on kaudit's side: %v)", err, n), fanout.LocalFaultHint)
	}
	if err != nil {
		return nil, located.Hint(fmt.Errorf("facts spool: %w", err), "set TMPDIR to a writable directory")
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("facts spool: %w", err)
	}
	return &Spool{f: f, views: views, alike: map[uint64][]*facts.Facts{}, seed: maphash.MakeSeed()}, nil
}

// Put appends f's JSON encoding (as json.Marshal writes it, the bytes the
// JSON report prints) and says where it is, keeping what the other
// formats read of f. It is safe for concurrent use.
func (s *Spool) Put(f *facts.Facts) (*SpooledFacts, error) {
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.f.WriteAt(b, s.end); err != nil {
		return nil, fmt.Errorf("facts spool: %w", err)
	}
	ref := &SpooledFacts{spool: s, off: s.end, n: len(b)}
	if s.views {
		ref.view = s.share(viewFacts(f))
	}
	s.end += int64(len(b))
	return ref, nil
}

// maxAlikeViews bounds the views kept under one hash.
const maxAlikeViews = 4

// share is v, or an equal view (reflect.DeepEqual) another host keeps;
// views are read-only. s.mu is held.
func (s *Spool) share(v *facts.Facts) *facts.Facts {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	h := maphash.Bytes(s.seed, b)
	for _, g := range s.alike[h] {
		if reflect.DeepEqual(g, v) {
			return g
		}
	}
	if len(s.alike[h]) < maxAlikeViews {
		s.alike[h] = append(s.alike[h], v)
	}
	return v
}

// Close frees the spool's space; its facts cannot be read afterwards.
func (s *Spool) Close() error { return s.f.Close() }

// appendJSON appends the facts' JSON encoding to dst.
func (sf *SpooledFacts) appendJSON(dst []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, make([]byte, sf.n)...)
	if _, err := sf.spool.f.ReadAt(dst[start:], sf.off); err != nil {
		return dst[:start], fmt.Errorf("facts spool: %w", err)
	}
	return dst, nil
}

// Load decodes the facts back (for a reader that needs them as values).
func (sf *SpooledFacts) Load() (*facts.Facts, error) {
	b, err := sf.appendJSON(nil)
	if err != nil {
		return nil, err
	}
	var f facts.Facts
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("facts spool: %w", err)
	}
	return &f, nil
}
