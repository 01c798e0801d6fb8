package suggest

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"address", "port", "identity_files", "host_key_policy", "kernel-synack-wscale"}
	for in, want := range map[string]string{
		"adress": "address", "prot": "port", "Port": "port", "identity_file": "identity_files",
		"host_key_polcy": "host_key_policy", "kernel-synack-wscal": "kernel-synack-wscale",
		"zzz": "", "": "",
	} {
		if got := Closest(in, known); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
	if d := Distance("ab", "ba"); d != 1 {
		t.Errorf("transposition distance %d, want 1", d)
	}
}
