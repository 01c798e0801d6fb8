package pipeline_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/kaudit/kaudit/"

// layers is docs/architecture.md's "what may import what", as data: for
// each package (the longest matching prefix wins), the module packages it
// may import. "internal/*" means the leaf helpers under internal/ (the
// test fleets are under test/). Keep the two in step.
var layers = map[string][]string{
	"audit/facts":     {},
	"audit/parse":     {"audit/facts", "nicpersist", "internal/*"},
	"audit/gather":    {"audit/facts", "audit/parse", "internal/*"},
	"audit/sshconfig": {"internal/*"},
	"audit/transport": {"audit/facts", "audit/sshconfig", "internal/*"},
	"audit/inventory": {"internal/*"},
	"audit/probe":     {"audit/facts", "audit/transport", "internal/*"},
	"audit/trust":     {"audit", "audit/facts", "audit/inventory", "audit/transport", "internal/*"},
	"audit":           {"audit/facts", "audit/gather", "audit/parse", "audit/inventory", "audit/probe", "audit/transport", "internal/*"},
	// nicpersist: how a host keeps NIC settings across a reboot, one file
	// per mechanism; read by the gather's parser, used by the planner and
	// the apply step.
	"nicpersist": {"audit/facts", "internal/*"},
	// rules: the knowledge; only the facts it judges.
	"rules": {"audit/facts", "internal/*"},
	// discover: the one package that speaks the Kafka protocol.
	"discover": {"audit/facts", "audit/parse", "internal/*"},
	// report imports rules for the types a report carries (and the HTML
	// renderer's rules.Lookup of a rule's references), audit/facts for
	// the facts and ErrorKind; it never evaluates (TestReportNeverEvaluates).
	"report": {"audit/facts", "rules", "internal/*"},
	// report/diff compares and renders; rules for its types only.
	"report/diff": {"audit/facts", "report", "rules", "internal/*"},
	// fleetpass: the fleet rules run over a report, the one home of the
	// pass every scan, merge and what-if runs.
	"fleetpass": {"audit/facts", "report", "rules", "internal/*"},
	// whatif models upgrades; it re-runs the fleet pass on what it models.
	"whatif":            {"audit/facts", "fleetpass", "rules", "report", "report/diff", "internal/*"},
	"remediate":         {"audit/facts", "nicpersist", "rules", "remediate/props", "remediate/sysctld", "internal/*"},
	"remediate/props":   {"internal/*"},
	"remediate/sysctld": {"audit/facts", "internal/*"},
	"remediate/apply": {"audit", "audit/facts", "audit/gather", "audit/parse", "audit/inventory", "audit/probe", "audit/transport",
		"nicpersist", "rules", "remediate", "remediate/props", "remediate/sysctld", "internal/*"},
	"waiver": {"report", "rules", "internal/*"},
	// serve: kaudit serve's HTTP side; it renders reports, never scans.
	"serve": {"audit/facts", "report", "internal/*"},
	// pipeline: every command's flow; it talks with the person only
	// through internal/ui and internal/termui, and serves the demo's
	// simulated fleet (test/simhost).
	"pipeline": {"audit", "audit/facts", "discover", "audit/inventory", "audit/probe", "audit/sshconfig", "audit/transport", "audit/trust", "fleetpass", "rules", "report", "report/diff",
		"remediate", "remediate/apply", "serve", "waiver", "whatif", "internal/atomicfile", "internal/fanout", "internal/located", "internal/remote", "internal/termsafe", "internal/termui", "internal/ui", "internal/words", "test/simhost"},
	// The CLI parses flags and calls the library (pipeline); of the rest
	// only the defaults and types its flags are bound to, the formats its
	// help lists, and the terminal helpers. No flow of its own: no
	// inventory, trust, waiver, remediation or simulated fleet.
	"cmd/kaudit": {"audit", "audit/probe", "audit/transport", "pipeline", "rules", "report", "report/diff", "whatif",
		"internal/argv", "internal/located", "internal/ui", "internal/termsafe", "internal/termui", "internal/suggest"},
	"test/simhost":   {"audit/inventory", "rules", "internal/*"},
	"test/testfleet": {"audit/inventory", "internal/*"},
	"internal":       {"internal/*"},
	// bench: programs and benchmarks that drive the library, as a user would.
	"bench": {"audit", "audit/facts", "audit/gather", "audit/inventory", "audit/parse", "pipeline", "rules", "report", "test/simhost", "internal/*"},
	"docs":  {},
	"test":  {}, // test-only packages: their imports are test imports
}

// allowedBy is the rule for pkg (module-relative): the longest prefix.
func allowedBy(pkg string) (string, []string, bool) {
	best := ""
	for p := range layers {
		if (pkg == p || strings.HasPrefix(pkg, p+"/")) && len(p) > len(best) {
			best = p
		}
	}
	allowed, ok := layers[best]
	return best, allowed, ok
}

func permitted(imp string, allowed []string) bool {
	helper := strings.HasPrefix(imp, "internal/")
	for _, a := range allowed {
		if a == imp || (a == "internal/*" && helper) {
			return true
		}
	}
	return false
}

