package rules

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// deepCopy is fs with nothing shared (findings are JSON-like values).
func deepCopy(fs []Finding) []Finding {
	in := NewInterner()
	out := append([]Finding(nil), fs...)
	for i := range out {
		out[i].Evidence = append([]string(nil), out[i].Evidence...)
		if out[i].Fix != nil {
			out[i].Fix = in.cloneFix(out[i].Fix)
		}
	}
	return out
}

// TestInternerKeepsValues: interning the findings of hosts that differ
// and of hosts that are alike changes no value, makes equal texts and
// equal fixes one, and keeps fixes that differ only where JSON does not
// look (WhenUnknown, an alternative's typed fields) apart.
func TestInternerKeepsValues(t *testing.T) {
	a, b := compliantHost(), compliantHost()
	b.Sysctl["net.core.somaxconn"] = "128"
	b.Sysctl["net.ipv4.tcp_syncookies"] = "2"
	hosts := [][]Finding{Evaluate(a, DefaultProfile()), Evaluate(b, DefaultProfile()), Evaluate(b, DefaultProfile())}
	before := make([][]Finding, len(hosts))
	for i, fs := range hosts {
		before[i] = deepCopy(fs)
	}
	in := NewInterner()
	var wg sync.WaitGroup
	for _, fs := range hosts {
		wg.Add(1)
		go func() { defer wg.Done(); in.Findings(fs) }()
	}
	wg.Wait()
	for i, fs := range hosts {
		if !reflect.DeepEqual(fs, before[i]) {
			t.Fatalf("host %d: interning changed a finding:\n%+v\nwant\n%+v", i, fs, before[i])
		}
	}
	fixes := 0
	for j, fd := range hosts[1] { // hosts 1 and 2 are alike
		twin := hosts[2][j]
		if fd.Reason != "" && unsafe.StringData(fd.Reason) != unsafe.StringData(twin.Reason) {
			t.Errorf("%s: equal reasons not shared", fd.Rule)
		}
		if fd.Fix != nil {
			fixes++
			if fd.Fix != twin.Fix {
				t.Errorf("%s: equal fixes of two hosts are two values", fd.Rule)
			}
		}
	}
	if fixes == 0 {
		t.Fatal("no finding with a fix: the fix sharing is not tested")
	}
	f1 := &Fix{Summary: "s", Alternatives: []Alternative{{Text: "t", Sysctl: map[string]string{"k": "1"}}}}
	f2 := &Fix{Summary: "s", Alternatives: []Alternative{{Text: "t", Sysctl: map[string]string{"k": "2"}}}}
	f3 := &Fix{Summary: "s", Alternatives: f1.Alternatives, WhenUnknown: true}
	fs := []Finding{{Fix: f1}, {Fix: f2}, {Fix: f3}, {Fix: f1}}
	in.Findings(fs)
	if fs[0].Fix == fs[1].Fix || fs[0].Fix == fs[2].Fix || fs[0].Fix != fs[3].Fix || fs[1].Fix.Alternatives[0].Sysctl["k"] != "2" || !fs[2].Fix.WhenUnknown {
		t.Errorf("fixes that differ outside JSON were merged: %+v %+v %+v", fs[0].Fix, fs[1].Fix, fs[2].Fix)
	}
}

// TestInternerLetsTheSourceGo: an interned text cut from a large string
// (a host's gather output) is a copy, not a view into it.
func TestInternerLetsTheSourceGo(t *testing.T) {
	big := strings.Repeat("x", 1<<16) + "net.core.somaxconn = 128"
	fs := []Finding{{Observed: big[1<<16:], Evidence: []string{big[1<<16+4 : 1<<16+8]}}}
	NewInterner().Findings(fs)
	lo, hi := uintptr(unsafe.Pointer(unsafe.StringData(big))), uintptr(unsafe.Pointer(unsafe.StringData(big)))+uintptr(len(big))
	for _, s := range []string{fs[0].Observed, fs[0].Evidence[0]} {
		if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= lo && p < hi {
			t.Errorf("%q still points into the source string", s)
		}
	}
}

