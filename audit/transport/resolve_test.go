package transport

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/sshconfig"
)

const precedenceConf = `
Host web
  HostName web.example
  User cfguser
  Port 2201
  IdentityFile /cfg/key
  IdentitiesOnly yes
  IdentityAgent none
  ProxyJump ops@jump:2222,jump2
  UserKnownHostsFile /cfg/known
  StrictHostKeyChecking accept-new
  HostKeyAlias webalias
  ConnectTimeout 7
  ServerAliveInterval 3
Host jump
  HostName jump.example
  IdentityFile /cfg/jumpkey
Host jump2
  HostName jump2.example
  User j2
  ProxyJump ignored-for-later-hops
Host pc
  ProxyCommand ssh -W %h:%p gw
Host loop
  ProxyJump loop
`

// epSum is the part of an endpoint a precedence case checks.
type epSum struct {
	addr, keyName, user, agent, policy string
	ids, known                         []string
	timeout                            time.Duration
}

func summary(eps []endpoint) []epSum {
	var out []epSum
	for _, e := range eps {
		out = append(out, epSum{e.addr, e.hostKeyName, e.user, e.agent, e.policy, e.ids, append(append([]string{}, e.knownHosts.User...), e.knownHosts.Global...), e.timeout})
	}
	return out
}

func TestRoutePrecedence(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(p, []byte(precedenceConf), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := sshconfig.Load(sshconfig.Options{File: p, Home: "/home/me", LocalUser: "me"})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_AUTH_SOCK", "/agent.sock")
	c := NewSSH()
	c.Config = cfg
	inv := Target{Name: "web", Address: "web", Port: 22, User: "me", UseAgent: true, KnownHosts: []string{"/inv/known"},
		HostKeyPolicy: PolicyStrict, ConnectTimeout: 10 * time.Second}
	global := []string{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"}
	jumpHops := []epSum{
		{"jump.example:2222", "jump.example:2222", "ops", "/agent.sock", PolicyStrict, []string{"/cfg/jumpkey"}, append([]string{"/inv/known"}, global...), 10 * time.Second},
		{"jump2.example:22", "jump2.example:22", "j2", "/agent.sock", PolicyStrict, DefaultIdentityFiles(), append([]string{"/inv/known"}, global...), 10 * time.Second},
	}
	fromConfig := epSum{"web.example:2201", "webalias:22", "cfguser", "", PolicyAcceptNew, []string{"/cfg/key"}, append([]string{"/cfg/known"}, global...), 7 * time.Second}

	for _, tc := range []struct {
		name string
		mod  func(*Target)
		want []epSum
	}{
		{"nothing given: ssh_config fills everything", func(*Target) {}, append(jumpHops, fromConfig)},
		{"inventory wins per setting", func(t *Target) {
			t.Address, t.Port, t.User, t.IdentityFiles = "10.0.0.9", 2300, "invuser", []string{"/inv/key"}
			t.UseAgent, t.HostKeyPolicy, t.ConnectTimeout, t.ProxyJump = true, PolicyStrict, 3*time.Second, ""
			t.Given = Given{Address: true, Port: true, User: true, IdentityFiles: true, UseAgent: true, KnownHosts: true, HostKeyPolicy: true, ProxyJump: true, ConnectTimeout: true}
		}, []epSum{{"10.0.0.9:2300", "webalias:22", "invuser", "/agent.sock", PolicyStrict, []string{"/inv/key"}, []string{"/inv/known"}, 3 * time.Second}}},
		{"ssh_config: false", func(t *Target) { t.NoSSHConfig = true },
			[]epSum{{"web:22", "web:22", "me", "/agent.sock", PolicyStrict, DefaultIdentityFiles(), []string{"/inv/known"}, 10 * time.Second}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := inv
			tc.mod(&tg)
			eps, err := c.route(tg)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(eps); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	for name, want := range map[string]string{"pc": "use ProxyJump instead", "loop": "longer than 8 hops"} {
		tg := inv
		tg.Name, tg.Address = name, name
		if _, err := c.route(tg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", name, err, want)
		}
	}
}

func TestApplyAlgList(t *testing.T) {
	def := []string{"ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512"}
	for spec, want := range map[string][]string{
		"ssh-ed25519,sk-unsupported@x": {"ssh-ed25519"},
		"+ssh-rsa":                     {"ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512", "ssh-rsa"},
		"-ecdsa-*":                     {"ssh-ed25519", "rsa-sha2-512"},
		"^rsa-sha2-512":                {"rsa-sha2-512", "ssh-ed25519", "ecdsa-sha2-nistp256"},
	} {
		if got := applyAlgList(spec, def); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v, want %v", spec, got, want)
		}
	}
}