func TestImportLayers(t *testing.T) {
	for _, tags := range []string{"", "e2e", "browser", "vm"} {
		for pkg, imports := range goList(t, tags) {
			rule, allowed, ok := allowedBy(pkg)
			if !ok {
				t.Errorf("%s has no place in the layering: add it to docs/architecture.md and to layers in %s", pkg, "pipeline/imports_test.go")
				continue
			}
			for _, imp := range imports {
				switch {
				case imp == "github.com/urfave/cli/v2" && rule != "cmd/kaudit":
					t.Errorf("%s imports the CLI library: only cmd/kaudit parses flags", pkg)
				case !strings.HasPrefix(imp, module):
				case !permitted(strings.TrimPrefix(imp, module), allowed):
					t.Errorf("%s imports %s: not allowed by the %q layer (docs/architecture.md)", pkg, strings.TrimPrefix(imp, module), rule)
				}
			}
		}
	}
}

// goList maps every package of the module (module-relative path) to its
// non-test imports, built with tags.
func goList(t *testing.T, tags string) map[string][]string {
	t.Helper()
	args := []string{"list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, module+"...")...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list (tags %q): %v", tags, err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkgs[strings.TrimPrefix(f[0], module)] = f[1:]
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages: %s", len(pkgs), out)
	}
	return pkgs
}

// The layering rejects what docs/architecture.md forbids.
func TestImportLayersForbid(t *testing.T) {
	for _, c := range []struct {
		pkg, imp string
		ok       bool
	}{
		{"audit", "rules", false},
		{"audit/gather", "remediate", false},
		{"audit/parse", "report", false},
		{"rules", "report", false},
		{"rules", "audit/transport", false},
		{"rules", "audit/facts", true},
		{"rules", "internal/assume", true},
		{"rules", "test/simhost", false},
		{"report", "remediate", false},
		{"report", "rules", true},
		{"report/diff", "remediate", false},
		{"cmd/kaudit", "audit/gather", false},
		{"cmd/kaudit", "audit/parse", false},
		{"cmd/kaudit", "internal/remote", false},
		{"cmd/kaudit", "internal/fanout", false},
		{"cmd/kaudit", "pipeline", true},
		{"cmd/kaudit", "remediate/apply", false},
		{"cmd/kaudit", "audit/inventory", false},
		{"cmd/kaudit", "test/simhost", false},
		{"cmd/kaudit", "discover", false},
		{"pipeline", "test/simhost", true},
		{"pipeline", "test/testfleet", false},
		{"internal/remote", "audit/gather", false},
		{"internal/fanout", "internal/safe", true},
		{"internal/fanout", "test/simhost", false},
		{"internal/remote", "audit/inventory", false},
		{"test/simhost", "audit/inventory", true},
		{"test/simhost", "pipeline", false},
		{"whatif", "remediate", false},
		{"fleetpass", "whatif", false},
		{"fleetpass", "pipeline", false},
		{"whatif", "fleetpass", true},
	} {
		_, allowed, _ := allowedBy(c.pkg)
		if got := permitted(c.imp, allowed); got != c.ok {
			t.Errorf("%s importing %s: permitted=%v, want %v", c.pkg, c.imp, got, c.ok)
		}
	}
	if rule, _, _ := allowedBy("audit/gather"); rule != "audit/gather" {
		t.Errorf("audit/gather ruled by %q", rule)
	}
	if _, _, ok := allowedBy("newpkg"); ok {
		t.Error("a package outside the table has a rule")
	}
}

// report and report/diff carry and render findings; they never evaluate a
// rule (that is rules.Evaluate's, called by pipeline.Audit and whatif).
func TestReportNeverEvaluates(t *testing.T) {
	for _, dir := range []string{"../report", "../report/diff"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v (%d files)", dir, err, len(files))
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "rules" && strings.HasPrefix(sel.Sel.Name, "Evaluate") {
						t.Errorf("%s calls rules.%s: report renders findings, it does not evaluate", file, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}

// The fleet pass has one home: outside rules (which defines them) only
// fleetpass calls rules.EvaluateFleet and rules.ApplyFleet; the scan,
// merge and the what-if call fleetpass.
func TestFleetPassOneHome(t *testing.T) {
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (path == "../rules" || path == "../fleetpass" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "rules" && (sel.Sel.Name == "EvaluateFleet" || sel.Sel.Name == "ApplyFleet") {
					t.Errorf("%s calls rules.%s: the fleet pass is fleetpass's (fleetpass.Run, RunOn)", path, sel.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The CLI only binds flags and calls pipeline: its non-test Go stays under
// 1,100 lines (issue 32); logic that grows it belongs in pipeline.
func TestCLIStaysSmall(t *testing.T) {
	files, err := filepath.Glob("../cmd/kaudit/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("cmd/kaudit: %v (%d files)", err, len(files))
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(b), "\n")
	}
	if lines >= 1100 {
		t.Errorf("cmd/kaudit has %d non-test lines, want under 1,100: move what is not flag binding into pipeline", lines)
	}
}
