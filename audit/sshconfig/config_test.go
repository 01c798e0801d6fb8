package sshconfig

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// writeTree writes files (name → content, "@DIR@" replaced by the temp
// directory) and returns the directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(body, "@DIR@", dir)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func copyTestdata(t *testing.T, dir string) {
	t.Helper()
	for _, f := range []string{"rhel9-ssh_config", "ssh_config.d/50-redhat.conf", "crypto-policies/openssh.config"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, f)
		_ = os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, bytes.ReplaceAll(b, []byte("@DIR@"), []byte(dir)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

type want struct {
	hostName, user, jump, strict, alias string
	port                                int
	ids                                 []string
	timeout                             time.Duration
	only                                Tri
}

var resolveCases = []struct {
	name  string
	conf  string
	hosts map[string]want
	warns int
}{
	{
		name: "first obtained wins, negation, no comma splitting in Host",
		conf: `
Host web* !web9
  User alice
  Port 2201
Host a,b
  Port 1001
Host *
  User nobody
  Port 22
  ConnectTimeout 1m30s
`,
		hosts: map[string]want{
			"web1": {hostName: "web1", user: "alice", port: 2201, timeout: 90 * time.Second},
			"web9": {hostName: "web9", user: "nobody", port: 22, timeout: 90 * time.Second},
			"a":    {hostName: "a", user: "nobody", port: 22, timeout: 90 * time.Second},
		},
	},
	{
		name: "HostName with %h, Match host sees HostName, Match final second pass",
		conf: `
Match host 10.1.*
  User early
Host b1
  HostName 10.1.2.%h
Host b2
  HostName %h.example.com
Match final host 10.1.*
  Port 1005
Host *.example.com
  User viafinal
`,
		hosts: map[string]want{
			"b1": {hostName: "10.1.2.b1", user: "early", port: 1005},
			"b2": {hostName: "b2.example.com", user: "viafinal"},
		},
	},
	{
		name: "Match user, localuser, originalhost, negated criteria",
		conf: `
Host h*
  User ops
Match user ops originalhost h1
  Port 2001
Match !user ops
  Port 2002
Match localuser nosuchlocal
  Port 2003
Match originalhost H2
  Port 2004
`,
		hosts: map[string]want{
			"h1": {hostName: "h1", user: "ops", port: 2001},
			"h2": {hostName: "h2", user: "ops", port: 2004},
			"x":  {hostName: "x", port: 2002},
		},
	},
	{
		name: "unsupported Match exec: block does not apply, does not bleed, one warning",
		conf: `
Host e1
  Port 3001
Match exec "test -e /nonexistent" host e*
  Port 3002
  User fromexec
Host e*
  User plain
`,
		hosts: map[string]want{
			"e1": {hostName: "e1", user: "plain", port: 3001},
			"e2": {hostName: "e2", user: "plain"},
		},
		warns: 1,
	},
	{
		name: "ProxyJump multi-hop, none, identity files accumulate, keyword=value and quotes",
		conf: `
Host direct
  ProxyJump none
Host *.inner
  ProxyJump ops@bastion1:2222,bastion2
  IdentityFile "/keys/with space"
  IdentitiesOnly=yes
Host *
  ProxyJump fallback
  IdentityFile /keys/common # trailing comment
  HostKeyAlias ha-%h
  StrictHostKeyChecking accept-new
`,
		hosts: map[string]want{
			"direct":  {hostName: "direct", ids: []string{"/keys/common"}, alias: "ha-%h", strict: "accept-new"},
			"k.inner": {hostName: "k.inner", jump: "ops@bastion1:2222,bastion2", ids: []string{"/keys/with space", "/keys/common"}, only: Yes, alias: "ha-%h", strict: "accept-new"},
			"other":   {hostName: "other", jump: "fallback", ids: []string{"/keys/common"}, alias: "ha-%h", strict: "accept-new"},
		},
	},
	{
		name: "Include with glob inside Host applies only there; active state restored after",
		conf: `
Host inc*
  Include @DIR@/conf.d/*.conf
  Port 4001
Host *
  User after
`,
		hosts: map[string]want{
			"inc1": {hostName: "inc1", user: "fromA", port: 4001, strict: "no"},
			"zzz":  {hostName: "zzz", user: "after"},
		},
	},
}

var includeFiles = map[string]string{
	"conf.d/a.conf": "User fromA\nHost nothing\n  Port 9\n",
	"conf.d/b.conf": "StrictHostKeyChecking off\n",
}

func TestResolve(t *testing.T) {
	for _, tc := range resolveCases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"config": tc.conf}
			for k, v := range includeFiles {
				files[k] = v
			}
			dir := writeTree(t, files)
			var warns []string
			c, err := Load(Options{File: filepath.Join(dir, "config"), LocalUser: "me", Home: dir, Warn: func(s string) { warns = append(warns, s) }})
			if err != nil {
				t.Fatal(err)
			}
			for host, w := range tc.hosts {
				h, err := c.Resolve(Query{Host: host})
				if err != nil {
					t.Fatalf("%s: %v", host, err)
				}
				if w.user == "" {
					w.user = "me"
				}
				got := want{hostName: h.HostName, user: h.User, jump: h.ProxyJump, strict: h.StrictHostKeyChecking,
					alias: h.HostKeyAlias, port: h.Port, ids: h.IdentityFiles, timeout: h.ConnectTimeout, only: h.IdentitiesOnly}
				if !reflect.DeepEqual(got, w) {
					t.Errorf("%s:\n got %+v\nwant %+v", host, got, w)
				}
			}
			if len(warns) != tc.warns {
				t.Errorf("warnings %q, want %d", warns, tc.warns)
			}
		})
	}
}

