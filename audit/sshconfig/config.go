package sshconfig

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/kaudit/kaudit/internal/located"
)

// SystemFile is OpenSSH's system-wide client configuration.
const SystemFile = "/etc/ssh/ssh_config"

// Options say which files to read.
type Options struct {
	// File replaces the user's ~/.ssh/config and the system file, like
	// `ssh -F FILE` (kaudit's --ssh-config).
	File string
	// Home is the passwd home directory of the user kaudit runs as ("" =
	// looked up): ~/.ssh/config lives there and ~ expands to it.
	Home string
	// LocalUser is that user's login name ("" = looked up).
	LocalUser string
	// System overrides SystemFile (tests).
	System string
	// Warn receives each warning once (an unknown keyword, a Match
	// criterion kaudit does not evaluate). Nil discards them.
	Warn func(string)
}

// Config is a set of configuration files, read once and evaluated per host.
type Config struct {
	opt   Options
	files []source

	mu     sync.Mutex
	cache  map[string]parsed
	warned map[string]bool
}

type source struct {
	path string
	user bool // user configuration: relative Includes are under ~/.ssh, permissions are checked
}

type parsed struct {
	dirs []directive
	err  error
}

// Load prepares the configuration and reads its top-level files at once, so
// a syntax error is reported before any host is contacted.
func Load(opt Options) (*Config, error) {
	if opt.Home == "" || opt.LocalUser == "" {
		u, err := user.Current()
		if err != nil {
			return nil, located.Hint(fmt.Errorf("ssh_config: cannot look up the current user: %v", err), "set HOME and USER")
		}
		opt.Home = cmp.Or(opt.Home, u.HomeDir)
		opt.LocalUser = cmp.Or(opt.LocalUser, u.Username)
	}
	opt.System = cmp.Or(opt.System, SystemFile)
	c := &Config{opt: opt, cache: map[string]parsed{}, warned: map[string]bool{}}
	if opt.File != "" {
		if _, err := os.Stat(opt.File); err != nil {
			return nil, fmt.Errorf("--ssh-config %s: %v", opt.File, located.PathCause(err))
		}
		c.files = []source{{path: opt.File, user: true}}
	} else {
		c.files = []source{{path: filepath.Join(opt.Home, ".ssh", "config"), user: true}, {path: opt.System}}
	}
	for _, f := range c.files {
		if _, err := c.read(f); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Files lists the top-level files in the order they are read.
func (c *Config) Files() []string {
	var out []string
	for _, f := range c.files {
		out = append(out, f.path)
	}
	return out
}

// read parses a file once; a missing file is empty.
func (c *Config) read(f source) ([]directive, error) {
	c.mu.Lock()
	p, ok := c.cache[f.path]
	c.mu.Unlock()
	if ok {
		return p.dirs, p.err
	}
	data, err := os.ReadFile(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && f.path != c.opt.File:
		p = parsed{}
	case err != nil:
		p = parsed{err: fmt.Errorf("ssh_config %s: %v", f.path, located.PathCause(err))}
	default:
		if f.user {
			err = checkPerm(f.path)
		}
		if err == nil {
			p.dirs, err = parseFile(f.path, data)
		}
		p.err = err
	}
	c.mu.Lock()
	c.cache[f.path] = p
	c.mu.Unlock()
	return p.dirs, p.err
}

// checkPerm refuses a user configuration that someone else could have
// written, as ssh does ("Bad owner or permissions").
func checkPerm(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("ssh_config %s: %v", path, located.PathCause(err))
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if (st.Uid != 0 && int(st.Uid) != os.Getuid()) || fi.Mode().Perm()&0o022 != 0 {
		return located.Hint(fmt.Errorf("ssh_config %s: bad owner or permissions (ssh refuses it too)", path), "make it owned by you and not writable by group or others: chmod go-w "+path)
	}
	return nil
}

func (c *Config) warn(key, msg string) {
	c.mu.Lock()
	seen := c.warned[key]
	c.warned[key] = true
	c.mu.Unlock()
	if !seen && c.opt.Warn != nil {
		c.opt.Warn(msg)
	}
}
