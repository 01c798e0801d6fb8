package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/rules"
)

// Parsed back with plain structs shaped like the Jenkins/Surefire schema.
type xSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []xSuite `xml:"testsuite"`
}

type xSuite struct {
	Name      string  `xml:"name,attr"`
	Tests     int     `xml:"tests,attr"`
	Failures  int     `xml:"failures,attr"`
	Errors    int     `xml:"errors,attr"`
	Skipped   int     `xml:"skipped,attr"`
	Time      string  `xml:"time,attr"`
	Timestamp string  `xml:"timestamp,attr"`
	Props     []xProp `xml:"properties>property"`
	Cases     []xCase `xml:"testcase"`
}

type xProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xCase struct {
	Name      string    `xml:"name,attr"`
	ClassName string    `xml:"classname,attr"`
	Time      string    `xml:"time,attr"`
	Failure   *xProblem `xml:"failure"`
	Error     *xProblem `xml:"error"`
	Skipped   *xProblem `xml:"skipped"`
	SystemOut *string   `xml:"system-out"`
}

type xProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func parseJUnit(t *testing.T, out string) xSuites {
	t.Helper()
	if !strings.HasPrefix(out, `<?xml version="1.0" encoding="UTF-8"?>`) {
		t.Error("no XML declaration")
	}
	var doc xSuites
	dec := xml.NewDecoder(strings.NewReader(out))
	dec.Strict = true
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("junit output is not well-formed XML: %v", err)
	}
	return doc
}

func TestJUnitFixture(t *testing.T) {
	doc := parseJUnit(t, renderString(t, "junit", loadFixture(t), Options{}))
	if len(doc.Suites) != 4 {
		t.Fatalf("%d suites, want 4 (one per host)", len(doc.Suites))
	}
	// Counts are consistent at every level.
	var tests, failures, errors, skipped int
	for _, s := range doc.Suites {
		var f, e, sk int
		for _, c := range s.Cases {
			if c.ClassName != "kaudit."+s.Name {
				t.Errorf("%s/%s: classname %q", s.Name, c.Name, c.ClassName)
			}
			switch {
			case c.Failure != nil:
				f++
			case c.Error != nil:
				e++
			case c.Skipped != nil:
				sk++
			}
		}
		if s.Tests != len(s.Cases) || s.Failures != f || s.Errors != e || s.Skipped != sk {
			t.Errorf("%s: attributes tests=%d failures=%d errors=%d skipped=%d, cases say %d/%d/%d/%d",
				s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, len(s.Cases), f, e, sk)
		}
		if s.Timestamp != "2025-03-14T09:30:00" {
			t.Errorf("%s: timestamp %q", s.Name, s.Timestamp)
		}
		tests, failures, errors, skipped = tests+s.Tests, failures+s.Failures, errors+s.Errors, skipped+s.Skipped
	}
	if doc.Tests != tests || doc.Failures != failures || doc.Errors != errors {
		t.Errorf("testsuites totals %d/%d/%d, suites sum to %d/%d/%d",
			doc.Tests, doc.Failures, doc.Errors, tests, failures, errors)
	}
	// 15 findings on each of 3 hosts + one connect case; 14 fail + 3 unknown; 1 skip + 1 waived.
	if doc.Tests != 46 || doc.Failures != 17 || doc.Errors != 1 || skipped != 2 {
		t.Errorf("totals tests=%d failures=%d errors=%d skipped=%d, want 46/17/1/2", doc.Tests, doc.Failures, doc.Errors, skipped)
	}

	find := func(host, name string) xCase {
		for _, s := range doc.Suites {
			if s.Name != host {
				continue
			}
			for _, c := range s.Cases {
				if c.Name == name {
					return c
				}
			}
		}
		t.Fatalf("no testcase %s/%s", host, name)
		return xCase{}
	}
	if c := find("kafka-a1", "kernel-synack-wscale"); c.Failure == nil || c.Failure.Type != "critical" ||
		!strings.HasPrefix(c.Failure.Message, "kernel predates commit 909172a") ||
		!strings.Contains(c.Failure.Text, "observed: Debian 4.19.152-1") || !strings.Contains(c.Failure.Text, "expected: >= 4.19.158") {
		t.Errorf("critical failure: %+v", c.Failure)
	}
	if c := find("kafka-c1", "nic-offload"); c.Failure == nil || c.Failure.Type != "unknown" {
		t.Errorf("unknown must be a failure of type unknown: %+v", c)
	}
	if c := find("kafka-c1", "nic-ring"); c.Failure != nil || c.Skipped == nil || !strings.HasPrefix(c.Skipped.Message, "waived: waived (was unknown) by waivers.yaml:3") {
		t.Errorf("waived must be skipped with the waiver: %+v", c)
	}
	if c := find("kafka-a1", "kafka-backlog-config"); c.Skipped == nil || !strings.Contains(c.Skipped.Message, "added in 3.2") {
		t.Errorf("skip: %+v", c)
	}
	if c := find("kafka-b1", "syn-backlog"); c.Failure != nil || c.Error != nil || c.SystemOut == nil || !strings.HasPrefix(*c.SystemOut, "warn: ") {
		t.Errorf("warn must pass with system-out: %+v", c)
	}
	if c := find("kafka-b1", "somaxconn"); c.Failure != nil || c.Error != nil || c.Skipped != nil || c.SystemOut != nil {
		t.Errorf("pass must be a bare testcase: %+v", c)
	}
	if c := find("kafka-d1", "connect"); c.Error == nil || c.Error.Type != "timeout" || !strings.Contains(c.Error.Message, "i/o timeout") {
		t.Errorf("unreachable host: %+v", c)
	}
}