func TestStockRHEL9(t *testing.T) {
	dir := t.TempDir()
	copyTestdata(t, dir)
	user := filepath.Join(dir, "user_config")
	if err := os.WriteFile(user, []byte("Host broker*\n  User kafka\n  ProxyJump bastion\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var warns []string
	c, err := Load(Options{Home: dir, LocalUser: "me", System: filepath.Join(dir, "rhel9-ssh_config"), Warn: func(s string) { warns = append(warns, s) }})
	if err != nil {
		t.Fatal(err)
	}
	c.files[0].path = user // ~/.ssh/config
	h, err := c.Resolve(Query{Host: "broker1"})
	if err != nil {
		t.Fatal(err)
	}
	if h.User != "kafka" || h.ProxyJump != "bastion" || h.Port != 0 || len(warns) != 0 {
		t.Errorf("got %+v, warnings %q", h, warns)
	}
}

func TestErrorsNamePlace(t *testing.T) {
	for conf, wantMsg := range map[string]string{
		"Host x\n  Port 99999\n":                  "config:2: Port: 99999 is out of range",
		"Host *\n  ConnectTimeout 5x\n":           "config:2: connecttimeout",
		"Match all host x\n  Port 1\n":            "config:1: Match: 'all' cannot be combined",
		"Host *\n  IdentityFile %z\n":             "config:2: unknown token %z",
		"Host *\n  User \"unclosed\n":             "config:2: unterminated quote",
		"Host *\n  StrictHostKeyChecking maybe\n": "config:2: StrictHostKeyChecking",
	} {
		dir := writeTree(t, map[string]string{"config": conf})
		c, err := Load(Options{File: filepath.Join(dir, "config"), Home: dir, LocalUser: "me"})
		if err == nil {
			_, err = c.Resolve(Query{Host: "x"})
		}
		if err == nil || !strings.Contains(err.Error(), wantMsg) {
			t.Errorf("%q: err %v, want %q", conf, err, wantMsg)
		}
	}
}

func TestTokens(t *testing.T) {
	dir := writeTree(t, map[string]string{"config": `
Host t
  HostName real.example
  User ruser
  Port 2022
  IdentityFile ~/k_%h_%p_%r_%n_%u_%%_${KAUDIT_TEST_ENV}
  UserKnownHostsFile ~/.ssh/kh_%k none
  IdentityAgent $KAUDIT_TEST_ENV
  HostKeyAlias hka
`})
	t.Setenv("KAUDIT_TEST_ENV", "envv")
	c, err := Load(Options{File: filepath.Join(dir, "config"), Home: "/home/me", LocalUser: "me"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.Resolve(Query{Host: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/home/me/k_real.example_2022_ruser_t_me_%_envv"}; !reflect.DeepEqual(h.IdentityFiles, want) {
		t.Errorf("IdentityFile %q, want %q", h.IdentityFiles, want)
	}
	if want := []string{"/home/me/.ssh/kh_hka"}; !reflect.DeepEqual(h.UserKnownHostsFiles, want) {
		t.Errorf("UserKnownHostsFile %q, want %q", h.UserKnownHostsFiles, want)
	}
	if h.IdentityAgent != "envv" {
		t.Errorf("IdentityAgent %q", h.IdentityAgent)
	}
	// the inventory's user and port are presets: %r and %p see them
	h, err = c.Resolve(Query{Host: "t", User: "inv", Port: 2300})
	if err != nil {
		t.Fatal(err)
	}
	if want := "/home/me/k_real.example_2300_inv_t_me_%_envv"; h.IdentityFiles[0] != want {
		t.Errorf("with presets: %q, want %q", h.IdentityFiles[0], want)
	}
}

// TestAgainstOpenSSH compares the evaluation with `ssh -G` on this machine
// for every case above (skipped where OpenSSH is not installed).
func TestAgainstOpenSSH(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("ssh not installed")
	}
	home, _ := os.UserHomeDir()
	for _, tc := range resolveCases {
		files := map[string]string{"config": tc.conf}
		for k, v := range includeFiles {
			files[k] = v
		}
		dir := writeTree(t, files)
		cfg := filepath.Join(dir, "config")
		c, err := Load(Options{File: cfg, Home: home})
		if err != nil {
			t.Fatal(err)
		}
		for host := range tc.hosts {
			compareG(t, c, cfg, host)
		}
	}
	dir := t.TempDir()
	copyTestdata(t, dir)
	cfg := filepath.Join(dir, "rhel9-ssh_config")
	c, err := Load(Options{File: cfg, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	compareG(t, c, cfg, "broker1")
}

func compareG(t *testing.T, c *Config, cfg, host string) {
	t.Helper()
	out, err := exec.Command("ssh", "-G", "-F", cfg, host).Output()
	if err != nil {
		t.Fatalf("ssh -G %s: %v", host, err)
	}
	g := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		g[k] = append(g[k], v)
	}
	h, err := c.Resolve(Query{Host: host})
	if err != nil {
		t.Fatalf("%s: %v", host, err)
	}
	strict := map[string]string{"": "ask", "yes": "true", "no": "false", "ask": "ask", "accept-new": "accept-new"}[h.StrictHostKeyChecking]
	mine := map[string]string{
		"hostname": h.HostName, "user": h.User, "port": itoa(h.portOr22()),
		"proxyjump": h.ProxyJump, "hostkeyalias": h.HostKeyAlias, "stricthostkeychecking": strict,
		"connecttimeout": secsOrNone(h.ConnectTimeout), "identitiesonly": yesNo(h.IdentitiesOnly),
	}
	for k, v := range mine {
		gv := strings.Join(g[k], ",")
		if v != gv {
			t.Errorf("%s %s: kaudit %q, ssh -G %q", cfg, host, v, gv)
		}
	}
	if len(h.IdentityFiles) > 0 && !reflect.DeepEqual(h.IdentityFiles, g["identityfile"]) {
		t.Errorf("%s %s: identityfile kaudit %q, ssh -G %q", cfg, host, h.IdentityFiles, g["identityfile"])
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func secsOrNone(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	return strconv.Itoa(int(d / time.Second))
}

func yesNo(t Tri) string {
	if t == Yes {
		return "yes"
	}
	return "no"
}

func TestMatchPattern(t *testing.T) {
	for _, c := range []struct {
		s, p string
		want bool
	}{
		{"web1", "web*", true}, {"web1", "w?b1", true}, {"web1", "*1", true}, {"web1", "*", true},
		{"", "*", true}, {"", "?", false}, {"web", "web?", false}, {"a.b.c", "*.c", true},
		{"abcabd", "*abd", true}, {"Web1", "web*", false},
		{strings.Repeat("a", 60), strings.Repeat("*a", 30) + "b", false}, // no exponential backtracking
	} {
		if got := matchPattern(c.s, c.p); got != c.want {
			t.Errorf("matchPattern(%q, %q) = %v", c.s, c.p, got)
		}
	}
}
