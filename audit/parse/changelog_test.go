package parse

import (
	"reflect"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// The samples are reconstructed (see testdata/README.md): the highest LTS
// tag wins numerically (v5.4.85 over v5.4.9), the fix title is found
// wherever the line has it, and a section without "source=" is nil.
func TestKernelChangelog(t *testing.T) {
	for _, tc := range []struct {
		file string
		want *facts.KernelChangelog
	}{
		{"uek-rpm-reconstructed.txt", &facts.KernelChangelog{Source: "rpm -q --changelog kernel-uek-5.4.17-2102.201.3.el8uek.x86_64", HasFix: true, LastLTSTag: "v5.4.85"}},
		{"debian-reconstructed.txt", &facts.KernelChangelog{Source: "/usr/share/doc/linux-image-5.4.0-60-generic/changelog.Debian.gz", HasFix: true}},
		{"rpm-without-fix-reconstructed.txt", &facts.KernelChangelog{Source: "rpm -q --changelog kernel-core-4.18.0-240.el8.x86_64"}},
	} {
		got := KernelChangelog(readTestdata(t, "kernel-changelog/"+tc.file))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.file, got, tc.want)
		}
	}
	if got := KernelChangelog("- LTS tag: v5.4.85\n"); got != nil {
		t.Errorf("no source line: %+v, want nil", got)
	}
}
