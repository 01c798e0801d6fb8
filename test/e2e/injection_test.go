//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

// injections are shell metacharacter payloads; CANARY is replaced by a
// path that must never come to exist.
var injections = []string{
	"x;touch CANARY",
	"$(touch CANARY)",
	"`touch CANARY`",
	"x'; touch CANARY; '",
	`x"; touch CANARY; "`,
	"x\ntouch CANARY",
	"x|touch CANARY",
	"x&&touch CANARY",
	"${IFS}touch${IFS}CANARY",
	"-oProxyCommand=touch CANARY",
	"x\rtouch CANARY",
	"x>CANARY",
}

// injField places a payload into one inventory field of host "inj".
type injField struct {
	name  string
	field func(host string) string // the field path kaudit must name
	inv   func(h *testfleet.Host, payload string) (hostName string, lines []string)
}

var injFields = []injField{
	{"host name", func(host string) string { return "host name" },
		func(h *testfleet.Host, p string) (string, []string) { return quoteYAML(p), nil }},
	{"user", func(host string) string { return ".user: " },
		func(h *testfleet.Host, p string) (string, []string) { return "inj", []string{"user: " + quoteYAML(p)} }},
	{"address", func(host string) string { return ".address: " },
		func(h *testfleet.Host, p string) (string, []string) {
			return "inj", []string{"address: " + quoteYAML(h.Addr+p)}
		}},
	{"kafka.config", func(host string) string { return ".kafka.config: " },
		func(h *testfleet.Host, p string) (string, []string) {
			return "inj", []string{"kafka: {config: " + quoteYAML("/opt/"+p) + "}"}
		}},
	{"interfaces", func(host string) string { return ".interfaces[1]: " },
		func(h *testfleet.Host, p string) (string, []string) {
			return "inj", []string{"interfaces: [eth0, " + quoteYAML(p) + "]"}
		}},
	{"proxy_jump", func(host string) string { return ".proxy_jump: " },
		func(h *testfleet.Host, p string) (string, []string) {
			return "inj", []string{"proxy_jump: " + quoteYAML("root@"+p)}
		}},
}

