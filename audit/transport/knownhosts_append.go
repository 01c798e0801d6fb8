package transport

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// appendResult says what record did.
type appendResult int

const (
	appended   appendResult = iota // the line was written
	wasPresent                     // the same key was already there (another run wrote it)
	conflicts                      // a different key for the name appeared meanwhile: nothing written
)

// record appends "name key" to the file (the name hashed when asked), safely against other goroutines
// and other processes doing the same: an exclusive flock on the file, then
// the lines other writers appended since this file was indexed are read and
// indexed, the name is checked again, and the line is written with one
// write(2) on an O_APPEND descriptor. A reader never sees half a line and
// two writers never interleave.
func (f *knownFile) record(name string, key ssh.PublicKey, hashed bool) (appendResult, []*knownLine, error) {
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return 0, nil, err
	}
	fh, err := os.OpenFile(f.path, os.O_APPEND|os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return 0, nil, err
	}
	defer fh.Close()
	if err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX); err != nil {
		return 0, nil, fmt.Errorf("lock %s: %w", f.path, err)
	}
	defer syscall.Flock(int(fh.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it too

	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := fh.Stat()
	if err != nil {
		return 0, nil, err
	}
	if err := f.catchUp(fh, st.Size()); err != nil {
		return 0, nil, err
	}
	if have := f.ix.lookup(name); len(have) > 0 {
		for _, l := range have {
			if l.marker == "" && l.blob == string(key.Marshal()) {
				return wasPresent, have, nil
			}
		}
		if plainLines(have) > 0 {
			return conflicts, have, nil
		}
	}
	pattern := name
	if hashed {
		pattern = knownhosts.HashHostname(name)
	}
	line := knownhosts.Line([]string{pattern}, key) + "\n"
	sep := ""
	if f.ix.size > 0 && !endsWithNewline(fh, f.ix.size) {
		sep = "\n" // end the last line, which the index already counted
	}
	if _, err := fh.Write([]byte(sep + line)); err != nil { // one write: O_APPEND makes it atomic against other appenders
		return 0, nil, err
	}
	f.ix.size += int64(len(sep))
	f.ix.add(f.path, []byte(line))
	f.cache.Clear()
	return appended, nil, nil
}

// catchUp indexes what other writers appended after the indexed size.
// Called with f.mu and the file lock held.
func (f *knownFile) catchUp(fh *os.File, size int64) error {
	if size < f.ix.size { // truncated or replaced under us: start again
		f.ix = newKnownIndex()
	}
	if size > f.ix.size {
		buf := make([]byte, size-f.ix.size)
		if _, err := fh.ReadAt(buf, f.ix.size); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		f.ix.add(f.path, buf)
		f.cache.Clear()
	}
	return f.ix.err
}

func endsWithNewline(fh *os.File, size int64) bool {
	b := make([]byte, 1)
	if _, err := fh.ReadAt(b, size-1); err != nil {
		return true
	}
	return b[0] == '\n'
}

func plainLines(ls []*knownLine) int {
	n := 0
	for _, l := range ls {
		if l.marker == "" {
			n++
		}
	}
	return n
}
