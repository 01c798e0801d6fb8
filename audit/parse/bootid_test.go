package parse

import (
	"os"
	"testing"
)

func TestBootID(t *testing.T) {
	real, err := os.ReadFile("testdata/boot-id/this-machine.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{string(real), "75daa552-86bc-46fa-902d-aa64cc7af858"},
		{"75daa552-86bc-46fa-902d-aa64cc7af858", "75daa552-86bc-46fa-902d-aa64cc7af858"},
		{"", ""},
		{"!denied /proc/sys/kernel/random/boot_id", ""},
		{"75DAA552-86BC-46FA-902D-AA64CC7AF858", ""},         // the kernel prints lowercase
		{"75daa552-86bc-46fa-902d-aa64cc7af858 x", ""},       // trailing junk
		{"../../etc/passwd", ""},                             // never a path
		{"75daa552-86bc-46fa-902d-aa64cc7af858\x1b[31m", ""}, // control characters
		{"75daa55286bc46fa902daa64cc7af858", ""},             // no dashes
	} {
		if got := BootID(tc.in); got != tc.want {
			t.Errorf("BootID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
