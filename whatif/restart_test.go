package whatif

import "testing"

func TestUnsafeAfter(t *testing.T) {
	w := &Result{Clusters: []RestartVerdict{{Cluster: "a", SafeAfter: true}, {Cluster: "b"}, {Cluster: "c"}}}
	if c, unsafe := w.UnsafeAfter(); c != "b" || !unsafe {
		t.Errorf("UnsafeAfter = %q, %v; want b, true", c, unsafe)
	}
	w.Clusters = w.Clusters[:1]
	if c, unsafe := w.UnsafeAfter(); c != "" || unsafe {
		t.Errorf("every cluster safe: UnsafeAfter = %q, %v", c, unsafe)
	}
}
