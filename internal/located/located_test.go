package located

import "testing"

func TestError(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{File: "inv.yaml", Line: 3, Field: "hosts.b1.port", Msg: "70000 is not a port", Hint: "use 1-65535"}, "inv.yaml:3: hosts.b1.port: 70000 is not a port (hint: use 1-65535)"},
		{Error{File: "w.yaml", Line: 2, Field: "waivers[0]", Msg: "reason is required"}, "w.yaml:2: waivers[0]: reason is required"},
		{Error{File: "p.yaml", Msg: "empty"}, "p.yaml: empty"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}
