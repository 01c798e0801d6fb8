package words

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 hosts"}, {1, "1 host"}, {2, "2 hosts"}, {1840, "1840 hosts"}} {
		if got := Count(c.n, "host", "hosts"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1840: "1,840", 100000: "100,000", 1234567: "1,234,567", -150: "-150", -1500: "-1,500"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestOnOff(t *testing.T) {
	if OnOff(true) != "on" || OnOff(false) != "off" {
		t.Errorf("OnOff: got %q, %q", OnOff(true), OnOff(false))
	}
}
