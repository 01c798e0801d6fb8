package main

import (
	"strings"
	"testing"
)

// TestPasswordGivenWhereANameBelongs: a password typed where kaudit wants
// a variable name, a file path or a HOST:PORT is refused with exit 2 and
// never repeated on stdout or stderr.
func TestPasswordGivenWhereANameBelongs(t *testing.T) {
	const pw = "S3cr3t-pw!"
	for _, args := range [][]string{
		{"scan", "--bootstrap", "admin:" + pw + "@127.0.0.1:9", "--connect-timeout", "1s"},
		{"scan", "--bootstrap", "127.0.0.1:9", "--security-protocol", "SASL_PLAINTEXT", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-env", pw},
		{"scan", "--bootstrap", "127.0.0.1:9", "--security-protocol", "SASL_PLAINTEXT", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-file", pw},
		{"fix", "--bootstrap", "127.0.0.1:9", "--security-protocol", "SASL_PLAINTEXT", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-env", "S3cr3tpw"},
	} {
		code, stdout, stderr := runCLI(t, args...)
		if code != 2 || !strings.Contains(stderr, "not shown") {
			t.Errorf("%v: exit %d, stderr %q: want 2 and an error that does not show the value", args, code, stderr)
		}
		if strings.Contains(stdout+stderr, "S3cr3t") {
			t.Errorf("%v: the password is echoed: %q", args, stderr)
		}
	}
}
