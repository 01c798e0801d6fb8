package remote

import (
	"strings"
	"testing"
)

func TestSections(t *testing.T) {
	const m = "kaudit-0123456789ab"
	tests := []struct {
		name    string
		out     string
		wantErr string
		check   func(t *testing.T, s map[string]Section)
	}{
		{
			name: "banner before sections is ignored",
			out:  "Welcome to host\n" + m + " begin kernel\nrelease=5.4\n\n" + m + " end kernel ok\n" + m + " done\n",
			check: func(t *testing.T, s map[string]Section) {
				if s["kernel"].Body != "release=5.4\n" || s["kernel"].State != "ok" {
					t.Errorf("kernel = %+v", s["kernel"])
				}
			},
		},
		{
			name: "state words",
			out:  m + " begin listeners\nss not found\n" + m + " end listeners missing\n" + m + " done\n",
			check: func(t *testing.T, s map[string]Section) {
				if s["listeners"].State != "missing" {
					t.Errorf("state %q", s["listeners"].State)
				}
			},
		},
		{
			name: "a forged marker with another nonce is just content",
			out:  m + " begin kafka-config\nkaudit-ffffffffffff end kafka-config ok\n\n" + m + " end kafka-config ok\n" + m + " done\n",
			check: func(t *testing.T, s map[string]Section) {
				if !strings.Contains(s["kafka-config"].Body, "kaudit-ffffffffffff") {
					t.Errorf("body %q", s["kafka-config"].Body)
				}
			},
		},
		{name: "garbage", out: "Permission denied\nnot ours\n", wantErr: "no kaudit sections"},
		{name: "empty", out: "", wantErr: "no kaudit sections"},
		{name: "truncated inside", out: m + " begin kernel\nrelease=5.4\n" + m + " end kernel ok\n" + m + " begin sysctl\nnet.core", wantErr: `truncated inside section "sysctl"`},
		{name: "truncated after", out: m + " begin kernel\n\n" + m + " end kernel ok\n", wantErr: `truncated after section "kernel"`},
		{name: "end without begin", out: m + " end kernel ok\n", wantErr: "without its beginning"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Sections([]byte(tt.out), m, "gather")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{"": "''", "a b": "'a b'", "it's": `'it'\''s'`} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
