package inventory

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// withoutSource drops the file:line each host was found at, the one thing
// twins in different formats cannot share.
func withoutSource(hosts []Host) []Host {
	out := append([]Host(nil), hosts...)
	for i := range out {
		out[i].Source = ""
	}
	return out
}

func dump(hosts []Host) string {
	b, _ := json.MarshalIndent(hosts, "", "  ")
	return string(b)
}

// TestTwins: the INI inventory with group_vars/ and host_vars/ resolves to
// exactly the hosts of its YAML twin, and the ansible-inventory --list JSON
// of the same inventory (group_vars already applied by Ansible) too.
func TestTwins(t *testing.T) {
	fakeHome(t)
	yml := load(t, "testdata/twin/hosts.yml")
	ini := load(t, "testdata/twin/hosts.ini")
	list := load(t, "testdata/twin/hosts.json")
	if yml.Format != FormatAnsible || ini.Format != FormatAnsibleINI || list.Format != FormatAnsibleList {
		t.Fatalf("formats = %s, %s, %s", yml.Format, ini.Format, list.Format)
	}
	if got, want := withoutSource(ini.Hosts), withoutSource(yml.Hosts); !reflect.DeepEqual(got, want) {
		t.Errorf("INI twin differs from YAML:\nINI  %s\nYAML %s", dump(got), dump(want))
	}
	if !reflect.DeepEqual(ini.Groups, yml.Groups) {
		t.Errorf("groups: INI %v, YAML %v", ini.Groups, yml.Groups)
	}
	// The JSON has Ansible's implicit "ungrouped" group, and its own order.
	byName := map[string]Host{}
	for _, h := range withoutSource(list.Hosts) {
		h.Groups = without(h.Groups, "ungrouped")
		byName[h.Name] = h
	}
	for _, want := range withoutSource(yml.Hosts) {
		if got := byName[want.Name]; !reflect.DeepEqual(got, want) {
			t.Errorf("JSON host %s:\n got %s\nwant %s", want.Name, dump([]Host{got}), dump([]Host{want}))
		}
	}
	if len(list.Hosts) != len(yml.Hosts) {
		t.Errorf("JSON has %d hosts, YAML %d", len(list.Hosts), len(yml.Hosts))
	}
	if h := hostByName(t, ini, "broker02.west.example.com"); h.Source != "testdata/twin/hosts.ini:15" {
		t.Errorf("INI source = %s, want testdata/twin/hosts.ini:15", h.Source)
	}
}

