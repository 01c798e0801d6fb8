package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/kaudit/kaudit/test/simhost"
)

// shardFleet serves 14 simulated hosts (the demo profiles twice, named in
// order) plus one unreachable host, and returns its inventory.
func shardFleet(t *testing.T) string {
	var hosts []*simhost.Host
	for i := 0; i < 14; i++ {
		h := simhost.DemoFleet()[i%7]
		h.Name = fmt.Sprintf("b%02d-%s", i, h.Name)
		hosts = append(hosts, h)
	}
	return writeInventory(t, hosts, "zz-down")
}

// timeless is a JSON report with what differs between runs removed: when
// it started, how long it took, which shard it was.
func timeless(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	delete(m, "started_at")
	delete(m, "duration_ms")
	delete(m, "shard")
	hosts, _ := m["hosts"].([]any)
	for _, h := range hosts {
		delete(h.(map[string]any), "duration_ms")
	}
	return m
}

func scanUnsharded(t *testing.T, inv, dir string) map[string]any {
	t.Helper()
	full := filepath.Join(dir, "full.json")
	if code, _, errOut := runCLI(t, "scan", inv, "-f", "json", "-o", full); code != ExitFindings {
		t.Fatalf("unsharded scan: exit %d\n%s", code, errOut)
	}
	return timeless(t, full)
}

