package inventory

import (
	"strings"
	"testing"
)

func parseOK(t *testing.T, src string) *Inventory {
	t.Helper()
	inv, err := Parse("inv.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return inv
}

// assumed is "kernel|kafka" of every host, for compact comparisons.
func assumed(inv *Inventory) map[string]string {
	out := map[string]string{}
	for _, h := range inv.Hosts {
		out[h.Name] = h.AssumeKernel + "|" + h.AssumeKafka
	}
	return out
}

func TestAssumeKaudit(t *testing.T) {
	fakeHome(t)
	inv := parseOK(t, `
defaults:
  assume_kafka: "3.6.1"
groups:
  prod:
    vars:
      assume_kernel: 5.15.0-91-generic
    children: [prod-east]
    hosts:
      p1: ~
      p2: {assume_kernel: 6.1.0-13-amd64, assume_kafka: "confluent:7.6.0"}
      p3: {assume_kernel: "", assume_kafka: ""}
  prod-east:
    vars:
      assume_kernel: 6.8.0-45-generic   # child group: applies after its parent
    hosts:
      e1: ~
hosts:
  lone: ~
  sci: {assume_kafka: "3.7.0, confluent:7.6.1", assume_kernel: 4.18.0-553.el8_10+1~x86_64}
`)
	want := map[string]string{
		"p1":   "5.15.0-91-generic|3.6.1",        // group < defaults
		"p2":   "6.1.0-13-amd64|confluent:7.6.0", // host beats group and defaults
		"p3":   "|",                              // "" cancels inherited values
		"e1":   "6.8.0-45-generic|3.6.1",         // child group vars after parent
		"lone": "|3.6.1",                         // defaults only
		"sci":  "4.18.0-553.el8_10+1~x86_64|3.7.0, confluent:7.6.1",
	}
	got := assumed(inv)
	for h, w := range want {
		if got[h] != w {
			t.Errorf("%s: got %q, want %q", h, got[h], w)
		}
	}
}

func TestAssumeAnsible(t *testing.T) {
	fakeHome(t)
	inv := parseOK(t, `
all:
  vars:
    kaudit_assume_kafka: 3.6.1
  children:
    kafka:
      vars:
        kaudit_assume_kernel: 5.15.0-91-generic
      children:
        kafka_east:
          vars:
            kaudit_assume_kernel: 6.1.0
          hosts:
            b[1:2]:
      hosts:
        b3:
          kaudit_assume_kernel: 5.4.0-150-generic
          kaudit_assume_kafka: confluent:7.6.0
    other:
      hosts:
        o1:
`)
	want := map[string]string{
		"b1": "6.1.0|3.6.1", // deeper group wins
		"b2": "6.1.0|3.6.1",
		"b3": "5.4.0-150-generic|confluent:7.6.0", // host vars last
		"o1": "|3.6.1",                            // all.vars only
	}
	got := assumed(inv)
	for h, w := range want {
		if got[h] != w {
			t.Errorf("%s: got %q, want %q", h, got[h], w)
		}
	}
}

func TestAssumeErrors(t *testing.T) {
	fakeHome(t)
	tests := []struct {
		name, src string
		want      []string
	}{{"kaudit", `
defaults:
  assume_kernel: latest
groups:
  prod:
    vars:
      assume_kafka: three
    hosts:
      b1: {assume_kernel: "6.1.0; reboot"}
      b2: {assume_kafka: "kraft:3.6.1"}
      b3:
        assume_kafka: 3.6.1,3.7.0
        assume_kernel: true
hosts:
  b4: {assume_kernel: "{{ kernel }}", assume_kafka: "3.-6.1"}
  b5: {assume_kernel: 6.1.0, assume_kafka: "3"}
  b6: {assume_kernl: 6.1.0}
`, []string{
		`inv.yaml:3: defaults.assume_kernel: kernel release "latest" does not start with a digit (hint: use a kernel release as uname -r prints it, e.g. 5.15.0-91-generic: letters, digits and . _ - + ~ only)`,
		`inv.yaml:7: groups.prod.vars.assume_kafka: invalid Kafka version "three" (hint: use a version such as 3.6.1, or confluent:7.6.0 for Confluent Platform (both: 3.6.1,confluent:7.6.0))`,
		`inv.yaml:9: groups.prod.hosts.b1.assume_kernel: kernel release "6.1.0; reboot" contains ';', which is not allowed (hint: use a kernel release as uname -r prints it, e.g. 5.15.0-91-generic: letters, digits and . _ - + ~ only)`,
		`inv.yaml:10: groups.prod.hosts.b2.assume_kafka: unknown Kafka distribution "kraft" in "kraft:3.6.1" (hint: prefix the version with apache: or confluent:, or with nothing for Apache Kafka)`,
		`inv.yaml:12: groups.prod.hosts.b3.assume_kafka: "3.6.1,3.7.0" gives two versions for apache (hint: give one version per distribution)`,
		`inv.yaml:13: groups.prod.hosts.b3.assume_kernel: expected a string, got the boolean true`,
		`inv.yaml:15: hosts.b4.assume_kernel: kernel release "{{ kernel }}" contains '{', which is not allowed (hint: kaudit does not evaluate Jinja templates; write the value out)`,
		`inv.yaml:15: hosts.b4.assume_kafka: invalid Kafka version "3.-6.1"`,
		`inv.yaml:16: hosts.b5.assume_kafka: invalid Kafka version "3"`,
		`inv.yaml:17: hosts.b6.assume_kernl: unknown key "assume_kernl" (hint: did you mean "assume_kernel"?)`,
	}}, {"ansible", `
all:
  vars:
    kaudit_assume_kernel: "` + strings.Repeat("5", 129) + `"
  hosts:
    b1:
      kaudit_assume_kafka: "confluent:7.6"
      kaudit_asume_kafka: 3.6.1
      kaudit_assume: 3.6.1
    b2:
      kaudit_assume_kernel: 6.1.0 x86
`, []string{
		`inv.yaml:4: all.vars.kaudit_assume_kernel: kernel release is longer than 128 characters`,
		`inv.yaml:8: all.hosts.b1.kaudit_asume_kafka: unknown kaudit variable "kaudit_asume_kafka" (hint: did you mean "kaudit_assume_kafka"?)`,
		`inv.yaml:9: all.hosts.b1.kaudit_assume: unknown kaudit variable "kaudit_assume" (hint: known keys: kaudit_assume_kafka, kaudit_assume_kernel, kaudit_connect_timeout,`,
		`inv.yaml:11: all.hosts.b2.kaudit_assume_kernel: kernel release "6.1.0 x86" contains ' ', which is not allowed`,
	}}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := Parse("inv.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("accepted: %+v", inv.Hosts)
			}
			errs := Errors(err)
			if len(errs) != len(tc.want) {
				t.Errorf("got %d errors, want %d:\n%v", len(errs), len(tc.want), err)
			}
			for i, w := range tc.want {
				if i >= len(errs) {
					break
				}
				if got := errs[i].Error(); !strings.HasPrefix(got, w) {
					t.Errorf("error %d:\n got  %s\n want %s", i, got, w)
				}
			}
		})
	}
}