func TestInventoryInjection(t *testing.T) {
	requireEnv(t)
	kauditBin(t)
	f := testfleet.Start(t, []testfleet.HostSpec{healthy("inj")})
	h := f.Host("inj")
	workDir := t.TempDir() // kaudit's cwd: a relative canary would land here

	var canaries []string
	var sample string // one rejection, for docs/faults.md
	n := 0
	for _, fld := range injFields {
		for i, payload := range injections {
			n++
			canary := fmt.Sprintf("/tmp/kc%d-%d", os.Getpid()%100000, n) // short: user names are capped at 32
			canaries = append(canaries, canary)
			p := strings.ReplaceAll(payload, "CANARY", canary)
			name, lines := fld.inv(h, p)
			t.Run(fmt.Sprintf("%s/%d", strings.ReplaceAll(fld.name, " ", "-"), i), func(t *testing.T) {
				inv := writeRawInventory(t, f, name, h, lines)
				args, out := scanArgs(t, inv, "--connect-timeout", "2s", "--timeout", "5s")
				r := runKaudit(t, runOpts{dir: workDir, limit: 30 * time.Second}, args...)
				if r.Code != 2 {
					t.Errorf("payload %q in %s: exit %d, want 2\nstderr:\n%s", p, fld.name, r.Code, r.Stderr)
				}
				if want := fld.field("inj"); !strings.Contains(r.Stderr, want) {
					t.Errorf("payload %q in %s: stderr does not name the field (%q):\n%s", p, fld.name, want, r.Stderr)
				}
				if !strings.Contains(r.Stderr, "inventory.yaml:") {
					t.Errorf("stderr does not name file and line:\n%s", r.Stderr)
				}
				if _, err := os.Stat(out); err == nil {
					t.Errorf("a report was written for a rejected inventory")
				}
				if fld.name == "user" && i == 0 {
					sample = strings.TrimSpace(strings.SplitN(r.Stderr, "\n", 2)[0])
				}
			})
		}
	}
	t.Logf("%d payloads x %d fields = %d rejected inventories", len(injections), len(injFields), n)

	// Local paths (known_hosts, identity_files) are opened, never run by a
	// shell: metacharacters are just bytes of a file name.
	t.Run("local-paths", func(t *testing.T) {
		// A file name cannot hold '/': the canary is relative (kaudit's cwd
		// is workDir, checked below).
		canary := fmt.Sprintf("kaudit-canary-%d-local", os.Getpid())
		kh := filepath.Join(t.TempDir(), "kh $(touch "+canary+")`touch "+canary+"`;touch "+canary)
		if err := os.WriteFile(kh, readFileBytes(t, f.KnownHosts), 0o600); err != nil {
			t.Fatal(err)
		}
		inv := writeRawInventory(t, f, "inj", h, []string{"known_hosts: [" + quoteYAML(kh) + "]"})
		r := scan(t, runOpts{dir: workDir}, inv, "--connect-timeout", "5s", "--timeout", "20s")
		if r.Code != 0 || r.host(t, "inj").Error != nil {
			t.Errorf("known_hosts with metacharacters in its name: exit %d, %+v", r.Code, r.host(t, "inj").Error)
		}
		inv = writeRawInventory(t, f, "inj", h, []string{"identity_files: [" + quoteYAML("/tmp/id $(touch "+canary+")\n") + "]"})
		if r := runKaudit(t, runOpts{dir: workDir}, "scan", inv); r.Code != 2 || !strings.Contains(r.Stderr, ".identity_files[0]: ") {
			t.Errorf("identity file with a newline: exit %d, stderr:\n%s", r.Code, r.Stderr)
		}
	})

	// Values that pass validation but are odd reach the host quoted.
	t.Run("odd-but-valid", func(t *testing.T) {
		odd := []string{"eth0", "eth0.100", "e:th0@x-1_y"}
		cfg := h.KafkaHome + "/config/../config/./server.properties"
		inv := writeRawInventory(t, f, "odd_host-1.example", h, []string{
			"interfaces: [" + strings.Join(odd, ", ") + "]",
			"kafka: {config: " + quoteYAML(cfg) + "}",
		})
		r := scan(t, runOpts{dir: workDir}, inv, "--connect-timeout", "5s", "--timeout", "20s")
		rh := r.host(t, "odd_host-1.example")
		assertComplete(t, rh)
		if rh.Facts == nil {
			t.FailNow()
		}
		var names []string
		for _, nic := range rh.Facts.NICs {
			names = append(names, nic.Name)
			if nic.Name != "eth0" && (nic.Ring != nil || nic.RingErr == "") {
				t.Errorf("nic %q (does not exist): ring %+v err %q", nic.Name, nic.Ring, nic.RingErr)
			}
		}
		if strings.Join(names, ",") != strings.Join(odd, ",") {
			t.Errorf("nics %v, want exactly %v", names, odd)
		}
		k := rh.Facts.Kafka
		if k == nil || k.Config != cfg || k.Properties["socket.listen.backlog.size"] != "4096" {
			t.Errorf("kafka %+v, want config %s read (backlog 4096)", k, cfg)
		}
		if f := finding(rh, "kafka-backlog-config"); f == nil || f.Status != rules.Pass {
			t.Errorf("kafka-backlog-config: %+v", f)
		}
		t.Logf("odd values: nics %v; ring errors %q", names, ringErrs(rh.Facts.NICs))
	})

	// A config path the inventory accepts must reach the host too.
	t.Run("config-path-colon", func(t *testing.T) {
		cfg := "/etc/kafka/server:9092.properties"
		inv := writeRawInventory(t, f, "inj", h, []string{"kafka: {config: " + quoteYAML(cfg) + "}"})
		r := scan(t, runOpts{dir: workDir}, inv, "--connect-timeout", "5s", "--timeout", "20s")
		if r.Code == 2 {
			return // rejected at load: consistent
		}
		rh := r.host(t, "inj")
		if rh.Error != nil && rh.Error.Kind == "protocol" && strings.Contains(rh.Error.Message, "gather: kafka config path") {
			observeBug(t, 300, "inventory kafka.config `"+cfg+"` (accepted by the inventory, refused by the gather script)", r, string(rh.Error.Kind), rh.Error.Message)
			t.Error("regression of a fixed kaudit bug: kafka.config " + cfg + " passes inventory validation (audit/inventory/validate.go pathChar allows ':', '%', '~') " +
				"but gather.Script rejects it (audit/gather/script.go rePath allows only [A-Za-z0-9_./+@,=-]): the host is reported as a " +
				"\"protocol\" error at scan time (exit 3) instead of an inventory error naming the field (exit 2); message: " + rh.Error.Message)
		}
		if rh.Error != nil {
			t.Errorf("host error %+v", rh.Error)
		}
	})

	// No canary anywhere: on this machine, in kaudit's cwd, inside the host.
	for _, c := range canaries {
		if _, err := os.Stat(c); err == nil {
			t.Errorf("CANARY %s exists on the machine: injection ran", c)
			_ = os.Remove(c)
		}
		if _, err := h.ExecErr("test", "-e", c); err == nil {
			t.Errorf("CANARY %s exists inside host %s: injection ran", c, h.Spec.Name)
		}
	}
	if ents, _ := os.ReadDir(workDir); len(ents) != 0 {
		t.Errorf("files appeared in kaudit's working dir: %v", ents)
	}
	if out, _ := h.ExecErr("sh", "-c", "ls -A /tmp "+h.Home+" | grep -E -i 'canary|^kc[0-9]+-'"); strings.TrimSpace(out) != "" {
		t.Errorf("canary-like files inside the host: %s", out)
	}
	t.Logf("%d canaries checked on the machine and inside %s: none exists", len(canaries), h.Spec.Name)
	observeNote(299, fmt.Sprintf("inventory values with shell metacharacters (%d payloads × %d fields: host name, user, address, kafka.config, interfaces, proxy_jump)", len(injections), len(injFields)),
		"— (not scanned)", "inventory error naming file:line and field path, e.g. `"+sample+"`; no canary created on the machine, in kaudit's cwd or inside the host", 2)
}

func ringErrs(nics []facts.NIC) []string {
	var out []string
	for _, n := range nics {
		out = append(out, n.Name+": "+n.RingErr)
	}
	return out
}

func readFileBytes(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeRawInventory writes an inventory with one host entry whose name is
// used verbatim (it may be a quoted YAML key).
func writeRawInventory(t *testing.T, f *testfleet.Fleet, name string, h *testfleet.Host, lines []string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "defaults:\n  user: root\n  identity_files: [%s]\n  use_agent: false\n  known_hosts: [%s]\n  interfaces: [eth0]\n  profile: {nofile: %d}\nhosts:\n",
		quoteYAML(f.IdentityFile), quoteYAML(f.KnownHosts), fleetNoFile(t))
	fmt.Fprintf(&b, "  %s:\n", name)
	hasAddr := false
	for _, l := range lines {
		hasAddr = hasAddr || strings.HasPrefix(l, "address:")
	}
	if !hasAddr {
		fmt.Fprintf(&b, "    address: %s\n", h.Addr)
	}
	for _, l := range lines {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	p := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
