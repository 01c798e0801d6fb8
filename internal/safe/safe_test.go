package safe

import "testing"

func TestRemotePath(t *testing.T) {
	for p, want := range map[string]bool{
		"/etc/kafka/server.properties": true, "/etc/kafka/server:9092.properties": true, "/opt/k~1/a%b,c=d+e@f": true,
		"relative/x": false, "": false, "/a b": false, "/a;b": false, "/$(x)": false, "/a`b`": false, "/a'b": false,
		"/a\nb": false, "/a\\b": false, "/é": false,
	} {
		if got := RemotePath(p); got != want {
			t.Errorf("RemotePath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestIface(t *testing.T) {
	for s, want := range map[string]bool{
		"eth0": true, "bond0.100": true, "e:th0@x-1_y": true, "enp0s31f6": true,
		"": false, "-oProxyCommand": false, "eth0;reboot": false, "sixteen-chars-xx": false, "a b": false,
	} {
		if got := Iface(s); got != want {
			t.Errorf("Iface(%q) = %v, want %v", s, got, want)
		}
	}
}