// TestInternerBoundsFixVariants: a fix whose typed fields differ on every
// host (one NIC name each) under one Summary keeps its value on each
// host, while at most maxFixesPerSummary variants are kept for lookups;
// a variant kept early is still shared.
func TestInternerBoundsFixVariants(t *testing.T) {
	in := NewInterner()
	nic := func(i int) *Fix {
		return &Fix{Summary: "raise the NIC rings", NIC: map[string]map[string]string{"eth" + strings.Repeat("x", i): {"rx": "4096"}}}
	}
	for i := 0; i < 100; i++ {
		fs := []Finding{{Rule: "nic-ring", Fix: nic(i)}}
		in.Findings(fs)
		if !reflect.DeepEqual(fs[0].Fix, nic(i)) {
			t.Fatalf("host %d: fix changed: %+v", i, fs[0].Fix)
		}
	}
	if n := len(in.fixes["raise the NIC rings"]); n != maxFixesPerSummary {
		t.Errorf("%d variants kept, want %d", n, maxFixesPerSummary)
	}
	a, b := []Finding{{Fix: nic(3)}}, []Finding{{Fix: nic(3)}}
	in.Findings(a)
	in.Findings(b)
	if a[0].Fix != b[0].Fix {
		t.Error("an early variant is not shared")
	}
}

// TestInternerSharesAlikeLists: hosts the rules judged alike get one
// backing array (clipped: an append copies), a host judged otherwise
// (one text, one evidence line, nil against empty evidence) its own;
// ForgetLists lets the kept lists go.
func TestInternerSharesAlikeLists(t *testing.T) {
	in := NewInterner()
	list := func() []Finding {
		fs := Evaluate(compliantHost(), DefaultProfile())
		in.Findings(fs)
		return fs
	}
	a := in.List(append(list(), Finding{})[:len(list())])
	b := in.List(list())
	if &a[0] != &b[0] {
		t.Fatal("equal lists not shared")
	}
	if len(a) != cap(a) {
		t.Errorf("shared list not clipped: len %d cap %d", len(a), cap(a))
	}
	bare := slices.IndexFunc(a, func(f Finding) bool { return f.Evidence == nil })
	if bare < 0 {
		t.Fatal("setup: every finding has evidence")
	}
	for name, change := range map[string]func(fs []Finding){
		"reason":         func(fs []Finding) { fs[3].Reason += "." },
		"evidence":       func(fs []Finding) { fs[3].Evidence = append(fs[3].Evidence, "x") },
		"empty evidence": func(fs []Finding) { fs[bare].Evidence = []string{} },
	} {
		c := list()
		change(c)
		if got := in.List(c); &got[0] == &a[0] || !reflect.DeepEqual(got, c) {
			t.Errorf("%s: a list that differs was shared or changed", name)
		}
	}
	in.ForgetLists()
	if c := in.List(list()); &c[0] == &a[0] {
		t.Error("ForgetLists: a list kept before was shared after")
	}
}

// TestInternerFleetFactsSharesMaps: alike hosts' fleet facts share their
// maps and read as the package's FleetFacts; a host whose sysctls differ
// keeps its own; nil and empty maps stay as they were.
func TestInternerFleetFactsSharesMaps(t *testing.T) {
	in := NewInterner()
	a, b, c := compliantHost(), compliantHost(), compliantHost()
	c.Sysctl["net.core.somaxconn"] = "128"
	b.Files = map[string]string{}
	fa, fb, fc := in.FleetFacts(a), in.FleetFacts(b), in.FleetFacts(c)
	if !reflect.DeepEqual(fa, FleetFacts(a)) || !reflect.DeepEqual(fc, FleetFacts(c)) {
		t.Fatal("shared fleet facts read otherwise than FleetFacts")
	}
	if reflect.ValueOf(fa.Sysctl).UnsafePointer() != reflect.ValueOf(fb.Sysctl).UnsafePointer() {
		t.Error("equal sysctl maps not shared")
	}
	if reflect.ValueOf(fa.Sysctl).UnsafePointer() == reflect.ValueOf(fc.Sysctl).UnsafePointer() || fc.Sysctl["net.core.somaxconn"] != "128" {
		t.Error("a differing sysctl map was shared")
	}
	if fb.Files == nil || len(fb.Files) != 0 {
		t.Errorf("empty files map became %v", fb.Files)
	}
	if in.FleetFacts(nil) != nil {
		t.Error("FleetFacts(nil) not nil")
	}
}
