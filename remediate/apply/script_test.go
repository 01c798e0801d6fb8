package apply

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/rules"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const (
	tMarker = "KAUDIT_000000000000000000000001"
	tRun    = "20260102T030405Z-1a2b3c4d"
)

// rendered is a script with its static parts (remote.SayFunc, sh/lib.sh,
// the step's sh/*.sh, each embedded as is and checked by shellcheck and
// by the tests that run them) replaced by a line naming them: what the
// golden file keeps is what Go renders (the header and its records), so
// a change to sh/lib.sh rewrites no golden file. The script must hold
// each part exactly once, at its place.
func rendered(t *testing.T, s []byte, body, bodyName string) []byte {
	t.Helper()
	parts := []struct{ text, name string }{{remote.SayFunc, "internal/remote.SayFunc"}, {libSh, "remediate/apply/sh/lib.sh"}, {body, "remediate/apply/sh/" + bodyName}}
	out := string(s)
	for _, p := range parts {
		if strings.Count(out, p.text) != 1 {
			t.Fatalf("the script holds %s %d times, want once", p.name, strings.Count(out, p.text))
		}
		out = strings.Replace(out, p.text, "# [embedded: "+p.name+"]\n", 1)
	}
	if !strings.HasSuffix(out, "# [embedded: remediate/apply/sh/"+bodyName+"]\n") {
		t.Fatalf("the script does not end with sh/%s", bodyName)
	}
	return []byte(out)
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
	}
}

// shSyntax checks a script with sh -n (dash on Debian).
func shSyntax(t *testing.T, script []byte) {
	t.Helper()
	for _, sh := range []string{"/bin/sh", "/bin/dash", "/bin/bash"} {
		if _, err := os.Stat(sh); err != nil {
			continue
		}
		cmd := exec.Command(sh, "-n")
		cmd.Stdin = strings.NewReader(string(script))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", sh, err, out)
		}
	}
}

func sampleApply() ApplyParams {
	return ApplyParams{
		Marker: tMarker, RunID: tRun,
		Runtime: []RuntimeWrite{
			{Key: "net.core.somaxconn", Before: "128", To: "4096"},
			{Key: "net.ipv4.tcp_rmem", Before: "4096 131072 6291456", To: "4096 87380 134217728"},
		},
		Files: []FileWrite{
			{Path: "/opt/kafka/config/server.properties", Existed: true, OldSHA: SHA256([]byte("a=1\n")),
				Content: []byte("# it's $HOME `id` $(reboot)\na=1\nsocket.listen.backlog.size=4096\n")},
			{Path: "/etc/sysctl.d/99-kaudit.conf", Content: []byte("net.core.somaxconn = 4096\n"), Mode: "0644"},
		},
	}
}

func TestApplyScriptGolden(t *testing.T) {
	s, err := ApplyScript(sampleApply())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "apply.sh", rendered(t, s, applySh, "apply.sh"))
	shSyntax(t, s)
	// The file content travels only as base64.
	if strings.Contains(string(s), "$(reboot)") || strings.Contains(string(s), "socket.listen.backlog.size=4096") {
		t.Error("file content appears in clear in the script")
	}
}

func TestReadScriptGolden(t *testing.T) {
	s, err := ReadScript(ReadParams{Marker: tMarker, Files: []string{"/etc/sysctl.d/99-kaudit.conf", "/opt/kafka/config/server.properties"}, Sysctls: []string{"net.core.somaxconn"}})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "read.sh", rendered(t, s, readSh, "read.sh"))
	shSyntax(t, s)
}