func TestCheckAssumeValues(t *testing.T) {
	for _, s := range []string{"6.1.0", "5.15.0-91-generic", "3.10.0-1160.95.1.el7.x86_64", "6.1.0+rpt-rpi-v8", "5.4.0~rc1", "4.18.0_1"} {
		if pr := checkKernelRelease(s); pr != nil {
			t.Errorf("checkKernelRelease(%q): %s", s, pr.msg)
		}
	}
	for _, s := range []string{"3.6.1", "3.6", "3.6.1.1", "apache:3.6.1", "Confluent:7.6.0", "3.6.1,confluent:7.6.0", " 3.6.1 , confluent:7.6.0 "} {
		if pr := checkAssumeKafka(s); pr != nil {
			t.Errorf("checkAssumeKafka(%q): %s", s, pr.msg)
		}
	}
	for _, s := range []string{"-6.1.0", "6.1.0/x", "6.1.0\n", "v6.1.0", strings.Repeat("6", 129)} {
		if checkKernelRelease(s) == nil {
			t.Errorf("checkKernelRelease(%q) accepted", s)
		}
	}
	for _, s := range []string{"3", "3.6.1.1.1", "3..1", "+3.6.1", "3.6.1,", "confluent:", ":3.6.1", "3.6.1;ls", "3.6.1,apache:3.7.0"} {
		if checkAssumeKafka(s) == nil {
			t.Errorf("checkAssumeKafka(%q) accepted", s)
		}
	}
}
