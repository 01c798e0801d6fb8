package inventory

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fakeHome points $HOME at a fresh directory so that "~" expansion and the
// default known_hosts path do not depend on the machine running the tests.
func fakeHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	return home
}

func load(t *testing.T, path string) *Inventory {
	t.Helper()
	inv, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return inv
}

func hostByName(t *testing.T, inv *Inventory, name string) Host {
	t.Helper()
	for _, h := range inv.Hosts {
		if h.Name == name {
			return h
		}
	}
	t.Fatalf("host %q not in inventory", name)
	return Host{}
}

func names(hosts []Host) []string {
	out := make([]string, len(hosts))
	for i, h := range hosts {
		out[i] = h.Name
	}
	return out
}

func TestLoadKaudit(t *testing.T) {
	home := fakeHome(t)
	inv := load(t, "testdata/good_kaudit.yaml")
	if inv.Format != FormatKaudit {
		t.Errorf("Format = %q, want kaudit", inv.Format)
	}
	wantOrder := []string{"broker-1", "broker-2", "broker-3", "west-a", "west-b", "stage-01", "stage-02", "laptop"}
	if got := names(inv.Hosts); !reflect.DeepEqual(got, wantOrder) {
		t.Errorf("hosts = %v, want %v (file order, ranges expanded)", got, wantOrder)
	}
	key := filepath.Join("testdata", "keys", "id_dummy")
	known := []string{filepath.Join(home, ".ssh", "known_hosts")}

	tests := []Host{{
		Name: "broker-1", Address: "10.0.0.1", Port: 22, User: "kafka", IdentityFiles: []string{key},
		UseAgent: true, KnownHosts: known, HostKeyPolicy: "accept-new", ProxyJump: "ops@bastion.example.com:2222",
		Become: "sudo", ConnectTimeout: 5 * time.Second, Timeout: 30 * time.Second, Connection: "ssh",
		KafkaPort: 9092, KafkaHome: "/opt/kafka", Interfaces: []string{"eth0", "bond0.100"},
		Groups: []string{"prod", "prod-east"},
		// top-level profile < defaults.profile < prod < prod-east; nested maps merge
		Profile: map[string]any{"somaxconn": 16384, "nic_ring": map[string]any{"rx": 2048, "tx": 1024}},
		Source:  "testdata/good_kaudit.yaml:25",
	}, {
		Name: "broker-2", Address: "broker-2", Port: 22, User: "kafka", IdentityFiles: []string{key},
		UseAgent: true, KnownHosts: known, HostKeyPolicy: "accept-new", ProxyJump: "ops@bastion.example.com:2222",
		Become: "sudo", ConnectTimeout: 5 * time.Second, Timeout: 30 * time.Second, Connection: "ssh",
		KafkaPort: 9092, KafkaHome: "/opt/kafka", Interfaces: []string{"eth0", "bond0.100"},
		Groups:  []string{"prod", "prod-east"},
		Profile: map[string]any{"somaxconn": 16384, "nic_ring": map[string]any{"rx": 2048, "tx": 1024}},
		Source:  "testdata/good_kaudit.yaml:26",
	}, {
		Name: "broker-3", Address: "fe80::1%eth0", Port: 2222, User: "kafka", IdentityFiles: []string{key},
		UseAgent: false, KnownHosts: known, HostKeyPolicy: "accept-new", ProxyJump: "ops@bastion.example.com:2222",
		Become: "sudo", ConnectTimeout: 5 * time.Second, Timeout: 30 * time.Second, Connection: "ssh",
		KafkaPort: 9092, KafkaConfig: "/etc/kafka/server.properties", KafkaHome: "/opt/kafka",
		Groups:  []string{"prod", "prod-west"},
		Profile: map[string]any{"somaxconn": 32768, "nic_ring": map[string]any{"rx": 2048, "tx": 1024}},
		Source:  "testdata/good_kaudit.yaml:31",
	}, {
		Name: "west-b", Address: "2001:db8::7", Port: 22, User: "kafka", IdentityFiles: []string{key},
		UseAgent: true, KnownHosts: known, HostKeyPolicy: "accept-new", ProxyJump: "ops@bastion.example.com:2222",
		Become: "sudo", ConnectTimeout: 5 * time.Second, Timeout: 30 * time.Second, Connection: "ssh",
		KafkaPort: 9092, KafkaConfig: "/etc/kafka/server.properties", KafkaHome: "/opt/kafka",
		Groups:  []string{"prod", "prod-west"},
		Profile: map[string]any{"somaxconn": 8192, "nic_ring": map[string]any{"rx": 2048, "tx": 1024}},
		Source:  "testdata/good_kaudit.yaml:36",
	}, {
		Name: "stage-02", Address: "stage-02", Port: 22, User: "kafka", IdentityFiles: []string{key},
		UseAgent: true, KnownHosts: known, HostKeyPolicy: "accept-new",
		Become: "sudo", ConnectTimeout: 5 * time.Second, Timeout: 90 * time.Second, Connection: "ssh",
		KafkaPort: 9092, KafkaHome: "/opt/kafka",
		Groups:  []string{"staging"},
		Profile: map[string]any{"somaxconn": 8192, "nic_ring": map[string]any{"rx": 2048}},
		Source:  "testdata/good_kaudit.yaml:40",
	}, {
		Name: "laptop", Address: "laptop", Port: 22, User: "kafka", IdentityFiles: []string{key},
		UseAgent: true, KnownHosts: known, HostKeyPolicy: "accept-new",
		Become: "", ConnectTimeout: 5 * time.Second, Timeout: 30 * time.Second, Connection: "local",
		KafkaPort: 9092, KafkaHome: "/opt/kafka",
		Groups:  []string{},
		Profile: map[string]any{"somaxconn": 8192, "nic_ring": map[string]any{"rx": 2048}},
		Source:  "testdata/good_kaudit.yaml:43",
	}}
	for _, want := range tests {
		t.Run(want.Name, func(t *testing.T) {
			got := hostByName(t, inv, want.Name)
			got.SSHConfig, got.Given = false, Given{} // TestGivenAndSSHConfig covers them
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}

	wantGroups := map[string][]string{
		"prod":      {"broker-1", "broker-2", "broker-3", "west-a", "west-b"},
		"prod-east": {"broker-1", "broker-2"},
		"prod-west": {"broker-3", "west-a", "west-b"},
		"staging":   {"stage-01", "stage-02"},
	}
	if !reflect.DeepEqual(inv.Groups, wantGroups) {
		t.Errorf("Groups = %v, want %v", inv.Groups, wantGroups)
	}
}

func TestLoadKauditDefaults(t *testing.T) {
	home := fakeHome(t)
	inv, err := Parse("min.yaml", []byte("hosts:\n  broker-1:\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Host{
		Name: "broker-1", Address: "broker-1", Port: 22, UseAgent: true,
		KnownHosts: []string{filepath.Join(home, ".ssh", "known_hosts")}, HostKeyPolicy: "strict",
		Connection: "ssh", KafkaPort: 9092, Groups: []string{}, Profile: map[string]any{}, Source: "min.yaml:2",
		SSHConfig: true, // nothing Given: every connection setting may come from ssh_config
	}
	if got := inv.Hosts[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestGivenAndSSHConfig: the inventory records which connection settings
// it set (in defaults, a group or the host), so they win over ssh_config,
// and ssh_config: false turns ssh_config off per host or group.
func TestGivenAndSSHConfig(t *testing.T) {
	fakeHome(t)
	inv, err := Parse("g.yaml", []byte(`defaults:
  user: ops
groups:
  direct:
    vars: {ssh_config: false, port: 2222}
    hosts: {d1: ~}
hosts:
  a1: {address: 10.0.0.1, proxy_jump: bastion, connect_timeout: 3s}
`))
	if err != nil {
		t.Fatal(err)
	}
	a1, d1 := hostByName(t, inv, "a1"), hostByName(t, inv, "d1")
	if want := (Given{Address: true, User: true, ProxyJump: true, ConnectTimeout: true}); a1.Given != want || !a1.SSHConfig {
		t.Errorf("a1: Given %+v SSHConfig %v, want %+v true", a1.Given, a1.SSHConfig, want)
	}
	if want := (Given{User: true, Port: true}); d1.Given != want || d1.SSHConfig {
		t.Errorf("d1: Given %+v SSHConfig %v, want %+v false", d1.Given, d1.SSHConfig, want)
	}
	ans, err := Parse("a.yaml", []byte("all:\n  hosts:\n    x1: {ansible_host: 10.0.0.2, kaudit_ssh_config: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if x := ans.Hosts[0]; !x.Given.Address || x.Given.Port || x.SSHConfig {
		t.Errorf("ansible x1: Given %+v SSHConfig %v", x.Given, x.SSHConfig)
	}
}

func TestLoadAnsible(t *testing.T) {
	fakeHome(t)
	inv := load(t, "testdata/good_ansible.yaml")
	if inv.Format != FormatAnsible {
		t.Errorf("Format = %q, want ansible", inv.Format)
	}
	wantOrder := []string{
		"tools.example.com",
		"broker01.east.example.com", "broker02.east.example.com", "broker03.east.example.com",
		"broker-a.east.example.com", "broker-b.east.example.com", "broker-c.east.example.com",
		"broker01.west.example.com", "broker02.west.example.com",
	}
	if got := names(inv.Hosts); !reflect.DeepEqual(got, wantOrder) {
		t.Errorf("hosts = %v, want %v", got, wantOrder)
	}
	key := filepath.Join("testdata", "keys", "id_dummy")

	type want struct {
		address    string
		port       int
		user       string
		become     string
		conn       string
		kafkaPort  int
		policy     string
		config     string
		ifaces     []string
		keys       []string
		groups     []string
		somaxconn  int
		timeout    time.Duration
		sourceLine string
	}
	tests := map[string]want{
		// all.hosts: ansible_connection local; only the all vars apply.
		"tools.example.com": {"tools.example.com", 22, "deploy", "", "local", 9092, "strict", "", nil, nil,
			[]string{"all"}, 4096, 0, ":10"},
		// zero-padded range; kafka_east (depth 2) beats kafka (depth 1).
		"broker01.east.example.com": {"broker01.east.example.com", 22, "deploy", "sudo", "ssh", 9094, "strict", "", nil, nil,
			[]string{"all", "kafka", "kafka_east"}, 8192, 45 * time.Second, ":25"},
		// in kafka_east (depth 2) and monitored (depth 1): the deeper group wins
		// kaudit_kafka_port; monitored still supplies the policy; host vars add the config.
		"broker02.east.example.com": {"broker02.east.example.com", 22, "deploy", "sudo", "ssh", 9094, "accept-new", "/etc/kafka/kraft/server.properties", nil, nil,
			[]string{"all", "kafka", "kafka_east", "monitored"}, 8192, 45 * time.Second, ":25"},
		// alphabetic range with a host-level key file (relative to the inventory).
		"broker-c.east.example.com": {"broker-c.east.example.com", 22, "deploy", "sudo", "ssh", 9094, "strict", "", nil, []string{key},
			[]string{"all", "kafka", "kafka_east"}, 8192, 45 * time.Second, ":26"},
		// host:port key, ansible_host; host vars from its second group win last.
		"broker01.west.example.com": {"192.0.2.10", 2222, "deploy", "sudo", "ssh", 9099, "accept-new", "", []string{"ens5"}, nil,
			[]string{"all", "kafka", "kafka_west", "monitored"}, 4096, 45 * time.Second, ":33"},
		// ansible_port as a string, as Ansible allows; host ansible_user beats all.vars.
		"broker02.west.example.com": {"broker02.west.example.com", 2200, "ec2-user", "sudo", "ssh", 9095, "strict", "", []string{"ens5"}, nil,
			[]string{"all", "kafka", "kafka_west"}, 4096, 45 * time.Second, ":35"},
	}
	for name, w := range tests {
		t.Run(name, func(t *testing.T) {
			h := hostByName(t, inv, name)
			got := want{h.Address, h.Port, h.User, h.Become, h.Connection, h.KafkaPort, h.HostKeyPolicy, h.KafkaConfig,
				h.Interfaces, h.IdentityFiles, h.Groups, h.Profile["somaxconn"].(int), h.Timeout,
				strings.TrimPrefix(h.Source, "testdata/good_ansible.yaml")}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("got  %+v\nwant %+v", got, w)
			}
		})
	}
	if got, want := inv.Groups["monitored"], []string{"broker02.east.example.com", "broker01.west.example.com"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Groups[monitored] = %v, want %v", got, want)
	}
	if got := len(inv.Groups["all"]); got != 9 {
		t.Errorf("Groups[all] has %d hosts, want 9", got)
	}
}

func TestExampleInventoryLoads(t *testing.T) {
	home := fakeHome(t) // no key files: the example must rely on the agent and OpenSSH defaults
	inv := load(t, "../../inventory.example.yaml")
	if got, want := names(inv.Hosts), []string{"broker-1", "broker-2", "broker-3", "broker-4", "broker-5"}; !reflect.DeepEqual(got, want) {
		t.Errorf("hosts = %v, want %v", got, want)
	}
	if len(inv.Groups) != 2 {
		t.Errorf("groups = %v, want 2", inv.Groups)
	}
	b5 := hostByName(t, inv, "broker-5")
	if b5.Port != 2222 || b5.ProxyJump != "ops@bastion-west.example.com" || b5.KafkaConfig != "/etc/kafka/kraft/server.properties" ||
		b5.Become != "sudo" || len(b5.IdentityFiles) != 0 || b5.KnownHosts[0] != filepath.Join(home, ".ssh", "known_hosts") {
		t.Errorf("broker-5 = %+v", b5)
	}
	if b1 := hostByName(t, inv, "broker-1"); b1.Profile["somaxconn"] != 8192 || !reflect.DeepEqual(b1.Interfaces, []string{"eth0"}) {
		t.Errorf("broker-1 = %+v", b1)
	}
}

// TestBadFiles checks the exact message of every error in each bad file.
func TestBadFiles(t *testing.T) {
	home := fakeHome(t)
	tests := []struct {
		file string
		want []string
	}{
		{"bad_unknown_key.yaml", []string{
			`4: hosts.broker-1.prot: unknown key "prot" (hint: did you mean "port"?)`,
		}},
		{"bad_unknown_top_key.yaml", []string{
			`1: default: unknown key "default" (hint: did you mean "defaults"?)`,
		}},
		{"bad_type.yaml", []string{
			`2: defaults.use_agent: expected true or false, got the string "maybe" (hint: write true or false (no quotes))`,
			`5: hosts.broker-1.port: expected an integer, got the string "22" (hint: write the number without quotes)`,
			`6: hosts.broker-1.identity_files: expected a list of strings, got a mapping (hint: write a list such as [a, b], or one string)`,
		}},
		{"bad_port.yaml", []string{
			`3: hosts.broker-1.port: port 70000 out of range 1-65535 (hint: SSH listens on 22 unless configured otherwise)`,
			`5: hosts.broker-2.kafka.port: port 0 out of range 1-65535 (hint: the Kafka listener is usually 9092)`,
		}},
		{"bad_duplicate_host.yaml", []string{
			`5: groups.east.hosts.broker-[1:2]: duplicate host "broker-1" (first defined at line 4) (hint: host names must be unique; to put a host in several groups use children:)`,
			`7: hosts.broker-2: duplicate host "broker-2" (first defined at line 5) (hint: host names must be unique; to put a host in several groups use children:)`,
		}},
		{"bad_group_self.yaml", []string{
			`3: groups.east.children[0]: group "east" lists itself as a child (hint: a group cannot be its own ancestor; remove one of these children entries)`,
		}},
		{"bad_group_cycle.yaml", []string{
			`7: groups.c.children[0]: group "a" contains itself: a -> b -> c -> a (hint: a group cannot be its own ancestor; remove one of these children entries)`,
		}},
		{"bad_unknown_child.yaml", []string{
			`3: groups.prod.children[0]: unknown group "prod-eats" (hint: did you mean "prod-east"?)`,
		}},
		{"bad_identity_file.yaml", []string{
			`4: defaults.identity_files[1]: cannot read identity file "testdata/keys/missing_key": no such file or directory (hint: fix the path, or remove it to use ssh-agent and the OpenSSH default keys)`,
			`7: hosts.broker-1.identity_files: cannot read identity file "` + home + `/.ssh/nope": no such file or directory (hint: fix the path, or remove it to use ssh-agent and the OpenSSH default keys)`,
		}},
		{"bad_duration.yaml", []string{
			`2: defaults.timeout: invalid duration "30 sec" (hint: use a duration such as "5s", "30s" or "2m" (a bare number means seconds))`,
			`5: hosts.broker-1.connect_timeout: negative duration "-5s" (hint: omit the key or use 0 for kaudit's default)`,
		}},
		{"bad_host_key_policy.yaml", []string{
			`2: defaults.host_key_policy: unknown host key policy "yolo" (hint: use strict, accept-new or insecure)`,
		}},
		{"bad_become.yaml", []string{
			`4: groups.east.vars.become: unsupported become method "su" (hint: only "sudo" is supported; use "" to run as the login user)`,
			`7: groups.east.hosts.broker-1.become: expected "sudo" or "", got the boolean true (hint: write become: sudo (or "" for none))`,
		}},
		{"bad_empty.yaml", []string{
			`inventory has no hosts (hint: add hosts under hosts: or groups.NAME.hosts: (or all.hosts: in an Ansible inventory))`,
		}},
		{"bad_no_hosts.yaml", []string{
			`2: inventory has no hosts (hint: add hosts under hosts: or groups.NAME.hosts: (or all.hosts: in an Ansible inventory))`,
		}},
		{"bad_yaml_syntax.yaml", []string{
			`3: invalid YAML: found character that cannot start any token (hint: YAML indentation must use spaces, not tabs)`,
		}},
		{"bad_many.yaml", []string{
			`2: defaults.port: port 99999 out of range 1-65535 (hint: SSH listens on 22 unless configured otherwise)`,
			`3: defaults.become: unsupported become method "doas" (hint: only "sudo" is supported; use "" to run as the login user)`,
			`7: groups.east.hosts.broker-1.adress: unknown key "adress" (hint: did you mean "address"?)`,
			`8: groups.east.hosts.broker-1: duplicate key "broker-1" (first defined at line 7) (hint: remove one of them or rename it)`,
			`11: hosts.broker-2.user: invalid user "Root" (hint: user names start with a lower-case letter or '_' and contain only a-z 0-9 _ . -)`,
			`12: hosts.broker-2.interfaces[1]: invalid interface name "this-name-is-too-long0" (hint: interface names have 1-15 characters: letters, digits and _ . : @ -)`,
			`13: hosts.broker-2.kafka.config: path "etc/kafka/server.properties" is not absolute (hint: use an absolute path made of letters, digits and / . _ - + @ = , : % ~)`,
		}},
		{"bad_ansible_become_method.yaml", []string{
			`4: all.vars.ansible_become_method: unsupported become method "su" (hint: kaudit only becomes root with sudo; remove the variable or set it to sudo)`,
		}},
		{"bad_ansible_kaudit_var.yaml", []string{
			`4: all.hosts.broker-1.kaudit_kafka_prot: unknown kaudit variable "kaudit_kafka_prot" (hint: did you mean "kaudit_kafka_port"?)`,
		}},
		{"bad_ansible_range.yaml", []string{
			`3: kafka.hosts.broker[3:1].example.com: host pattern "broker[3:1].example.com": range [3:1] starts after it ends (hint: ranges look like [01:10] (zero-padded), [1:10], [1:10:2] or [a:f])`,
			`4: kafka.hosts.broker[01:100].example.com: host pattern "broker[01:100].example.com": range [01:100]: zero-padded start and end must have the same width (hint: ranges look like [01:10] (zero-padded), [1:10], [1:10:2] or [a:f])`,
			`5: kafka.hosts.broker[1-3].example.com: host pattern "broker[1-3].example.com": range [1-3] must be [start:end] or [start:end:step] (hint: ranges look like [01:10] (zero-padded), [1:10], [1:10:2] or [a:f])`,
			`6: kafka.hosts.broker[a:c:0]: host pattern "broker[a:c:0]": range [a:c:0]: step "0" must be a positive integer (hint: ranges look like [01:10] (zero-padded), [1:10], [1:10:2] or [a:f])`,
		}},
		{"bad_ansible_cycle.yaml", []string{
			`7: all.children.kafka.children.east.children.kafka: group "kafka" contains itself: kafka -> east -> kafka (hint: a group cannot be its own ancestor; remove one of these children entries)`,
		}},
		{"bad_ansible_group_key.yaml", []string{
			`2: defualts.user: unknown key "user" in group "defualts" (hint: this file was read as an Ansible inventory; for kaudit's format did you mean "defaults:"?)`,
			`4: kafka.host: unknown key "host" in group "kafka" (hint: did you mean "hosts"? an Ansible group has only hosts:, vars: and children:)`,
		}},
		{"bad_ansible_values.yaml", []string{
			`4: all.hosts.broker-1.ansible_port: expected an integer, got the string "eighty"`,
			`5: all.hosts.broker-1.ansible_connection: unsupported connection "docker" (hint: kaudit connects with ssh or runs locally; leave such hosts out with --limit '!GROUP')`,
			`6: all.hosts.broker-1.ansible_user: invalid user "{{ lookup('env', 'USER') }}" (hint: kaudit does not evaluate Jinja templates; write the value out)`,
			`7: all.hosts.broker-2:99999: port "99999" out of range 1-65535 (hint: write host:port with a port in 1-65535, or use ansible_port)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := "testdata/" + tt.file
			inv, err := Load(path)
			if err == nil {
				t.Fatalf("Load succeeded with %d hosts, want errors", len(inv.Hosts))
			}
			if inv != nil {
				t.Errorf("inventory is not nil on error")
			}
			errs := Errors(err)
			var got []string
			for _, e := range errs {
				if e.File != path {
					t.Errorf("File = %q, want %q", e.File, path)
				}
				got = append(got, strings.TrimLeft(strings.TrimPrefix(e.Error(), path), ": "))
			}
			var want []string
			want = append(want, tt.want...)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// The joined error prints every message, one per line, in line order.
			if lines := strings.Split(err.Error(), "\n"); len(lines) != len(tt.want) {
				t.Errorf("err.Error() has %d lines, want %d", len(lines), len(tt.want))
			}
			var first *Error
			if !errors.As(err, &first) || first != errs[0] {
				t.Errorf("errors.As does not find the first *Error")
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{File: "inventory.yaml", Line: 12, Field: "hosts.broker-1.port", Msg: "port 70000 out of range 1-65535", Hint: "SSH listens on 22"},
			"inventory.yaml:12: hosts.broker-1.port: port 70000 out of range 1-65535 (hint: SSH listens on 22)"},
		{Error{File: "inv.yaml", Line: 3, Msg: "invalid YAML: x"}, "inv.yaml:3: invalid YAML: x"},
		{Error{File: "inv.yaml", Msg: "inventory has no hosts"}, "inv.yaml: inventory has no hosts"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/does-not-exist.yaml")
	want := "testdata/does-not-exist.yaml: cannot read inventory: no such file or directory (hint: check the path given on the command line)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

func TestIdentityFileTilde(t *testing.T) {
	home := fakeHome(t)
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(home, ".ssh", "id_test")
	if err := os.WriteFile(key, []byte("placeholder"), 0o600); err != nil {
		t.Fatal(err)
	}
	inv, err := Parse("/etc/kaudit/inv.yaml", []byte("defaults:\n  identity_files: ~/.ssh/id_test\n  known_hosts: [~/kh, /etc/ssh/ssh_known_hosts]\nhosts:\n  b1:\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := inv.Hosts[0]
	if !reflect.DeepEqual(h.IdentityFiles, []string{key}) {
		t.Errorf("IdentityFiles = %v, want [%s]", h.IdentityFiles, key)
	}
	if want := []string{filepath.Join(home, "kh"), "/etc/ssh/ssh_known_hosts"}; !reflect.DeepEqual(h.KnownHosts, want) {
		t.Errorf("KnownHosts = %v, want %v", h.KnownHosts, want)
	}

	if err := os.Chmod(key, 0); err != nil {
		t.Fatal(err)
	}
	if f, err := os.Open(key); err == nil { // running as root: permissions do not apply
		f.Close()
		t.Skip("cannot make a file unreadable as this user")
	}
	_, err = Parse("inv.yaml", []byte("defaults:\n  identity_files: ~/.ssh/id_test\nhosts:\n  b1:\n"))
	if err == nil || !strings.Contains(err.Error(), "inv.yaml:2: defaults.identity_files: cannot read identity file") ||
		!strings.Contains(err.Error(), "permission denied") {
		t.Errorf("err = %v, want permission denied on line 2", err)
	}
}

func TestYAMLFeatures(t *testing.T) {
	fakeHome(t)
	t.Run("anchors and merge keys", func(t *testing.T) {
		data := "groups:\n" +
			"  east:\n" +
			"    vars: &common\n" +
			"      user: kafka\n" +
			"      port: 2222\n" +
			"    hosts:\n" +
			"      b1:\n" +
			"        <<: *common\n" +
			"        port: 22\n" +
			"      b2: *common\n"
		inv, err := Parse("inv.yaml", []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if b1 := inv.Hosts[0]; b1.User != "kafka" || b1.Port != 22 {
			t.Errorf("b1 = %s:%d, want kafka:22 (explicit key beats merged)", b1.User, b1.Port)
		}
		if b2 := inv.Hosts[1]; b2.Port != 2222 {
			t.Errorf("b2 port = %d, want 2222", b2.Port)
		}
	})
	t.Run("second document", func(t *testing.T) {
		_, err := Parse("inv.yaml", []byte("hosts:\n  b1:\n---\nhosts:\n  b2:\n"))
		want := "inv.yaml:3: more than one YAML document (hint: keep the whole inventory in one YAML document)"
		if err == nil || err.Error() != want {
			t.Errorf("err = %v, want %s", err, want)
		}
	})
	t.Run("top level not a mapping", func(t *testing.T) {
		_, err := Parse("inv.yaml", []byte("- b1\n- b2\n"))
		if err == nil || !strings.HasPrefix(err.Error(), "inv.yaml:1: expected a mapping at the top level, got a list") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("ansible ungrouped top-level group", func(t *testing.T) {
		inv, err := Parse("hosts.yml", []byte("brokers:\n  hosts:\n    \"[2001:db8::1]:2222\":\n    fe80::2:\n    b3:\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := names(inv.Hosts), []string{"[2001:db8::1]", "fe80::2", "b3"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("hosts = %v, want %v", got, want)
		}
		if h := inv.Hosts[0]; h.Address != "2001:db8::1" || h.Port != 2222 || !reflect.DeepEqual(h.Groups, []string{"all", "brokers"}) {
			t.Errorf("host 0 = %+v", h)
		}
		if h := inv.Hosts[1]; h.Address != "fe80::2" || h.Port != 22 {
			t.Errorf("host 1 = %+v", h)
		}
	})
	t.Run("malformed YAML structures", func(t *testing.T) {
		tests := []struct{ data, want string }{
			{"hosts:\n  b1: &x\n    <<: *x\n",
				"inv.yaml:2: hosts.b1: merge key refers back to its own mapping (hint: a mapping cannot merge itself (<<: *anchor inside that anchor))"},
			{"all:\n  children:\n    a: &g\n      hosts: {b1: }\n      children:\n        b: *g\n",
				"inv.yaml:6: all.children.a.children.b: group \"b\" contains itself through a YAML alias (hint: an alias cannot include the group that defines its anchor)"},
			{"hosts:\n  b1:\n    profile: {1: 2, somaxconn: [a]}\n",
				"inv.yaml:3: hosts.b1.profile: profile key must be a name, got the integer 1 (hint: profile keys are threshold names such as somaxconn)"},
			{"hosts:\n  b1:\n    profile: 8192\n",
				"inv.yaml:3: hosts.b1.profile: expected a mapping of threshold overrides, got the integer 8192 (hint: e.g. profile: {somaxconn: 8192})"},
			{"hosts:\n  b1:\n    interfaces: [eth0, auto]\n",
				"inv.yaml:3: hosts.b1.interfaces[1]: \"auto\" cannot be mixed with interface names (hint: write interfaces: auto on its own, not inside a list)"},
			{"hosts:\n  b1:\n    identity_files: ~other/.ssh/id\n",
				"inv.yaml:3: hosts.b1.identity_files: cannot expand \"~other/.ssh/id\": only ~/ (your own home) is supported (hint: write the path out, e.g. /home/NAME/.ssh/id_ed25519)"},
		}
		for _, tt := range tests {
			if _, err := Parse("inv.yaml", []byte(tt.data)); err == nil || err.Error() != tt.want {
				t.Errorf("Parse(%q):\n got %v\nwant %s", tt.data, err, tt.want)
			}
		}
	})
	t.Run("ansible group priority", func(t *testing.T) {
		data := "all:\n  children:\n    a:\n      vars: {ansible_user: aa, ansible_group_priority: 10}\n      hosts: {h1: }\n" +
			"    b:\n      vars: {ansible_user: bb}\n      hosts: {h1: }\n"
		inv, err := Parse("hosts.yml", []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if u := inv.Hosts[0].User; u != "aa" {
			t.Errorf("user = %q, want aa (priority 10 beats alphabetical order)", u)
		}
	})
}