func TestRollbackScriptGolden(t *testing.T) {
	s, err := RollbackScript(RollbackParams{Marker: tMarker, RunID: tRun, Wait: 5,
		Backups: []remediate.Backup{
			{Path: "/opt/kafka/config/server.properties", Existed: true, SHA256: SHA256([]byte("a=1\n")), Stored: RunDir(tRun) + "/file-0"},
			{Path: "/etc/sysctl.d/99-kaudit.conf"},
		},
		Runtime: []remediate.RuntimeValue{{Kind: remediate.KindSysctl, Key: "net.core.somaxconn", Before: "128", After: "4096"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "rollback.sh", rendered(t, s, rollbackSh, "rollback.sh"))
	shSyntax(t, s)
}

// Every injection attempt is refused before a script exists.
func TestInjectionRejected(t *testing.T) {
	evil := []string{"x'; reboot; '", "$(reboot)", "`reboot`", "a\nreboot", "a;b", "a b", "../../etc/shadow", "a\tb"}
	for _, e := range evil {
		p := sampleApply()
		p.RunID = e
		if _, err := ApplyScript(p); err == nil {
			t.Errorf("run id %q accepted", e)
		}
		p = sampleApply()
		p.Runtime[0].Key = "net.core." + e
		if _, err := ApplyScript(p); err == nil {
			t.Errorf("sysctl key %q accepted", p.Runtime[0].Key)
		}
		p = sampleApply()
		p.Runtime[0].To = "1" + e
		if _, err := ApplyScript(p); err == nil && e != "a b" {
			t.Errorf("sysctl value %q accepted", p.Runtime[0].To)
		}
		p = sampleApply()
		p.Runtime[0].Before = "1" + e
		if _, err := ApplyScript(p); err == nil && e != "a b" {
			t.Errorf("current sysctl value %q accepted", p.Runtime[0].Before)
		}
		p = sampleApply()
		p.Files[0].Path = "/opt/" + e
		if _, err := ApplyScript(p); err == nil {
			t.Errorf("path %q accepted", p.Files[0].Path)
		}
		p = sampleApply()
		p.Marker = e
		if _, err := ApplyScript(p); err == nil {
			t.Errorf("marker %q accepted", e)
		}
		if _, err := ReadScript(ReadParams{Marker: tMarker, Files: []string{"/etc/" + e}}); err == nil {
			t.Errorf("read path %q accepted", e)
		}
		if _, err := RollbackScript(RollbackParams{Marker: tMarker, RunID: tRun, Backups: []remediate.Backup{{Path: "/etc/" + e}}}); err == nil {
			t.Errorf("rollback path %q accepted", e)
		}
		if _, err := RollbackScript(RollbackParams{Marker: tMarker, RunID: tRun, Runtime: []remediate.RuntimeValue{{Key: "net.core.somaxconn", Before: "1" + e}}}); err == nil && e != "a b" {
			t.Errorf("rollback value %q accepted", e)
		}
	}
	// Paths: dot components, relative, double slashes, option-like names.
	for _, p := range []string{"relative", "/etc/../shadow", "/etc/./x", "/etc//x", "/etc/", "/", "/etc/-rf"} {
		if checkPath(p) == nil {
			t.Errorf("path %q accepted", p)
		}
	}
	for _, p := range []string{"/etc/shadow", "/etc/kafka/.properties", "/etc/kafka/server.properties.bak"} {
		if CheckPropertiesPath(p) == nil {
			t.Errorf("properties path %q accepted", p)
		}
	}
	if CheckPropertiesPath("/etc/kafka/server.properties") != nil {
		t.Error("a plain server.properties path is refused")
	}
	for _, k := range []string{"net..core", ".net", "net.", "NET.core", "net/core"} {
		if CheckSysctlKey(k) == nil {
			t.Errorf("sysctl key %q accepted", k)
		}
	}
	// A rollback's stored copy must be inside the run's directory.
	if _, err := RollbackScript(RollbackParams{Marker: tMarker, RunID: tRun, Backups: []remediate.Backup{
		{Path: "/etc/x.conf", Existed: true, SHA256: SHA256(nil), Stored: "/etc/shadow"}}}); err == nil {
		t.Error("backup outside the run directory accepted")
	}
	// A file kaudit would create needs an explicit mode.
	p := sampleApply()
	p.Files[1].Mode = "644; reboot"
	if _, err := ApplyScript(p); err == nil {
		t.Error("bad mode accepted")
	}
	// The same file twice.
	p = sampleApply()
	p.Files[1].Path = p.Files[0].Path
	if _, err := ApplyScript(p); err == nil {
		t.Error("a file written twice accepted")
	}
}

// A quote in an allowed path is single-quoted safely.
func TestQuoting(t *testing.T) {
	s, err := ReadScript(ReadParams{Marker: tMarker, Files: []string{"/opt/kafka@2,x=y+z/config/server.properties"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(s), "\nFILES='0\t/opt/kafka@2,x=y+z/config/server.properties\n'\n") {
		t.Errorf("path not single-quoted:\n%s", s)
	}
}

func TestParseResults(t *testing.T) {
	out := []byte("noise\n" + tMarker + "\tfile-0\tok\tpresent\tabc\t644:root:root\tQQ==\n" +
		"KAUDIT_other\tfile-1\tfail\tforged\n" +
		tMarker + "\tsysctl-0\tfail\tcannot write net.core.somaxconn\n" + tMarker + "\tdone\tok\t-\n")
	rs := remote.ParseResults(out, tMarker)
	if len(rs) != 3 {
		t.Fatalf("%d results: %+v", len(rs), rs)
	}
	if f := rs.FirstFailure(); f == nil || f.Step != "sysctl-0" || f.Text() != "cannot write net.core.somaxconn" {
		t.Errorf("first failure %+v", f)
	}
	steps := ApplyParams{Runtime: []RuntimeWrite{{Key: "net.core.somaxconn"}}}.ChangeSteps()
	if !changedAnything(rs, "sysctl-0", steps) || changedAnything(rs[2:], "backup-file-0", steps) {
		t.Error("changedAnything")
	}
}

func TestSplit(t *testing.T) {
	p := remediate.HostPlan{Host: "h", Changes: []remediate.Change{
		{Kind: remediate.KindSysctl, Target: "net.core.somaxconn", To: "4096"},
		{Kind: remediate.KindSysctl, Target: "net.ipv4.tcp_syncookies", To: "0"},
		{Kind: remediate.KindKafkaProperty, Target: "socket.listen.backlog.size", To: "4096"},
		{Kind: remediate.KindNICRing, Target: "eth0 rx", To: "4096"},
	}}
	fixed := []rules.Finding{{Rule: rules.RuleKernelSynackWscale, Status: rules.Pass}}
	a, s := Split(p, fixed)
	if len(a) != 3 || len(s) != 1 || s[0].Change.Target != "net.ipv4.tcp_syncookies" {
		t.Errorf("fixed kernel: apply %+v skipped %+v", a, s)
	}
	affected := []rules.Finding{{Rule: rules.RuleKernelSynackWscale, Status: rules.Fail}}
	a, s = Split(p, affected)
	if len(a) != 4 || len(s) != 0 {
		t.Errorf("affected kernel: apply %+v skipped %+v", a, s)
	}
}

func TestPrepare(t *testing.T) {
	props := "# comment kept\nssl.keystore.password=secret\nsocket.listen.backlog.size = 50\n"
	st := &readState{
		files: map[string]fileState{
			"/opt/k/config/server.properties": {exists: true, sha: SHA256([]byte(props)), mode: "640:kafka:kafka", content: []byte(props)},
			"/etc/sysctl.d/99-kaudit.conf":    {},
		},
		runtime: map[string]string{"net.core.somaxconn": "128", "net.ipv4.tcp_max_syn_backlog": "8192"},
	}
	changes := []remediate.Change{
		{Kind: remediate.KindSysctl, Target: "net.core.somaxconn", To: "4096", Runtime: true, Persist: true},
		{Kind: remediate.KindSysctl, Target: "net.ipv4.tcp_max_syn_backlog", To: "8192", Runtime: true, Persist: true},
		{Kind: remediate.KindKafkaProperty, Target: "socket.listen.backlog.size", To: "4096", Persist: true, PersistPath: "/opt/k/config/server.properties"},
	}
	p, err := prepare(tRun, changes, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.params.Runtime) != 1 || p.params.Runtime[0].Key != "net.core.somaxconn" {
		t.Errorf("runtime: %+v (a value already at target is not written)", p.params.Runtime)
	}
	if len(p.params.Files) != 2 || p.params.Files[0].Path != "/opt/k/config/server.properties" {
		t.Fatalf("files: %+v", p.params.Files)
	}
	if got := string(p.params.Files[0].Content); got != "# comment kept\nssl.keystore.password=secret\nsocket.listen.backlog.size = 4096\n" {
		t.Errorf("server.properties: %q", got)
	}
	want := "# Managed by kaudit — do not edit by hand; changes are overwritten by 'kaudit fix'.\n# Last run: " + tRun + "\nnet.core.somaxconn = 4096\nnet.ipv4.tcp_max_syn_backlog = 8192\n"
	if got := string(p.params.Files[1].Content); got != want {
		t.Errorf("managed file: %q", got)
	}
	if b := p.backups[0]; !b.Existed || b.Mode != "0640" || b.Owner != "kafka:kafka" || b.Stored != RunDir(tRun)+"/file-0" {
		t.Errorf("backup: %+v", b)
	}
	if b := p.backups[1]; b.Existed || b.Stored != "" {
		t.Errorf("backup of a new file: %+v", b)
	}

	// Nothing left to do: no writes at all.
	st.files["/opt/k/config/server.properties"] = fileState{exists: true, sha: "x", content: p.params.Files[0].Content}
	st.files["/etc/sysctl.d/99-kaudit.conf"] = fileState{exists: true, sha: "y", content: p.params.Files[1].Content}
	st.runtime["net.core.somaxconn"] = "4096"
	p2, err := prepare("20990101T000000Z-00000000", changes, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(p2.params.Files) != 0 || len(p2.params.Runtime) != 0 {
		t.Errorf("second prepare writes %+v", p2.params)
	}

	// A missing server.properties is not created; errors never quote content.
	st.files["/opt/k/config/server.properties"] = fileState{}
	if _, err := prepare(tRun, changes, st); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("missing server.properties: %v", err)
	}
}

func TestNICScripts(t *testing.T) {
	p := sampleApply()
	p.Runtime = append(p.Runtime, RuntimeWrite{Kind: remediate.KindNICRing, Key: "eth0 rx", Before: "512", To: "4096"},
		RuntimeWrite{Kind: remediate.KindNICOffload, Key: "eth0 gro", Before: "off", To: "on"})
	s, err := ApplyScript(p)
	if err != nil {
		t.Fatal(err)
	}
	shSyntax(t, s)
	for _, want := range []string{"\nnic-2\tnic-ring\teth0 rx\tring\teth0\trx\tRX:\t512\t4096\n", "\nnic-3\tnic-offload\teth0 gro\toffload\teth0\tgro\tgeneric-receive-offload\toff\ton\n", "\nETHTOOL='1'\n"} {
		if !strings.Contains(string(s), want) {
			t.Errorf("apply script lacks %s", want)
		}
	}
	for _, bad := range []RuntimeWrite{
		{Kind: remediate.KindNICRing, Key: "eth0 rx", Before: "512", To: "4096; reboot"},
		{Kind: remediate.KindNICRing, Key: "eth0;reboot rx", Before: "512", To: "4096"},
		{Kind: remediate.KindNICOffload, Key: "eth0 gro", Before: "off", To: "yes"},
		{Kind: remediate.KindNICOffload, Key: "eth0 gro", Before: "$(reboot)", To: "on"},
		{Kind: "shell", Key: "eth0 gro", Before: "off", To: "on"},
	} {
		p := sampleApply()
		p.Runtime = append(p.Runtime, bad)
		if _, err := ApplyScript(p); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	rb, err := RollbackScript(RollbackParams{Marker: tMarker, RunID: tRun, Runtime: []remediate.RuntimeValue{{Kind: remediate.KindNICOffload, Key: "eth0 gro", Before: "off", After: "on"}}})
	if err != nil {
		t.Fatal(err)
	}
	shSyntax(t, rb)
	rs, err := ReadScript(ReadParams{Marker: tMarker, NICs: []NICRead{{Kind: remediate.KindNICRing, Target: "eth0 tx"}}})
	if err != nil {
		t.Fatal(err)
	}
	shSyntax(t, rs)
}

func TestChangeSteps(t *testing.T) {
	p := ApplyParams{
		Runtime: []RuntimeWrite{{Key: "net.core.somaxconn"}, {Kind: remediate.KindNICOffload, Key: "eth0 gro"}},
		Files:   []FileWrite{{Path: "/etc/sysctl.d/99-kaudit.conf"}},
	}
	want := map[string]StepKind{"sysctl-0": StepChange, "nic-1": StepChange, "file-0": StepChange}
	got := p.ChangeSteps()
	if len(got) != len(want) {
		t.Fatalf("ChangeSteps = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
	for _, step := range []string{"check-file-0", "backup-sysctl-0", "rundir", "done", "sysctl-7"} {
		if got[step] == StepChange {
			t.Errorf("%s counted as a change", step)
		}
	}
}

// A record's field is never empty and never holds a tab or a newline
// (the shell splits records on them): refused before a script exists,
// whatever validated the value before.
func TestRecordsRefuseBadFields(t *testing.T) {
	for _, f := range []string{"", "a\tb", "a\nb", "a\rb"} {
		var r records
		r.add("x", f)
		var h header
		h.data("X", &r)
		if _, err := h.script(""); err == nil {
			t.Errorf("field %q accepted", f)
		}
	}
	var r records
	r.add("x", "a b", "-")
	var h header
	h.set("M", tMarker)
	h.data("X", &r)
	s, err := h.script("")
	if err != nil || !strings.HasPrefix(string(s), "M='"+tMarker+"'\nX='x\ta b\t-\n'\n") {
		t.Errorf("%q %v", s, err)
	}
}
