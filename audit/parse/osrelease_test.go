package parse

import (
	"strings"
	"testing"
)

func TestParseOSRelease(t *testing.T) {
	tests := []struct {
		file string
		want OSRelease
	}{
		{"os-release/centos-7.txt", OSRelease{ID: "centos", VersionID: "7", IDLike: "rhel fedora", PrettyName: "CentOS Linux 7 (Core)", Name: "CentOS Linux"}},
		{"os-release/rhel-8.6.txt", OSRelease{ID: "rhel", VersionID: "8.6", IDLike: "fedora", PrettyName: "Red Hat Enterprise Linux 8.6 (Ootpa)", Name: "Red Hat Enterprise Linux"}},
		{"os-release/rocky-8.8.txt", OSRelease{ID: "rocky", VersionID: "8.8", IDLike: "rhel centos fedora", PrettyName: "Rocky Linux 8.8 (Green Obsidian)", Name: "Rocky Linux"}},
		{"os-release/oracle-linux-7.9.txt", OSRelease{ID: "ol", VersionID: "7.9", IDLike: "fedora", PrettyName: "Oracle Linux Server 7.9", Name: "Oracle Linux Server"}},
		{"os-release/ubuntu-20.04.6.txt", OSRelease{ID: "ubuntu", VersionID: "20.04", IDLike: "debian", PrettyName: "Ubuntu 20.04.6 LTS", Name: "Ubuntu"}},
		{"os-release/ubuntu-22.04.4.txt", OSRelease{ID: "ubuntu", VersionID: "22.04", IDLike: "debian", PrettyName: "Ubuntu 22.04.4 LTS", Name: "Ubuntu"}},
		{"os-release/debian-12-this-machine.txt", OSRelease{ID: "debian", VersionID: "12", PrettyName: "Debian GNU/Linux 12 (bookworm)", Name: "Debian GNU/Linux"}},
		{"os-release/amazon-linux-2.txt", OSRelease{ID: "amzn", VersionID: "2", IDLike: "centos rhel fedora", PrettyName: "Amazon Linux 2", Name: "Amazon Linux"}},
		{"os-release/syntax-corners-handwritten.txt", OSRelease{ID: "weird", VersionID: "1.0", IDLike: `rhel "fedora"`, PrettyName: "It's $HOME \\ `x`", Name: "Single Quoted Linux"}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.file, "os-release/"), func(t *testing.T) {
			if got := ParseOSRelease(readTestdata(t, tt.file)); got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseOSReleaseCorners(t *testing.T) {
	tests := []struct {
		name, in string
		want     OSRelease
	}{
		{"empty", "", OSRelease{}},
		{"CRLF", "ID=ubuntu\r\nVERSION_ID=\"22.04\"\r\n", OSRelease{ID: "ubuntu", VersionID: "22.04"}},
		{"last wins", "ID=a\nID=b\n", OSRelease{ID: "b"}},
		{"unterminated quote skipped", "ID=\"open\nNAME=ok\n", OSRelease{Name: "ok"}},
		{"empty value", "ID=\nVERSION_ID=''\n", OSRelease{}},
		{"not a file", "cat: /etc/os-release: No such file or directory\n", OSRelease{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseOSRelease(tt.in); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
