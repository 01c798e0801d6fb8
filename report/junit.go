package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/rules"
)

func init() { Register("junit", renderJUnit) }

// JUnit XML as Jenkins (junit/xunit plugins, junit-10.xsd), GitLab and
// Surefire read it: one <testsuite> per host, one <testcase> per finding.
//
//	fail    → <failure type="<severity>" message="<reason>">
//	unknown → <failure type="unknown" ...>: not proven safe is not a pass
//	error   → <error type="rule-error" ...>: the rule could not be evaluated
//	skip    → <skipped message="<reason>"/>
//	warn    → passes, the warning goes to the testcase's <system-out>
//	pass    → passes
//
// A host that could not be audited gets one testcase "connect" carrying
// <error type="<kind>" message="<message>"/>.

// junitSuites has no "skipped" attribute: Jenkins' junit-10.xsd does not
// allow one on <testsuites> (each <testsuite> carries its own).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Hostname   string          `xml:"hostname,attr,omitempty"`
	Properties *junitPropList  `xml:"properties,omitempty"`
	Cases      []junitTestCase `xml:"testcase"`
}

type junitPropList struct {
	Props []junitProp `xml:"property"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitTestCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

// junitText is element text written with real newlines (encoding/xml's
// ",chardata" writes them as &#xA;, which CI UIs then show verbatim).
type junitText string

func (t junitText) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	return encodeTextElement(e, start, string(t))
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

type junitProblem struct {
	Message string
	Type    string
	Text    string
}

func (p junitProblem) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	start.Attr = append(start.Attr,
		xml.Attr{Name: xml.Name{Local: "message"}, Value: p.Message},
		xml.Attr{Name: xml.Name{Local: "type"}, Value: p.Type})
	return encodeTextElement(e, start, p.Text)
}

// encodeTextElement writes start, text as character data, end. EncodeToken
// escapes markup and replaces characters XML cannot carry.
func encodeTextElement(e *xml.Encoder, start xml.StartElement, text string) error {
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	if text != "" {
		if err := e.EncodeToken(xml.CharData(text)); err != nil {
			return err
		}
	}
	return e.EncodeToken(start.End())
}

func renderJUnit(w io.Writer, r *Report, _ Options) error {
	doc := buildJUnit(r)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func buildJUnit(r *Report) junitSuites {
	doc := junitSuites{Name: "kaudit", Time: seconds(r.DurationMS)}
	stamp := ""
	if !r.StartedAt.IsZero() {
		// The Ant/Jenkins schema wants ISO 8601 without a zone: UTC implied.
		stamp = r.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	for i := range r.Hosts {
		h := &r.Hosts[i]
		s := junitSuite{
			Name:      termsafe.Line(h.Name),
			Time:      seconds(h.DurationMS),
			Timestamp: stamp,
			Hostname:  termsafe.Line(h.Address),
		}
		class := "kaudit." + termsafe.Line(h.Name)
		props := []junitProp{{Name: "address", Value: termsafe.Line(h.Address)}}
		if len(h.Groups) > 0 {
			props = append(props, junitProp{Name: "groups", Value: termsafe.Line(strings.Join(h.Groups, ","))})
		}
		if h.Error != nil {
			s.Cases = append(s.Cases, junitTestCase{
				Name: "connect", ClassName: class, Time: seconds(h.DurationMS),
				Error: &junitProblem{Type: termsafe.Line(string(h.Error.Kind)), Message: termsafe.Line(h.Error.Message), Text: termsafe.Block(h.Error.Message)},
			})
		} else {
			props = append(props,
				junitProp{Name: "score", Value: fmt.Sprint(h.Score)},
				junitProp{Name: "kernel", Value: termsafe.Line(kernelRelease(h.Facts))},
				junitProp{Name: "kafka", Value: termsafe.Line(kafkaVersion(h.Facts))},
				junitProp{Name: "backlog", Value: effectiveBacklog(h.Facts)},
			)
			for _, f := range h.Findings {
				s.Cases = append(s.Cases, junitCase(class, f))
			}
		}
		s.Properties = &junitPropList{Props: props}
		for _, c := range s.Cases {
			s.Tests++
			switch {
			case c.Failure != nil:
				s.Failures++
			case c.Error != nil:
				s.Errors++
			case c.Skipped != nil:
				s.Skipped++
			}
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Suites = append(doc.Suites, s)
	}
	if s, ok := junitCluster(r.Cluster); ok {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Suites = append(doc.Suites, s)
	}
	return doc
}

// junitCluster is the cluster (scan --bootstrap) as a suite: one passing
// testcase per broker matched and proven, one failure per cluster-level
// finding.
func junitCluster(c *Cluster) (junitSuite, bool) {
	if c == nil {
		return junitSuite{}, false
	}
	class := "kaudit.cluster." + termsafe.Line(c.ID)
	s := junitSuite{Name: "cluster " + termsafe.Line(c.ID), Time: "0",
		Properties: &junitPropList{Props: []junitProp{{Name: "bootstrap", Value: termsafe.Line(c.Bootstrap)}}}}
	if q := clusterQuorumLine(c); q != "" {
		s.Properties.Props = append(s.Properties.Props, junitProp{Name: "controller_quorum", Value: termsafe.Line(q)})
	}
	for _, b := range c.Brokers {
		tc := junitTestCase{Name: fmt.Sprintf("broker-%d", b.NodeID), ClassName: class, Time: "0"}
		out := junitText(termsafe.Block(clusterBrokerLine(b) + "\n" + b.Detail + "\n" + clusterKafkaLine(b) + "\n" + clusterConfigLine(b)))
		tc.SystemOut = &out
		s.Cases = append(s.Cases, tc)
	}
	for _, p := range c.Problems {
		msg := termsafe.Line(p.Message)
		tc := junitTestCase{Name: termsafe.Line(p.Rule), ClassName: class, Time: "0"}
		if p.Waived != "" {
			tc.Skipped = &junitSkipped{Message: "waived " + termsafe.Line(p.Waived) + " (" + msg + ")"}
			s.Skipped++
		} else {
			tc.Failure = &junitProblem{Type: termsafe.Line(p.Severity), Message: msg, Text: msg}
			s.Failures++
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Tests = len(s.Cases)
	return s, true
}

// junitCase is one finding's testcase; every string from the finding is
// made visible with termsafe (encoding/xml replaces C0 controls with
// U+FFFD but lets DEL, C1 controls and bidi overrides through).
func junitCase(class string, f rules.Finding) junitTestCase {
	reason := termsafe.Line(f.Reason)
	c := junitTestCase{Name: termsafe.Line(f.Rule), ClassName: class, Time: "0"}
	switch f.Status {
	case rules.Fail:
		c.Failure = &junitProblem{Type: string(f.Severity), Message: reason, Text: junitDetail(f)}
	case rules.Unknown:
		c.Failure = &junitProblem{Type: string(rules.Unknown), Message: "not proven safe: " + reason, Text: junitDetail(f)}
	case rules.Error:
		c.Error = &junitProblem{Type: "rule-error", Message: reason, Text: junitDetail(f)}
	case rules.Skip:
		c.Skipped = &junitSkipped{Message: reason}
	case rules.Waived:
		c.Skipped = &junitSkipped{Message: "waived: " + termsafe.Line(waiverNote(f))}
	case rules.Warn:
		out := junitText("warn: " + junitDetail(f))
		c.SystemOut = &out
	}
	return c
}

// junitDetail is the body of a failure: what CI shows when it is expanded.
func junitDetail(f rules.Finding) string {
	f = safeFinding(f)
	var b strings.Builder
	if f.Title != "" {
		fmt.Fprintf(&b, "%s\n", f.Title)
	}
	fmt.Fprintf(&b, "severity: %s\n", f.Severity)
	for _, l := range [][2]string{{"observed", f.Observed}, {"expected", f.Expected}, {"reason", f.Reason}, {"decided by", string(f.Source)}} {
		if l[1] != "" {
			fmt.Fprintf(&b, "%s: %s\n", l[0], l[1])
		}
	}
	for _, e := range f.Evidence {
		fmt.Fprintf(&b, "evidence: %s\n", e)
	}
	if f.Fix != nil && f.Fix.Summary != "" {
		fmt.Fprintf(&b, "fix: %s\n", f.Fix.Summary)
	}
	return b.String()
}

// safeFinding is f with the text junitDetail shows made visible.
func safeFinding(f rules.Finding) rules.Finding {
	f.Title, f.Observed, f.Expected, f.Reason, f.Source = termsafe.Line(f.Title), termsafe.Line(f.Observed), termsafe.Line(f.Expected), termsafe.Line(f.Reason), rules.Source(termsafe.Line(string(f.Source)))
	ev := make([]string, len(f.Evidence))
	for i, e := range f.Evidence {
		ev[i] = termsafe.Line(e)
	}
	f.Evidence = ev
	if f.Fix != nil {
		fix := *f.Fix
		fix.Summary = termsafe.Line(fix.Summary)
		f.Fix = &fix
	}
	return f
}

// seconds formats milliseconds as JUnit's decimal seconds.
func seconds(ms int64) string {
	ms = max(ms, 0)
	return fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
}
