package ui

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// typist is the prompt's writer: it keeps the prompt and, once the prompt
// is out, types line on the terminal, as a user would.
type typist struct {
	ptmx   *os.File
	line   string
	prompt strings.Builder
	once   sync.Once
}

func (ty *typist) Write(p []byte) (int, error) {
	ty.prompt.Write(p)
	ty.once.Do(func() { _, _ = ty.ptmx.Write([]byte(ty.line)) })
	return len(p), nil
}

// readPassword on a pty: the line typed after the prompt comes back
// without its newline, the terminal does not echo it, and echo is on
// again afterwards. An empty line is refused.
func TestReadPassword(t *testing.T) {
	for _, c := range []struct {
		name, typed, want, err string
	}{
		{"a password", "s3cret word\n", "s3cret word", ""},
		{"an empty line", "\n", "", "no password given"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Skipf("no pty: %v", err)
			}
			defer ptmx.Close()
			defer tty.Close()
			echo := make(chan string, 64)
			go func() {
				b := make([]byte, 256)
				for {
					n, err := ptmx.Read(b)
					echo <- string(b[:n])
					if err != nil {
						close(echo)
						return
					}
				}
			}()
			ty := &typist{ptmx: ptmx, line: c.typed}
			got, err := readPassword(ty, "PW: ", int(tty.Fd()))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
			} else if err != nil || string(got) != c.want {
				t.Fatalf("readPassword = %q, %v; want %q", got, err, c.want)
			}
			if ty.prompt.String() != "PW: \n" {
				t.Errorf("prompt written %q", ty.prompt.String())
			}
			// Echo is back on: a line typed now is echoed.
			if _, err := ptmx.Write([]byte("after\n")); err != nil {
				t.Fatal(err)
			}
			out := ""
			deadline := time.After(5 * time.Second)
			for !strings.Contains(out, "after") {
				select {
				case s := <-echo:
					out += s
				case <-deadline:
					t.Fatalf("echo not restored: terminal output %q", out)
				}
			}
			if c.want != "" && strings.Contains(out, c.want) {
				t.Errorf("the password was echoed: %q", out)
			}
		})
	}
}