func without(list []string, drop string) []string {
	out := []string{}
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

// TestGroupVarsPrecedence pins Ansible's order on the twin: inventory group
// vars < group_vars/ files (all first, then by group depth; files of a
// directory in name order) < the inventory's host vars < host_vars/.
func TestGroupVarsPrecedence(t *testing.T) {
	fakeHome(t)
	inv := load(t, "testdata/twin/hosts.ini")
	key := filepath.Join("testdata", "keys", "id_dummy")
	tests := []struct {
		host string
		got  func(Host) any
		want any
		why  string
	}{
		{"broker01.east.example.com", func(h Host) any { return h.KafkaPort }, 9092, "group_vars/kafka/20-kaudit.yaml beats 10-connection.yml and the inventory's [kafka_east:vars]"},
		{"broker01.east.example.com", func(h Host) any { return h.User }, "deploy", "group_vars/all.yml"},
		{"broker01.east.example.com", func(h Host) any { return h.ConnectTimeout }, 7 * time.Second, "group_vars/all.yml"},
		{"broker01.east.example.com", func(h Host) any { return h.Profile["somaxconn"] }, 4096, "group_vars/all.yml beats the inventory's [kafka_east:vars]"},
		{"broker01.east.example.com", func(h Host) any { return h.Become }, "sudo", "[kafka:vars] ansible_become = yes"},
		{"broker01.east.example.com", func(h Host) any { return h.Timeout }, 45 * time.Second, "[kafka:vars]"},
		{"broker01.east.example.com", func(h Host) any { return h.KafkaHome }, "/opt/kafka", "group_vars/kafka/20-kaudit.yaml"},
		{"broker-b.east.example.com", func(h Host) any { return h.IdentityFiles }, []string{key}, "inline host var, relative to the inventory"},
		{"broker01.west.example.com", func(h Host) any { return h.KafkaPort }, 9099, "inline host var beats group_vars/kafka_west.json"},
		{"broker01.west.example.com", func(h Host) any { return []any{h.Address, h.Port} }, []any{"192.0.2.10", 2222}, "host:port and ansible_host"},
		{"broker01.west.example.com", func(h Host) any { return h.Interfaces }, []string{"ens5"}, "group_vars/kafka_west.json"},
		{"broker02.west.example.com", func(h Host) any { return h.Interfaces }, []string{"ens5", "ens6"}, "inline list literal beats group_vars"},
		{"broker02.west.example.com", func(h Host) any { return []any{h.User, h.Port} }, []any{"ec2-user", 2200}, "inline quoted port"},
		{"broker02.east.example.com", func(h Host) any { return []any{h.KafkaConfig, h.Port} }, []any{"/etc/kafka/server.properties", 2201}, "host_vars beat inline host vars"},
		{"broker02.east.example.com", func(h Host) any { return h.HostKeyPolicy }, "accept-new", "[monitored:vars]"},
		{"tools.example.com", func(h Host) any { return []any{h.Connection, h.Groups} }, []any{"local", []string{"all"}}, "a host before any section is in all"},
	}
	for _, tc := range tests {
		if got := tc.got(hostByName(t, inv, tc.host)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v (%s)", tc.host, got, tc.want, tc.why)
		}
	}
}

func TestDetectFormat(t *testing.T) {
	tests := []struct{ path, data, want string }{
		{"hosts", "[kafka]\nb1\n", FormatAnsibleINI},
		{"hosts", "# c\n\nb1 ansible_host=10.0.0.1\n", FormatAnsibleINI},
		{"hosts", "b1:2222\n", FormatAnsibleINI},
		{"hosts", "all:\n  hosts:\n", ""},
		{"hosts", "---\nall:\n", ""},
		{"hosts", "{\"_meta\": {}}", ""},
		{"hosts.yml", "[kafka]\nb1\n", ""},
		{"hosts.ini", "all:\n", FormatAnsibleINI},
		{"-", "[kafka]\nb1\n", FormatAnsibleINI},
		{"-", "{}", ""},
	}
	for _, tc := range tests {
		if got := detectFormat(tc.path, []byte(tc.data)); got != tc.want {
			t.Errorf("detectFormat(%s, %q) = %q, want %q", tc.path, tc.data, got, tc.want)
		}
	}
}

// TestINIErrors: every INI problem names file:line, the field when there
// is one, and what to do; all problems of a file come at once.
func TestINIErrors(t *testing.T) {
	fakeHome(t)
	tests := []struct{ name, data, want string }{
		{"section type", "[kafka:hosts]\nb1\n",
			`inv.ini:1: unknown section type "hosts" in [kafka:hosts] (hint: Ansible knows [group], [group:vars] and [group:children])`},
		{"unterminated header", "[kafka\nb1\n",
			`inv.ini:1: unterminated section header "[kafka" (hint: a section header looks like [group], [group:vars] or [group:children])`},
		{"bad group", "[ka fka]\nb1\n",
			`inv.ini:1: invalid group name "ka fka" (hint: group names contain only letters, digits and _ . -)`},
		{"not key=value", "b1 ansible_port\n",
			`inv.ini:1: b1: expected key=value, got "ansible_port" (hint: host variables are written key=value, with no spaces around =; quote values that contain spaces)`},
		{"quote", "b1 ansible_user='kafka\n",
			`inv.ini:1: unterminated quote ' (hint: close the quote, or escape it with a backslash)`},
		{"port", "[k]\nb1 ansible_port=99999\n",
			`inv.ini:2: ansible_port: port 99999 out of range 1-65535 (hint: SSH listens on 22 unless configured otherwise)`},
		{"host port", "b1:0\n",
			`inv.ini:1: b1:0: port "0" out of range 1-65535 (hint: write host:port with a port in 1-65535, or use ansible_port)`},
		{"range", "[k]\nb[3:1]\n",
			`inv.ini:2: b[3:1]: host pattern "b[3:1]": range [3:1] starts after it ends (hint: ranges look like [01:10] (zero-padded), [1:10], [1:10:2] or [a:f])`},
		{"group var", "[k]\nb1\n[k:vars]\nkaudit_timeout\n",
			`inv.ini:4: [k:vars]: expected key=value, got "kaudit_timeout" (hint: group variables are written key=value, one per line)`},
		{"unknown kaudit var", "[k]\nb1\n[k:vars]\nkaudit_kafka_prot=9093\n",
			`inv.ini:4: kaudit_kafka_prot: unknown kaudit variable "kaudit_kafka_prot" (hint: did you mean "kaudit_kafka_port"?)`},
		{"bad literal", "b1 kaudit_interfaces=\"['eth0'\"\n",
			`inv.ini:1: kaudit_interfaces: invalid value "['eth0'": did not find expected ',' or ']' (hint: write lists as ['a', 'b'] and mappings as {'key': value})`},
		{"bad child", "[k:children]\n!x\n",
			`inv.ini:2: [k:children]: group name "!x" must not start with "!" (hint: group names start with a letter, digit, '_' or '.')`},
		{"cycle", "[a:children]\nb\n[b:children]\na\n[a]\nh1\n",
			`inv.ini:4: [b:children]: group "a" contains itself: a -> b -> a (hint: a group cannot be its own ancestor; remove one of these children entries)`},
		{"template", "b1 ansible_host={{ip}}\n",
			`inv.ini:1: ansible_host: address "{{ip}}" contains '{', which is not allowed (hint: kaudit does not evaluate Jinja templates; write the value out)`},
		{"empty", "# nothing\n[k]\n", `inv.ini: inventory has no hosts (hint: add hosts under hosts: or groups.NAME.hosts: (or all.hosts: in an Ansible inventory))`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("inv.ini", []byte(tc.data))
			if err == nil {
				t.Fatal("no error")
			}
			if got := Errors(err); len(got) == 0 || got[0].Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
	_, err := Parse("inv.ini", []byte("[k:x]\n[g]\nb1 a\nb2 ansible_port=0\n"))
	if n := len(Errors(err)); n != 3 {
		t.Errorf("want all 3 problems at once, got %d: %v", n, err)
	}
}

// TestVarsFileErrors: a problem in group_vars/ or host_vars/ names that
// file and line.
func TestVarsFileErrors(t *testing.T) {
	fakeHome(t)
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("hosts", "[kafka]\nb1\n")
	write("group_vars/kafka/main.yml", "ok: 1\nansible_port: high\n")
	write("group_vars/all.yaml", "a: [\n")
	write("host_vars/b1", "$ANSIBLE_VAULT;1.1;AES256\n6162\n")
	write("group_vars/kafka.yml", "ansible_user: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6162\n")
	_, err := Load(filepath.Join(dir, "hosts"))
	var got []string
	for _, e := range Errors(err) {
		got = append(got, strings.TrimPrefix(e.Error(), dir+"/"))
	}
	want := []string{
		`group_vars/all.yaml:1: invalid YAML: did not find expected node content (hint: check the indentation and quoting around that line)`,
		`group_vars/kafka.yml:1: ansible_user: ansible_user is encrypted with ansible-vault (hint: kaudit never decrypts vaults; pipe ansible-inventory -i INVENTORY --list into kaudit scan - instead)`,
		`group_vars/kafka/main.yml:2: ansible_port: expected an integer, got the string "high"`,
		`host_vars/b1:1: vars file is encrypted with ansible-vault (hint: kaudit never decrypts vaults; pipe ansible-inventory -i INVENTORY --list into kaudit scan - instead)`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestAnsibleListErrors(t *testing.T) {
	fakeHome(t)
	tests := []struct{ name, data, want string }{
		{"hosts not a list", `{"_meta": {}, "k": {"hosts": {"b1": {}}}}`,
			`inv.json:1: k.hosts: expected a list of names, got a mapping`},
		{"unknown key", "{\"_meta\": {},\n \"k\": {\"hosts\": [\"b1\"], \"host\": []}}",
			`inv.json:2: k.host: unknown key "host" in group "k" (hint: did you mean "hosts"?)`},
		{"bad hostvar", "{\"_meta\": {\"hostvars\": {\n\"b1\": {\"ansible_port\": \"x\"}}}}",
			`inv.json:2: _meta.hostvars.b1.ansible_port: expected an integer, got the string "x"`},
		{"vaulted hostvar", "{\"_meta\": {\"hostvars\": {\n\"b1\": {\"ansible_user\": {\"__ansible_vault\": \"$ANSIBLE_VAULT;1.1\"}}}}}",
			`inv.json:2: _meta.hostvars.b1.ansible_user: ansible_user is encrypted with ansible-vault (hint: kaudit never decrypts vaults; pipe ansible-inventory -i INVENTORY --list into kaudit scan - instead)`},
		{"bad host", `{"k": {"hosts": ["b;1"]}}`,
			`inv.json:1: k.hosts[0]: host name "b;1" contains ';', which is not allowed (hint: use a DNS name or an IP address: letters, digits and . - _ : % [ ] only)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("inv.json", []byte(tc.data))
			if got := Errors(err); len(got) == 0 || got[0].Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestLoadStdin(t *testing.T) {
	fakeHome(t)
	data, err := os.ReadFile("testdata/twin/hosts.json")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir("testdata/twin")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.Write(data); w.Close() }()
	old := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = old }()
	inv, err := Load(Stdin)
	if err != nil {
		t.Fatalf("Load(-): %v", err)
	}
	if inv.Format != FormatAnsibleList || len(inv.Hosts) != 9 || !strings.HasPrefix(inv.Hosts[0].Source, "stdin:") {
		t.Errorf("from stdin: format %s, %d hosts, source %q", inv.Format, len(inv.Hosts), inv.Hosts[0].Source)
	}
	// Relative key paths from stdin are relative to the working directory.
	if h := hostByName(t, inv, "broker-a.east.example.com"); h.IdentityFiles[0] != filepath.Join("..", "keys", "id_dummy") {
		t.Errorf("identity file from stdin = %v", h.IdentityFiles)
	}
}

func TestShellWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`b1 a=1  b=2`, []string{"b1", "a=1", "b=2"}},
		{`b1 a='x y' b="p \"q\" \\"`, []string{"b1", "a=x y", `b=p "q" \`}},
		{`b1 a=x\ y # c d`, []string{"b1", "a=x y"}},
		{`b1 a=x#y`, []string{"b1", "a=x#y"}},
	}
	for _, tc := range tests {
		if got, err := shellWords(tc.in); err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("shellWords(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// FuzzParseINI: no input panics; errors are *Error values on one line
// naming the file; accepted hosts carry only safe values.
func FuzzParseINI(f *testing.F) {
	if data, err := os.ReadFile("testdata/twin/hosts.ini"); err == nil {
		f.Add(data)
	}
	f.Add([]byte("[a:children]\nb\n[b:children]\na\n"))
	f.Add([]byte("h[01:03] x='[1, {2: 3}]' y=\"{'a': [1]}\"\n[g:vars]\nz = 'q'\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		t.Setenv("HOME", "/nonexistent-kaudit-home")
		inv, err := Parse("f.ini", data)
		if err == nil {
			for _, h := range inv.Hosts {
				for _, v := range []string{h.Name, h.Address, h.User, h.ProxyJump, h.KafkaConfig, h.KafkaHome} {
					if strings.ContainsAny(v, ";$`'\"\\|&<>\n\x00 ") {
						t.Fatalf("host %q: unsafe value %q accepted", h.Name, v)
					}
				}
			}
			return
		}
		errs := Errors(err)
		if len(errs) == 0 {
			t.Fatalf("error is not an *Error: %v", err)
		}
		for _, e := range errs {
			if e.File != "f.ini" || strings.Contains(e.Error(), "\n") {
				t.Fatalf("bad error %q", e.Error())
			}
		}
	})
}