func TestJUnitRuleErrorAndEscaping(t *testing.T) {
	r := &Report{SchemaVersion: SchemaVersion, Hosts: []Host{{Name: `h&"<1>`, Findings: []rules.Finding{
		{Rule: "r1", Status: rules.Error, Severity: rules.High, Reason: "parse: bad \x00 byte ]]> <x>"},
		{Rule: "r2", Status: rules.Fail, Severity: rules.Low, Reason: "quote \" and 'apos' & amp", Observed: "a\nb"},
	}}}}
	Summarize(r)
	var buf bytes.Buffer
	if err := Render(&buf, "junit", r, Options{}); err != nil {
		t.Fatal(err)
	}
	doc := parseJUnit(t, buf.String())
	s := doc.Suites[0]
	if s.Name != `h&"<1>` || s.Errors != 1 || s.Failures != 1 {
		t.Fatalf("suite %+v", s)
	}
	if s.Cases[0].Error == nil || s.Cases[0].Error.Type != "rule-error" {
		t.Errorf("rule error: %+v", s.Cases[0])
	}
	if s.Cases[1].Failure.Message != "quote \" and 'apos' & amp" || !strings.Contains(s.Cases[1].Failure.Text, `observed: a\nb`) { // a newline in a value is shown, not obeyed
		t.Errorf("failure round trip: %+v", s.Cases[1].Failure)
	}
}

// junitSchema is what Jenkins' junit-10.xsd (jenkinsci/xunit-plugin, the
// schema the junit plugin's format follows) allows: for each element, its
// attributes, the required ones, and its child elements.
var junitSchema = map[string]struct {
	attrs, required, children []string
}{
	"testsuites": {attrs: []string{"name", "time", "tests", "failures", "disabled", "errors"}, children: []string{"testsuite"}},
	"testsuite": {
		attrs: []string{"name", "tests", "failures", "errors", "time", "disabled", "skipped", "skips", "timestamp",
			"hostname", "id", "package", "assertions", "file", "skip", "log", "url"},
		required: []string{"tests"},
		children: []string{"testsuite", "properties", "testcase", "system-out", "system-err"},
	},
	"properties": {children: []string{"property"}},
	"property":   {attrs: []string{"name", "value"}, required: []string{"name", "value"}},
	"testcase": {
		attrs:    []string{"name", "assertions", "time", "timestamp", "classname", "status", "class", "file", "line", "log", "group", "url"},
		required: []string{"name"},
		children: []string{"skipped", "error", "failure", "system-out", "system-err"},
	},
	"failure":    {attrs: []string{"type", "message"}},
	"error":      {attrs: []string{"type", "message"}},
	"skipped":    {attrs: []string{"type", "message"}},
	"system-out": {},
	"system-err": {},
}

func TestJUnitSchema(t *testing.T) {
	r := loadFixture(t)
	dec := xml.NewDecoder(strings.NewReader(renderString(t, "junit", r, Options{})))
	has := func(list []string, s string) bool {
		for _, v := range list {
			if v == s {
				return true
			}
		}
		return false
	}
	var stack []string
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch el := tok.(type) {
		case xml.StartElement:
			name := el.Name.Local
			rule, ok := junitSchema[name]
			switch {
			case !ok:
				t.Errorf("element <%s> not in the schema", name)
			case len(stack) == 0 && name != "testsuites":
				t.Errorf("root is <%s>, want <testsuites>", name)
			case len(stack) > 0 && !has(junitSchema[stack[len(stack)-1]].children, name):
				t.Errorf("<%s> not allowed inside <%s>", name, stack[len(stack)-1])
			}
			seen := map[string]bool{}
			for _, a := range el.Attr {
				seen[a.Name.Local] = true
				if !has(rule.attrs, a.Name.Local) {
					t.Errorf("<%s %s=...> not allowed by the schema", name, a.Name.Local)
				}
			}
			for _, req := range rule.required {
				if !seen[req] {
					t.Errorf("<%s> lacks required %s", name, req)
				}
			}
			stack = append(stack, name)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 && strings.TrimSpace(string(el)) != "" {
				switch stack[len(stack)-1] {
				case "failure", "error", "skipped", "system-out", "system-err":
				default:
					t.Errorf("text inside <%s>", stack[len(stack)-1])
				}
			}
		}
	}
}