// Shard 3 ways, merge: the report equals the unsharded one but for timings.
func TestShardMergeEqualsUnsharded(t *testing.T) {
	inv := shardFleet(t)
	dir := t.TempDir()
	want := scanUnsharded(t, inv, dir)
	var shards []string
	total := 0
	for k := 0; k < 3; k++ {
		out := filepath.Join(dir, fmt.Sprintf("s%d.json", k))
		code, _, errOut := runCLI(t, "scan", inv, "--shard", fmt.Sprintf("%d/3", k), "-f", "json", "-o", out)
		if code != ExitOK && code != ExitFindings && code != ExitUnaudited {
			t.Fatalf("shard %d/3: exit %d\n%s", k, code, errOut)
		}
		r := timelessReport(t, out)
		if r["shard"] != fmt.Sprintf("%d/3", k) {
			t.Errorf("shard %d/3: report says shard %v", k, r["shard"])
		}
		n := len(r["hosts"].([]any))
		if n == 0 || n == 15 {
			t.Errorf("shard %d/3 has %d of 15 hosts", k, n)
		}
		total += n
		shards = append(shards, out)
	}
	if total != 15 {
		t.Errorf("shards hold %d hosts, want 15", total)
	}
	merged := filepath.Join(dir, "fleet.json")
	if code, _, errOut := runCLI(t, append(append([]string{"merge"}, shards...), "-o", merged)...); code != ExitFindings {
		t.Fatalf("merge: exit %d, want %d as the unsharded scan\n%s", code, ExitFindings, errOut)
	}
	if got := timeless(t, merged); !reflect.DeepEqual(got, want) {
		t.Errorf("merged report differs from the unsharded one:\n%s", firstDiff(got, want))
	}
	// A shard missing is refused, naming it.
	code, _, errOut := runCLI(t, "merge", shards[0], shards[2], "-o", merged)
	if code != ExitUsage || !strings.Contains(errOut, "shard 1/3 missing") {
		t.Errorf("merge without shard 1: exit %d, %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "scan", inv, "--shard", "3/3"); code != ExitUsage || !strings.Contains(errOut, "K must be between 0 and 2") {
		t.Errorf("--shard 3/3: exit %d, %s", code, errOut)
	}
}

func timelessReport(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func firstDiff(got, want map[string]any) string {
	g, _ := json.MarshalIndent(got, "", " ")
	w, _ := json.MarshalIndent(want, "", " ")
	gl, wl := strings.Split(string(g), "\n"), strings.Split(string(w), "\n")
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if gl[i] != wl[i] {
			return fmt.Sprintf("line %d: got %s, want %s", i+1, gl[i], wl[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(gl), len(wl))
}

// shellWords splits a shell command the way sh would for the simple
// commands in the manifests: words, "double-quoted" words, ends at ; or ||.
func shellWords(s string) []string {
	var words []string
	for _, m := range regexp.MustCompile(`"([^"]*)"|(\S+)`).FindAllStringSubmatch(s, -1) {
		w := m[1] + m[2]
		if m[2] == ";" || m[2] == "||" || strings.HasSuffix(m[2], ";") {
			if w = strings.TrimSuffix(m[2], ";"); w != "" && w != "||" {
				words = append(words, w)
			}
			break
		}
		words = append(words, w)
	}
	return words
}

// kauditLine is the line of script that runs `kaudit SUBCOMMAND`.
func kauditLine(t *testing.T, script, sub string) string {
	t.Helper()
	for _, line := range strings.Split(strings.ReplaceAll(script, "\n", " ; "), " ; ") {
		if i := strings.Index(line, "kaudit "+sub+" "); i >= 0 {
			return line[i:]
		}
	}
	t.Fatalf("no `kaudit %s` in %q", sub, script)
	return ""
}

// runManifest runs each shard's command line exactly as the manifest
// writes it (paths redirected to the test fleet and a temp dir), then the
// merge command, and returns the merged report's path.
func runManifest(t *testing.T, scan, merge func(k int) string, n int, inv, remoteInv, remoteDir, dir string) string {
	t.Helper()
	redirect := strings.NewReplacer(remoteInv, inv, remoteDir, dir+"/")
	for k := 0; k < n; k++ {
		args := shellWords(redirect.Replace(scan(k)))
		if code, _, errOut := runCLI(t, args[1:]...); code != ExitOK && code != ExitFindings && code != ExitUnaudited {
			t.Fatalf("shard %d: %q: exit %d\n%s", k, args, code, errOut)
		}
	}
	var args []string
	for _, w := range shellWords(redirect.Replace(merge(0))) {
		if strings.Contains(w, "*") {
			files, _ := filepath.Glob(w)
			if len(files) != n {
				t.Fatalf("%s matches %d reports, want %d", w, len(files), n)
			}
			args = append(args, files...)
			continue
		}
		args = append(args, w)
	}
	if code, _, errOut := runCLI(t, args[1:]...); code != ExitFindings {
		t.Fatalf("merge %q: exit %d\n%s", args, code, errOut)
	}
	for i, a := range args {
		if a == "-o" {
			return args[i+1]
		}
	}
	t.Fatalf("merge writes no -o file: %q", args)
	return ""
}

func loadYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

type k8sJob struct {
	Kind string
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int
		Template       struct {
			Spec struct {
				Containers []struct{ Command []string }
			}
		}
	}
}

// jobScript reads the Job in a manifest (the second document of the
// shards file, the only one of the merge file) and its shell script.
func jobScript(t *testing.T, path string) (k8sJob, string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var j k8sJob
		if err := yaml.Unmarshal([]byte(doc), &j); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if j.Kind == "Job" {
			c := j.Spec.Template.Spec.Containers[0].Command
			return j, c[len(c)-1]
		}
	}
	t.Fatalf("%s: no Job", path)
	return k8sJob{}, ""
}

// The Kubernetes Indexed Job's command lines parse and, run for every
// index, produce shards whose merge equals the unsharded scan.
func TestKubernetesIndexedJobManifest(t *testing.T) {
	job, scan := jobScript(t, "../../deploy/kubernetes/kaudit-shards.yaml")
	_, merge := jobScript(t, "../../deploy/kubernetes/kaudit-merge.yaml")
	if job.Spec.CompletionMode != "Indexed" || job.Spec.Completions < 2 {
		t.Fatalf("job: completionMode %q, completions %d", job.Spec.CompletionMode, job.Spec.Completions)
	}
	if want := "/" + strconv.Itoa(job.Spec.Completions) + `"`; !strings.Contains(scan, "--shard \"$JOB_COMPLETION_INDEX"+want) {
		t.Fatalf("--shard must be \"$JOB_COMPLETION_INDEX%s (completions %d): %s", want, job.Spec.Completions, scan)
	}
	inv := shardFleet(t)
	dir := t.TempDir()
	want := scanUnsharded(t, inv, t.TempDir())
	line := kauditLine(t, scan, "scan")
	got := runManifest(t, func(k int) string { return strings.ReplaceAll(line, "$JOB_COMPLETION_INDEX", strconv.Itoa(k)) },
		func(int) string { return kauditLine(t, merge, "merge") }, job.Spec.Completions, inv, "/etc/kaudit/inventory.yaml", "/reports/", dir)
	if !reflect.DeepEqual(timeless(t, got), want) {
		t.Errorf("merged Job report differs from the unsharded scan:\n%s", firstDiff(timeless(t, got), want))
	}
}

// The GitHub Actions matrix covers every shard of the N its --shard names.
func TestGitHubActionsMatrix(t *testing.T) {
	var wf struct {
		Jobs map[string]struct {
			Strategy struct{ Matrix struct{ Shard []int } }
			Steps    []struct{ Run string }
		}
	}
	loadYAML(t, "../../deploy/github-actions/kaudit-shards.yml", &wf)
	var scan, merge string
	for _, j := range wf.Jobs {
		for _, s := range j.Steps {
			if strings.Contains(s.Run, "kaudit scan ") {
				scan = kauditLine(t, s.Run, "scan")
			}
			if strings.Contains(s.Run, "kaudit merge ") {
				merge = kauditLine(t, s.Run, "merge")
			}
		}
	}
	shards := wf.Jobs["scan"].Strategy.Matrix.Shard
	for i, k := range shards {
		if k != i {
			t.Fatalf("matrix.shard %v: want 0..N-1", shards)
		}
	}
	if !strings.Contains(scan, fmt.Sprintf(`--shard "${{ matrix.shard }}/%d"`, len(shards))) {
		t.Fatalf("--shard must name /%d (the matrix): %s", len(shards), scan)
	}
	inv := shardFleet(t)
	want := scanUnsharded(t, inv, t.TempDir())
	dir := t.TempDir()
	t.Chdir(dir)
	got := runManifest(t, func(k int) string {
		return strings.ReplaceAll(scan, "${{ matrix.shard }}", strconv.Itoa(k))
	}, func(int) string { return merge }, len(shards), inv, "fleet/inventory.yaml", "\x00", dir)
	if !reflect.DeepEqual(timeless(t, got), want) {
		t.Errorf("merged matrix report differs from the unsharded scan:\n%s", firstDiff(timeless(t, got), want))
	}
}
