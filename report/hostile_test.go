package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/rules"
)

// hostileInputs are what a compromised or odd host can put in any string
// it reports, each with the visible form termsafe gives it.
var hostileInputs = []struct{ name, raw, shown string }{
	{"CSI clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
	{"OSC 0 window title", "\x1b]0;pwned\a", `\x1b]0;pwned\a`},
	{"OSC 52 clipboard", "\x1b]52;c;Y3VybCBldmlsfHNo\x1b\\", `\x1b]52;c;Y3VybCBldmlsfHNo\x1b\`},
	{"BEL", "\a\a", `\a\a`},
	{"bidi override U+202E", "\u202eevil\u202c", `\u202eevil\u202c`},
	{"invalid UTF-8", "\xff\xfe", `\xff\xfe`},
	{"C1 CSI 0x9b raw", "\x9b31m", `\x9b31m`},
	{"C1 CSI U+009B", "\u009b31m", `\u009b31m`},
}

// hostileReport is the fixture fleet with hostile text in every string a
// host reports: kernel release, os-release PRETTY_NAME, server.properties
// values and its path, the command line's jar, sysctl values and the
// files they persist in, ss and ethtool output, SYN-flood log lines,
// section messages and the remote side's error text. The findings are
// evaluated again from those facts, so reasons and observed values quote
// the hostile text the way rules really do.
func hostileReport(t *testing.T, bad string) *Report {
	t.Helper()
	r := loadFixture(t)
	for i := range r.Hosts {
		h := &r.Hosts[i]
		if h.Error != nil {
			// The name comes from the inventory, not the host; it is here
			// so that the Prometheus labels carry hostile text too.
			h.Name += bad
			h.Error.Message += " remote said: " + bad
			continue
		}
		f := h.Facts
		f.Kernel.Release += bad
		f.Kernel.Pretty = "Debian GNU/Linux 10 " + bad
		f.Kernel.Signature += bad
		for k := range f.Sysctl {
			if strings.Contains(k, "congestion") || strings.Contains(k, "qdisc") || strings.Contains(k, "tcp_rmem") {
				f.Sysctl[k] += bad
			}
		}
		for k, p := range f.Persisted {
			p.File += bad
			f.Persisted[k] = p
		}
		for j := range f.Listeners {
			f.Listeners[j].Process = "java" + bad
			f.Listeners[j].Addr += bad
		}
		if f.Kafka != nil {
			f.Kafka.Jar += bad
			f.Kafka.Config += bad
			for k := range f.Kafka.Properties {
				f.Kafka.Properties[k] += bad
			}
		}
		for j := range f.NICs {
			f.NICs[j].Driver += bad
			f.NICs[j].RingErr += bad
		}
		f.Evidence.SynFlood = append(f.Evidence.SynFlood, "Possible SYN flooding on port 9092 "+bad)
		for k, s := range f.Sections {
			s.Message += bad
			f.Sections[k] = s
		}
		h.Findings = rules.Evaluate(f, rules.DefaultProfile())
	}
	Summarize(r)
	return r
}

// ourSGR is the colour codes the table writes itself (Options.Color).
var ourSGR = regexp.MustCompile("\x1b\\[[0-9;]*m")

// rawControl returns the first character in out a terminal would act on,
// with some context, or "" when there is none. Newline and tab are text.
func rawControl(out string) string {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		bad := r == utf8.RuneError && size == 1 || r != '\n' && r != '\t' && termsafe.Acts(r)
		if bad {
			lo, hi := max(0, i-30), min(len(out), i+30)
			return fmt.Sprintf("%q at byte %d in %q", out[i:i+size], i, out[lo:hi])
		}
		i += size
	}
	return ""
}

func TestHostileTextEveryRenderer(t *testing.T) {
	type variant struct {
		format string
		opt    Options
	}
	var variants []variant
	for _, f := range Formats() {
		variants = append(variants, variant{f, Options{}})
	}
	variants = append(variants,
		variant{"table", Options{Width: 80}}, variant{"table", Options{Width: 120, Verbose: true}},
		variant{"table", Options{Width: 80, Verbose: true, Color: true}})
	for _, in := range hostileInputs {
		r := hostileReport(t, in.raw)
		for _, v := range variants {
			t.Run(fmt.Sprintf("%s/%s/%+v", in.name, v.format, v.opt), func(t *testing.T) {
				out := renderString(t, v.format, r, v.opt)
				if v.opt.Color {
					out = ourSGR.ReplaceAllString(out, "")
				}
				if c := rawControl(out); c != "" {
					t.Fatalf("raw control character from a host: %s", c)
				}
				if v.format == "json" {
					return // checked below: exact values
				}
				// The host's text is there, made visible, not dropped.
				if !strings.Contains(out, in.shown) && !strings.Contains(out, strings.ReplaceAll(in.shown, `\`, `\\`)) {
					t.Errorf("output does not show the hostile text as %s", in.shown)
				}
			})
		}
		t.Run(in.name+"/json keeps the exact value", func(t *testing.T) {
			var back Report
			if err := json.Unmarshal([]byte(renderString(t, "json", r, Options{})), &back); err != nil {
				t.Fatal(err)
			}
			want := r.Hosts[0].Facts.Kernel.Release
			if !utf8.ValidString(in.raw) { // encoding/json's own rule: each bad byte becomes U+FFFD
				b, _ := json.Marshal(want)
				json.Unmarshal(b, &want)
			}
			if got := back.Hosts[0].Facts.Kernel.Release; got != want {
				t.Errorf("kernel release = %q, want %q", got, want)
			}
			if utf8.ValidString(in.raw) && !reflect.DeepEqual(back.Hosts[1].Findings, r.Hosts[1].Findings) {
				t.Error("findings do not round-trip exactly")
			}
		})
		t.Run(in.name+"/fix plan", func(t *testing.T) {
			var buf bytes.Buffer
			var plans []remediate.HostPlan
			for _, h := range r.Hosts {
				if h.Facts != nil {
					plans = append(plans, remediate.PlanHost(h.Name, h.Facts, h.Findings, remediate.Selector{}))
				}
			}
			remediate.RenderPlan(&buf, plans, remediate.PlanOptions{Width: 80})
			if c := rawControl(buf.String()); c != "" {
				t.Fatalf("raw control character from a host in the plan: %s", c)
			}
			if !strings.Contains(buf.String(), in.shown) {
				t.Errorf("plan does not show the hostile text as %s:\n%s", in.shown, buf.String())
			}
		})
	}
}

// The grouped view (more than GroupedAbove hosts) shows hostile text made
// visible too: in pattern rows, actions, and the HTML page's host data.
func TestHostileTextGrouped(t *testing.T) {
	for _, in := range hostileInputs {
		small := hostileReport(t, in.raw)
		r := *small
		r.Hosts = nil
		for i := 0; len(r.Hosts) <= GroupedAbove; i++ {
			h := small.Hosts[i%len(small.Hosts)]
			h.Name = fmt.Sprintf("%s-%d", h.Name, i)
			h.Groups = []string{"g" + in.raw}
			r.Hosts = append(r.Hosts, h)
		}
		Summarize(&r)
		for _, v := range []struct {
			format string
			opt    Options
		}{{"table", Options{Width: 120}}, {"table", Options{Width: 80, Hosts: true, Color: true}}, {"markdown", Options{}}, {"html", Options{}}} {
			t.Run(fmt.Sprintf("%s/%s/%+v", in.name, v.format, v.opt), func(t *testing.T) {
				out := ourSGR.ReplaceAllString(renderString(t, v.format, &r, v.opt), "")
				if !strings.Contains(out, "What to fix first") {
					t.Fatal("not grouped")
				}
				if c := rawControl(out); c != "" {
					t.Fatalf("raw control character from a host: %s", c)
				}
				if !strings.Contains(out, in.shown) && !strings.Contains(out, strings.ReplaceAll(in.shown, `\`, `\\`)) {
					t.Errorf("output does not show the hostile text as %s", in.shown)
				}
			})
		}
	}
}
