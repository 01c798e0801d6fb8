package probe

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/remote"
)

func TestSyncookiesPerNetns(t *testing.T) {
	for _, tt := range []struct {
		release string
		want    bool
	}{
		{"3.10.0-1160.95.1.el7.x86_64", false}, // RHEL/CentOS 7: global (include/net/netns/ipv4.h of 3.10.0-1160.el7)
		{"4.4.0-210-generic", false},
		{"4.5.7", false},
		{"4.6.0", false}, // namespaced in 4.6 as recalled, not confirmed: undecidable
		{"4.8.17", false},
		{"4.9.0", true}, // a 4.9 tree has it in struct netns_ipv4
		{"4.9.337", true},
		{"4.14.203-156.332.amzn2.x86_64", true},
		{"4.15.0-213-generic", true},
		{"4.18.0-477.27.1.el8_8.x86_64", true}, // RHEL 8: per namespace (include/net/netns/ipv4.h of 4.18.0-240.el8)
		{"5.4.17-2136.307.3.1.el7uek.x86_64", true},
		{"6.18.44-fc-v1045", true},
		{"10.0.0", true},
		{"", false},
		{"linux", false},
	} {
		got, why := SyncookiesPerNetns(tt.release)
		if got != tt.want || why == "" {
			t.Errorf("SyncookiesPerNetns(%q) = %v (%s), want %v", tt.release, got, why, tt.want)
		}
	}
}

// fakeRunner records calls and answers with fn.
type fakeRunner struct {
	calls int
	fn    func(ctx context.Context, script []byte) (*transport.Output, error)
}

func (f *fakeRunner) Run(ctx context.Context, _ transport.Target, script []byte) (*transport.Output, error) {
	f.calls++
	return f.fn(ctx, script)
}

func TestRunRefusesHostWideKernel(t *testing.T) {
	r := &fakeRunner{fn: func(context.Context, []byte) (*transport.Output, error) {
		t.Fatal("a 3.10 host must never be sent the probe")
		return nil, nil
	}}
	p := Run(context.Background(), r, transport.Target{}, facts.Kernel{Release: "3.10.0-1160.el7.x86_64"}, "", Options{})
	if r.calls != 0 || p.State != facts.ProbeNotPerNetns || !strings.Contains(p.Reason, "could change the whole host") {
		t.Fatalf("calls %d, %+v", r.calls, p)
	}
}

func blocking(ctx context.Context, _ []byte) (*transport.Output, error) {
	<-ctx.Done()
	return nil, &transport.Error{Kind: facts.KindTimeout, Msg: "gather: " + ctx.Err().Error()}
}

