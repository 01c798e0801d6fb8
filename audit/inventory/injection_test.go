package inventory

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestInjection feeds shell and ssh-option injection payloads into every
// field that reaches ssh or a remote shell, in both formats, and checks that
// each is rejected with an error naming that field.
func TestInjection(t *testing.T) {
	fakeHome(t)
	payloads := []struct{ name, host, path string }{
		{"semicolon", "b1;reboot", "/opt/kafka;reboot"},
		{"command substitution", "$(touch /tmp/x)", "/opt/$(touch /tmp/x)"},
		{"variable", "b1$IFS", "/opt/$HOME"},
		{"backticks", "`touch /tmp/x`", "/opt/`touch /tmp/x`"},
		{"single quote", "b1'", "/opt/kafka'"},
		{"double quote", `b1"`, `/opt/kafka"`},
		{"newline", "b1\ntouch /tmp/x", "/opt/kafka\ntouch /tmp/x"},
		{"NUL", "b1\x00", "/opt/kafka\x00"},
		{"pipe", "b1|sh", "/opt/kafka|sh"},
		{"ampersand", "b1&", "/opt/kafka&"},
		{"redirect", "b1>/tmp/x", "/opt/kafka</etc/shadow"},
		{"backslash", `b1\`, `/opt/kafka\n`},
		{"space", "b1 -v", "/opt/kafka -v"},
		{"ssh option", "-oProxyCommand=touch /tmp/x", "-oProxyCommand=touch /tmp/x"},
		{"ssh option no space", "-oProxyCommand=x", "-oProxyCommand=x"},
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) } // JSON strings are YAML double-quoted scalars

	type field struct {
		name  string
		yaml  func(v string) string
		field func(v string) string
		path  bool // a remote path: the payload gets the path form
	}
	fields := []field{
		{"kaudit host name", func(v string) string { return "hosts:\n  " + q(v) + ": ~\n" },
			func(v string) string { return join("hosts", v) }, false},
		{"kaudit address", func(v string) string { return "hosts:\n  b1: {address: " + q(v) + "}\n" },
			func(string) string { return "hosts.b1.address" }, false},
		{"kaudit user", func(v string) string { return "defaults: {user: " + q(v) + "}\nhosts: {b1: }\n" },
			func(string) string { return "defaults.user" }, false},
		{"kaudit proxy_jump", func(v string) string {
			return "groups:\n  g:\n    vars: {proxy_jump: " + q(v) + "}\n    hosts: {b1: }\n"
		},
			func(string) string { return "groups.g.vars.proxy_jump" }, false},
		{"kaudit proxy_jump user", func(v string) string { return "hosts:\n  b1: {proxy_jump: " + q(v+"@bastion") + "}\n" },
			func(string) string { return "hosts.b1.proxy_jump" }, false},
		{"kaudit interface", func(v string) string { return "hosts:\n  b1: {interfaces: [eth0, " + q(v) + "]}\n" },
			func(string) string { return "hosts.b1.interfaces[1]" }, false},
		{"kaudit kafka config", func(v string) string { return "hosts:\n  b1: {kafka: {config: " + q(v) + "}}\n" },
			func(string) string { return "hosts.b1.kafka.config" }, true},
		{"kaudit kafka home", func(v string) string { return "defaults: {kafka: {home: " + q(v) + "}}\nhosts: {b1: }\n" },
			func(string) string { return "defaults.kafka.home" }, true},
		{"ansible host name", func(v string) string { return "all:\n  hosts:\n    " + q(v) + ":\n" },
			func(v string) string { return join("all.hosts", v) }, false},
		{"ansible_host", func(v string) string { return "all:\n  hosts:\n    b1: {ansible_host: " + q(v) + "}\n" },
			func(string) string { return "all.hosts.b1.ansible_host" }, false},
		{"ansible_user", func(v string) string { return "all:\n  vars: {ansible_user: " + q(v) + "}\n  hosts: {b1: }\n" },
			func(string) string { return "all.vars.ansible_user" }, false},
		{"kaudit_proxy_jump", func(v string) string { return "all:\n  hosts:\n    b1: {kaudit_proxy_jump: " + q(v) + "}\n" },
			func(string) string { return "all.hosts.b1.kaudit_proxy_jump" }, false},
		{"kaudit_interfaces", func(v string) string { return "all:\n  hosts:\n    b1: {kaudit_interfaces: " + q(v) + "}\n" },
			func(string) string { return "all.hosts.b1.kaudit_interfaces" }, false},
		{"kaudit_kafka_config", func(v string) string { return "all:\n  hosts:\n    b1: {kaudit_kafka_config: " + q(v) + "}\n" },
			func(string) string { return "all.hosts.b1.kaudit_kafka_config" }, true},
		{"kaudit_kafka_home", func(v string) string { return "kafka:\n  vars: {kaudit_kafka_home: " + q(v) + "}\n  hosts: {b1: }\n" },
			func(string) string { return "kafka.vars.kaudit_kafka_home" }, true},
	}
	for _, f := range fields {
		for _, p := range payloads {
			v := p.host
			if f.path {
				v = p.path
			}
			t.Run(f.name+"/"+p.name, func(t *testing.T) {
				data := f.yaml(v)
				inv, err := Parse("inj.yaml", []byte(data))
				if err == nil {
					t.Fatalf("accepted %q:\n%s\nhosts: %+v", v, data, inv.Hosts)
				}
				want := f.field(v)
				var fieldsSeen []string
				for _, e := range Errors(err) {
					fieldsSeen = append(fieldsSeen, e.Field)
					if e.Field == want {
						if e.Line < 1 || e.Hint == "" || strings.ContainsAny(e.Error(), "\n\x00") {
							t.Errorf("error lacks a line or hint, or is not one line: %q", e.Error())
						}
						return
					}
				}
				t.Errorf("no error names field %q; got fields %q: %v", want, fieldsSeen, err)
			})
		}
	}
}

// The same fields accept ordinary values, so the allow-lists are not so
// tight that real inventories fail.
func TestValidValuesAccepted(t *testing.T) {
	for _, s := range []string{"broker-1", "broker-1.prod.example.com", "10.0.0.1", "fe80::1", "fe80::1%eth0", "[2001:db8::1]", "_kafka.local"} {
		if pr := checkHost("address", s); pr != nil {
			t.Errorf("checkHost(%q): %s", s, pr.msg)
		}
	}
	for _, s := range []string{"kafka", "ec2-user", "_svc", "user.name", "a23456789012345678901234567890ab"} {
		if pr := checkUser(s); pr != nil {
			t.Errorf("checkUser(%q): %s", s, pr.msg)
		}
	}
	for _, s := range []string{"a234567890123456789012345678901bc", "1kafka", "Kafka", "ka fka"} {
		if checkUser(s) == nil {
			t.Errorf("checkUser(%q) accepted", s)
		}
	}
	for _, s := range []string{"eth0", "bond0.100", "enp3s0f1", "veth1@if5", "ib0:1", "wlp2s0"} {
		if pr := checkInterface(s); pr != nil {
			t.Errorf("checkInterface(%q): %s", s, pr.msg)
		}
	}
	for _, s := range []string{"/etc/kafka/server.properties", "/opt/confluent-7.6.1/etc/kafka/kraft/server.properties", "/opt/kafka_2.13-3.7.0", "/home/kafka/~conf"} {
		if pr := checkRemotePath(s); pr != nil {
			t.Errorf("checkRemotePath(%q): %s", s, pr.msg)
		}
	}
	for _, s := range []string{"bastion", "ops@bastion.example.com", "bastion:2222", "ops@[2001:db8::1]:22", "2001:db8::1", "ops@10.0.0.1", "a,b", "ops@b1:2222,b2"} {
		if pr := checkProxyJump(s); pr != nil {
			t.Errorf("checkProxyJump(%q): %s", s, pr.msg)
		}
	}
	for _, s := range []string{"bastion:0", "bastion:99999", "bastion:x", "Ops@bastion", "[::1", "[bastion]:22", "@bastion", "a,", "a,,b", "a,-oProxyCommand=x", "a,b:0"} {
		if checkProxyJump(s) == nil {
			t.Errorf("checkProxyJump(%q) accepted", s)
		}
	}
	for _, s := range []string{"[::1", "b1]", "a[1]", "[not-ip]"} {
		if checkHost("address", s) == nil {
			t.Errorf("checkHost(%q) accepted misplaced brackets", s)
		}
	}
}
