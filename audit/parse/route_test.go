package parse

import (
	"reflect"
	"testing"
)

func TestDefaultRouteIfaces(t *testing.T) {
	tests := []struct {
		name        string
		route, ipv6 string
		want        []string
	}{
		{"this machine: eth0 on both", readTestdata(t, "route/route-6.18-this-machine.txt"), readTestdata(t, "route/ipv6_route-6.18-this-machine.txt"), []string{"eth0"}},
		{"netns with two v4 and two v6 defaults", readTestdata(t, "route/route-netns-two-defaults-this-machine.txt"), readTestdata(t, "route/ipv6_route-netns-two-defaults-this-machine.txt"), []string{"veth-a", "veth-b"}},
		{"jc fixture: lo's unreachable ::/0 ignored", readTestdata(t, "route/jc-fixture-net_route.txt"), readTestdata(t, "route/jc-fixture-net_ipv6_route.txt"), []string{"ens33"}},
		{"ipv6 only", "", readTestdata(t, "route/ipv6_route-6.18-this-machine.txt"), []string{"eth0"}},
		{"nothing", "", "", nil},
		{"garbage", "cat: /proc/net/route: No such file or directory\n", "cat: /proc/net/ipv6_route: No such file or directory\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultRouteIfaces(tt.route, tt.ipv6); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
