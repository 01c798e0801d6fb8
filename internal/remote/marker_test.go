package remote

import "testing"

func TestScriptMarker(t *testing.T) {
	for _, c := range []struct {
		script, marker string
		ok             bool
	}{
		{"set -u\nM='kaudit-0123456789abcdef01234567'\nKAFKA_PORT=9092\n", "kaudit-0123456789abcdef01234567", true},
		{"M='KAUDIT_000000000000000000000001'\n", "KAUDIT_000000000000000000000001", true},
		{"M=kaudit-0123456789abcdef\n", "", false}, // unquoted
		{"M='short'\n", "", false},                    // not a valid marker
		{"M='kaudit-01234567;rm'\n", "", false},       // outside the alphabet
		{"XM='kaudit-0123456789abcdef'\n", "", false}, // another variable
		{"M='kaudit-01234567'x\n", "", false},         // not the whole line
		{"echo hi\n", "", false},
	} {
		m, ok := ScriptMarker([]byte(c.script))
		if m != c.marker || ok != c.ok {
			t.Errorf("ScriptMarker(%q) = %q, %v; want %q, %v", c.script, m, ok, c.marker, c.ok)
		}
	}
	if v, ok := ScriptVar([]byte("M='x'\nSYSCTLS='net.core.somaxconn net.ipv4.tcp_syncookies'\n"), "SYSCTLS"); !ok || v != "net.core.somaxconn net.ipv4.tcp_syncookies" {
		t.Errorf("SYSCTLS = %q, %v", v, ok)
	}
	if v, ok := ScriptVar([]byte("SYSCTLS=''\n"), "SYSCTLS"); !ok || v != "" {
		t.Errorf("empty SYSCTLS = %q, %v", v, ok)
	}
}

func TestQuoteWord(t *testing.T) {
	for in, want := range map[string]string{
		"eth0":               "eth0",
		"Wired connection 1": "'Wired connection 1'",
		"a'b":                `'a'\''b'`,
		"":                   "''",
		"x;rm -rf /":         "'x;rm -rf /'",
		"$(id)":              "'$(id)'",
	} {
		if got := QuoteWord(in); got != want {
			t.Errorf("QuoteWord(%q) = %s, want %s", in, got, want)
		}
	}
}