func TestRunTimeoutBounded(t *testing.T) {
	r := &fakeRunner{fn: blocking}
	start := time.Now()
	p := Run(context.Background(), r, transport.Target{ConnectTimeout: 100 * time.Millisecond}, facts.Kernel{Release: "6.1.0-13-amd64"}, "", Options{Budget: MinBudget})
	if p.State != facts.ProbeTimeout || !strings.Contains(p.Reason, "did not finish within 2.6s") {
		t.Fatalf("%+v", p)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	p := Run(ctx, &fakeRunner{fn: blocking}, transport.Target{}, facts.Kernel{Release: "6.1.0-13-amd64"}, "", Options{})
	if p.State != facts.ProbeTimeout || !strings.Contains(p.Reason, "interrupted") {
		t.Fatalf("%+v", p)
	}
}

func TestRunSudoRefused(t *testing.T) {
	r := &fakeRunner{fn: func(context.Context, []byte) (*transport.Output, error) {
		return nil, &transport.Error{Kind: facts.KindAuth, Msg: "become: sudo needs a password for kafka"}
	}}
	p := Run(context.Background(), r, transport.Target{Become: "sudo"}, facts.Kernel{Release: "6.1.0-13-amd64"}, "", Options{})
	if p.State != facts.ProbeNeedsRoot || !strings.HasPrefix(p.Reason, NeedsRoot) {
		t.Fatalf("%+v", p)
	}
}

func TestRunSendsBrokerRcvbuf(t *testing.T) {
	var sent string
	r := &fakeRunner{fn: func(_ context.Context, s []byte) (*transport.Output, error) {
		sent = string(s)
		return &transport.Output{}, nil
	}}
	p := Run(context.Background(), r, transport.Target{}, facts.Kernel{Release: "6.1.0-13-amd64"}, "262144", Options{})
	if !strings.Contains(sent, "\nRCVBUFS='262144 102400 65536 max'\n") || !strings.Contains(sent, "\nREL='6.1.0-13-amd64'\n") {
		t.Errorf("script header: %.300s", sent)
	}
	if p.State != facts.ProbeError || p.ScriptBytes != len(sent) {
		t.Errorf("%+v", p)
	}
}

func TestCases(t *testing.T) {
	for in, want := range map[string]string{
		"":        "102400 65536 max",
		"102400":  "102400 65536 max",
		"-1":      "102400 65536 max", // the broker sets no SO_RCVBUF; probe Kafka's default anyway
		"1048576": "1048576 102400 65536 max",
		"1e6; ls": "102400 65536 max",
	} {
		if got := strings.Join(Cases(in), " "); got != want {
			t.Errorf("Cases(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestScriptValidates(t *testing.T) {
	ok := Params{Marker: testMarker, Release: "6.1.0", Budget: time.Second, Payload: 1, RcvBufs: []string{"max"}}
	if _, err := Script(ok); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Params){
		"release quote": func(p *Params) { p.Release = "6.1'; reboot; '" },
		"budget":        func(p *Params) { p.Budget = time.Hour },
		"payload":       func(p *Params) { p.Payload = 0 },
		"rcvbuf":        func(p *Params) { p.RcvBufs = []string{"$(id)"} },
		"no case":       func(p *Params) { p.RcvBufs = nil },
		"python":        func(p *Params) { p.Pythons = []string{"python3;id"} },
		"marker":        func(p *Params) { p.Marker = "x" },
	} {
		p := ok
		mut(&p)
		if _, err := Script(p); err == nil {
			t.Errorf("%s: accepted %+v", name, p)
		}
	}
}

// A session that fails after the probe printed keeps the pairs it
// measured, in a state that is not ok.
func TestRunSessionFailedKeepsHandshakes(t *testing.T) {
	b, err := os.ReadFile("testdata/reverted-6.1-ok-reconstructed.txt")
	if err != nil {
		t.Fatal(err)
	}
	for name, tt := range map[string]struct {
		stdout string
		state  facts.ProbeState
		cases  int
	}{
		"after the whole output":    {string(b), facts.ProbeError, 3},
		"during the first transfer": {string(b[:bytes.Index(b, []byte("transfer="))]), facts.ProbeError, 1},
		"before any handshake":      {string(b[:bytes.Index(b, []byte("handshake="))]), facts.ProbeError, 0},
	} {
		t.Run(name, func(t *testing.T) {
			r := &fakeRunner{fn: func(_ context.Context, script []byte) (*transport.Output, error) {
				m, _ := remote.ScriptMarker(script)
				return &transport.Output{Stdout: []byte(strings.ReplaceAll(tt.stdout, testMarker, m)), ExitCode: 255},
					&transport.Error{Kind: facts.KindProtocol, Msg: "gather script exited 255: connection reset"}
			}}
			p := Run(context.Background(), r, transport.Target{}, facts.Kernel{Release: "6.1.0-kaudit-revert"}, "", Options{})
			if p.State != tt.state || len(p.Cases) != tt.cases || !strings.Contains(p.Reason, "probe session failed: gather script exited 255") {
				t.Fatalf("state %s, %d cases, reason %q", p.State, len(p.Cases), p.Reason)
			}
			if tt.cases > 0 && (p.Cases[0].ClientSndWscale != 1 || p.Cases[0].ServerRcvWscale != 7 || p.ScriptBytes == 0) {
				t.Errorf("%+v", p)
			}
		})
	}
}
