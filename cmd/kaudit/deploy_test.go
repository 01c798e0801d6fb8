package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// parseServe parses args (after "kaudit serve") with serve's own flags
// as kaudit does (flags after the INVENTORY too) and returns the flag
// set and the positional arguments.
func parseServe(t *testing.T, args []string) (*flag.FlagSet, []string) {
	t.Helper()
	e := env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Now: time.Now}
	cmd := serveCommand(e)
	args = interspersed(newApp(e), append([]string{"kaudit", "serve"}, args...))[2:] // as main reads them
	set := flag.NewFlagSet("serve", flag.ContinueOnError)
	set.SetOutput(io.Discard)
	for _, f := range cmd.Flags {
		if err := f.Apply(set); err != nil {
			t.Fatal(err)
		}
	}
	if err := set.Parse(args); err != nil {
		t.Fatalf("kaudit serve %q: %v", args, err)
	}
	return set, set.Args()
}

// httpProbe is a container's httpGet probe (its port by name).
type httpProbe struct {
	HTTPGet struct{ Path, Port string } `yaml:"httpGet"`
}

// TestServeDeployment: the Deployment runs kaudit serve with flags it
// has, on the port its probes, Service and ServiceMonitor use, from the
// image the shard Jobs name.
func TestServeDeployment(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kubernetes/kaudit-serve.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var d struct {
			Kind string
			Spec struct {
				Replicas int
				Template struct {
					Spec struct {
						Containers []struct {
							Image string
							Args  []string
							Ports []struct {
								Name          string
								ContainerPort int `yaml:"containerPort"`
							}
							LivenessProbe  httpProbe `yaml:"livenessProbe"`
							ReadinessProbe httpProbe `yaml:"readinessProbe"`
						}
					}
				}
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatalf("kaudit-serve.yaml: %v", err)
		}
		kinds[d.Kind] = true
		if d.Kind != "Deployment" {
			continue
		}
		if d.Spec.Replicas != 1 {
			t.Errorf("replicas %d: one scanner only", d.Spec.Replicas)
		}
		c := d.Spec.Template.Spec.Containers[0]
		shards, _ := jobScript(t, "../../deploy/kubernetes/kaudit-shards.yaml")
		if want := shards.Spec.Template.Spec.Containers[0]; c.Image != "registry.example.com/kaudit:latest" {
			t.Errorf("image %q, want the shard Jobs' (%v)", c.Image, want)
		}
		if len(c.Args) == 0 || c.Args[0] != "serve" {
			t.Fatalf("args %q: want serve …", c.Args)
		}
		set, pos := parseServe(t, c.Args[1:])
		if len(pos) != 1 || !strings.HasPrefix(pos[0], "/etc/kaudit/") {
			t.Errorf("positional %q: want the mounted inventory", pos)
		}
		ports := map[string]int{}
		for _, p := range c.Ports {
			ports[p.Name] = p.ContainerPort
		}
		if l := set.Lookup("listen").Value.String(); l != ":9874" || ports["metrics"] != 9874 {
			t.Errorf("--listen %s, container ports %v", l, c.Ports)
		}
		// Issue 34: with basic auth on, probes of --listen get 401; they
		// must reach the health listener, which serves them unauthenticated.
		health := set.Lookup("health-listen").Value.String()
		for name, p := range map[string]httpProbe{"livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe} {
			want := map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz"}[name]
			if p.HTTPGet.Path != want || health == "" || fmt.Sprintf(":%d", ports[p.HTTPGet.Port]) != health {
				t.Errorf("%s %+v: want %s on the port of --health-listen (%q), container ports %v", name, p.HTTPGet, want, health, c.Ports)
			}
		}
	}
	for _, k := range []string{"Deployment", "Service", "ServiceMonitor", "PersistentVolumeClaim"} {
		if !kinds[k] {
			t.Errorf("kaudit-serve.yaml has no %s", k)
		}
	}
}

func TestServeSystemdUnit(t *testing.T) {
	b, err := os.ReadFile("../../deploy/systemd/kaudit-serve.service")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ExecStart=(\S+) serve (.*)$`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("no ExecStart=… serve …")
	}
	_, pos := parseServe(t, strings.Fields(m[2]))
	if len(pos) != 1 {
		t.Errorf("ExecStart positional %q", pos)
	}
	for _, want := range []string{"StateDirectory=kaudit", "ExecReload=/bin/kill -HUP $MAINPID"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("unit lacks %s", want)
		}
	}
}

// TestDockerfileGoVersion: the image is built with go.mod's Go.
func TestDockerfileGoVersion(t *testing.T) {
	df, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	got := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)$`).FindSubmatch(df)
	if want == nil || got == nil || string(got[1]) != string(want[1]) {
		t.Errorf("Dockerfile GO_VERSION %q, go.mod go %q", got, want)
	}
	if !strings.Contains(string(df), "./cmd/kaudit") {
		t.Error("Dockerfile does not build ./cmd/kaudit")
	}
}
