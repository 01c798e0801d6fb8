package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

const debianV = "Linux version 4.19.0-12-amd64 (debian-kernel@lists.debian.org) (gcc version 8.3.0 (Debian 8.3.0-6)) #1 SMP Debian 4.19.152-1 (2020-10-18)"

func TestKernelFixStatus(t *testing.T) {
	cases := []struct {
		name   string
		k      facts.Kernel
		status KernelFix
		reason string // substring
	}{
		{"el7 GA", facts.Kernel{Release: "3.10.0-1160.el7.x86_64", Distro: "centos"}, KernelUnknown, "el7 kernel 3.10.0-1160.el7.x86_64: Red Hat does not publish upstream sublevels"},
		{"el7 rpm hint", facts.Kernel{Release: "3.10.0-1160.el7.x86_64", Distro: "rhel"}, KernelUnknown, "rpm -q --changelog kernel-$(uname -r) | grep -F 'net: Update window_clamp if SOCK_RCVBUF is set'"},
		{"el7 changelog has fix", facts.Kernel{Release: "3.10.0-1160.el7.x86_64", Changelog: &facts.KernelChangelog{Source: "rpm -q --changelog kernel-3.10.0-1160.el7.x86_64", HasFix: true}}, KernelFixed, "contains \"net: Update window_clamp"},
		{"el7 changelog lacks fix", facts.Kernel{Release: "3.10.0-1160.el7.x86_64", Changelog: &facts.KernelChangelog{Source: "rpm -q --changelog kernel-3.10.0-1160.el7.x86_64"}}, KernelAffected, "changelog of rpm -q --changelog kernel-3.10.0-1160.el7.x86_64 lacks the fix title"},
		{"el8", facts.Kernel{Release: "4.18.0-348.el8.x86_64", Distro: "rocky"}, KernelUnknown, "el8 kernel 4.18.0-348.el8.x86_64"},
		{"el9 base 5.14", facts.Kernel{Release: "5.14.0-284.el9.x86_64", Distro: "rhel"}, KernelFixed, "base version 5.14 ≥ 5.10"},
		{"bionic signature stays 4.15.18", facts.Kernel{Release: "4.15.0-213-generic", Signature: "Ubuntu 4.15.0-213.224-generic 4.15.18", Distro: "ubuntu"}, KernelUnknown, "keeps that field fixed"},
		{"bionic with changelog title", facts.Kernel{Release: "4.15.0-213-generic", Signature: "Ubuntu 4.15.0-213.224-generic 4.15.18", Changelog: &facts.KernelChangelog{HasFix: true}}, KernelFixed, "contains"},
		{"focal 58 = 5.4.73", facts.Kernel{Release: "5.4.0-58-generic", Signature: "Ubuntu 5.4.0-58.64-generic 5.4.73", Distro: "ubuntu"}, KernelAffected, "upstream 5.4.73 (/proc/version_signature) < 5.4.78"},
		{"focal 59 = 5.4.78", facts.Kernel{Release: "5.4.0-59-generic", Signature: "Ubuntu 5.4.0-59.65-generic 5.4.78", Distro: "ubuntu"}, KernelFixed, "upstream 5.4.78 (/proc/version_signature) ≥ 5.4.78"},
		{"focal 150 = 5.4.233", facts.Kernel{Release: "5.4.0-150-generic", Signature: "Ubuntu 5.4.0-150.167-generic 5.4.233"}, KernelFixed, "5.4.233"},
		{"focal aws flavour", facts.Kernel{Release: "5.4.0-1030-aws", Signature: "Ubuntu 5.4.0-1030.31-aws 5.4.78"}, KernelFixed, "5.4.78"},
		{"focal without signature", facts.Kernel{Release: "5.4.0-150-generic", Distro: "ubuntu"}, KernelUnknown, "uname -r does not carry the upstream sublevel"},
		{"xenial 4.4.262", facts.Kernel{Release: "4.4.0-210-generic", Signature: "Ubuntu 4.4.0-210.242-generic 4.4.262"}, KernelFixed, "≥ 4.4.244"},
		{"jammy 5.15", facts.Kernel{Release: "5.15.0-91-generic", Signature: "Ubuntu 5.15.0-91.101-generic 5.15.131"}, KernelFixed, "base version 5.15"},
		{"debian buster 4.19.152", facts.Kernel{Release: "4.19.0-12-amd64", Version: debianV, Distro: "debian"}, KernelAffected, "upstream 4.19.152 (/proc/version) < 4.19.158"},
		{"debian buster 4.19.160", facts.Kernel{Release: "4.19.0-13-amd64", Version: "Linux version 4.19.0-13-amd64 (debian-kernel@lists.debian.org) (gcc version 8.3.0 (Debian 8.3.0-6)) #1 SMP Debian 4.19.160-2 (2020-11-28)", Distro: "debian"}, KernelFixed, "upstream 4.19.160"},
		{"debian release alone", facts.Kernel{Release: "4.19.0-12-amd64", Distro: "debian"}, KernelUnknown, "ABI is not the upstream sublevel"},
		{"debian gcc version is not the kernel", facts.Kernel{Release: "4.19.0-12-amd64", Version: "Linux version 4.19.0-12-amd64 (gcc version 8.3.0 (Debian 8.3.0-6)) #1 SMP"}, KernelUnknown, "/proc/version"},
		{"debian jessie 3.16", facts.Kernel{Release: "3.16.0-11-amd64", Version: "#1 SMP Debian 3.16.84-1 (2020-06-09)", Distro: "debian"}, KernelUnknown, "Debian may have backported"},
		{"debian bookworm 6.1", facts.Kernel{Release: "6.1.0-13-amd64", Version: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1 (2023-09-29)"}, KernelFixed, "base version 6.1"},
		{"amazon 4.14.203", facts.Kernel{Release: "4.14.203-156.332.amzn2.x86_64", Distro: "amzn"}, KernelAffected, "upstream 4.14.203 (Amazon Linux release string) < 4.14.207"},
		{"amazon 4.14.209", facts.Kernel{Release: "4.14.209-160.335.amzn2.x86_64", Distro: "amzn"}, KernelFixed, "≥ 4.14.207"},
		{"amazon changelog absence does not settle", facts.Kernel{Release: "4.14.209-160.335.amzn2.x86_64", Changelog: &facts.KernelChangelog{}}, KernelFixed, "≥ 4.14.207"},
		{"vanilla 4.9.243", facts.Kernel{Release: "4.9.243"}, KernelAffected, "< 4.9.244"},
		{"vanilla 4.9.244", facts.Kernel{Release: "4.9.244"}, KernelFixed, "≥ 4.9.244"},
		{"vanilla 5.9.8", facts.Kernel{Release: "5.9.8"}, KernelAffected, "< 5.9.9"},
		{"vanilla 5.9.9", facts.Kernel{Release: "5.9.9"}, KernelFixed, "≥ 5.9.9"},
		{"vanilla 5.10.0", facts.Kernel{Release: "5.10.0"}, KernelFixed, "5.10"},
		{"vanilla 5.10", facts.Kernel{Release: "5.10"}, KernelFixed, "5.10"},
		{"vanilla 5.10-rc3", facts.Kernel{Release: "5.10.0-rc3"}, KernelUnknown, "release candidate"},
		{"vanilla 4.4.302", facts.Kernel{Release: "4.4.302"}, KernelFixed, "≥ 4.4.244"},
		{"vanilla 4.19.160+", facts.Kernel{Release: "4.19.160+"}, KernelFixed, "≥ 4.19.158"},
		{"vanilla 5.6.0 non-LTS", facts.Kernel{Release: "5.6.0"}, KernelAffected, "the 5.6 series had ended"},
		{"vanilla 4.17.19 non-LTS", facts.Kernel{Release: "4.17.19"}, KernelAffected, "had ended"},
		{"vanilla 3.10.108 old", facts.Kernel{Release: "3.10.108"}, KernelAffected, "older than 4.4"},
		{"vanilla build on a Debian host", facts.Kernel{Release: "5.9.8", Distro: "debian"}, KernelAffected, "upstream 5.9.8 (upstream release string) < 5.9.9"},
		{"custom suffix is not vanilla", facts.Kernel{Release: "4.19.160-custom"}, KernelUnknown, "if it is an unmodified upstream 4.19.160 build, compare with 4.19.158"},
		{"uek6 no changelog", facts.Kernel{Release: "5.4.17-2136.307.3.1.el7uek.x86_64", Distro: "ol"}, KernelUnknown, "first fixed UEK build is not confirmed"},
		{"uek6 LTS v5.4.77", facts.Kernel{Release: "5.4.17-2136.el7uek.x86_64", Changelog: &facts.KernelChangelog{Source: "rpm -q --changelog kernel-uek", LastLTSTag: "v5.4.77"}}, KernelAffected, "last merged LTS tag v5.4.77"},
		{"uek6 LTS v5.4.78", facts.Kernel{Release: "5.4.17-2136.el7uek.x86_64", Changelog: &facts.KernelChangelog{Source: "rpm -q --changelog kernel-uek", LastLTSTag: "v5.4.78"}}, KernelFixed, "LTS tag v5.4.78 ≥ v5.4.78"},
		{"uek6 LTS v5.4.201", facts.Kernel{Release: "5.4.17-2136.el8uek.x86_64", Changelog: &facts.KernelChangelog{LastLTSTag: "v5.4.201"}}, KernelFixed, "v5.4.201"},
		{"suse 5.3", facts.Kernel{Release: "5.3.18-57-default", Distro: "sles"}, KernelUnknown, "not a recognised distribution"},
		{"empty", facts.Kernel{}, KernelUnknown, "not gathered"},
		{"garbage", facts.Kernel{Release: "linux"}, KernelUnknown, "is not X.Y"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, reason := KernelFixStatus(c.k)
			if st != c.status || !strings.Contains(reason, c.reason) {
				t.Fatalf("KernelFixStatus(%q) = %s, %q\nwant %s with %q", c.k.Release, st, reason, c.status, c.reason)
			}
		})
	}
}

// TestKernelExposureMatrix: cookies 0/1/2/unread × rcvbuf -1/102400/unset/no Kafka/config unread,
// on an affected, an unknown and a fixed kernel.
func TestKernelExposureMatrix(t *testing.T) {
	kernelsUnder := map[string]facts.Kernel{
		"affected": {Release: "5.4.0-58-generic", Signature: "Ubuntu 5.4.0-58.64-generic 5.4.73"},
		"unknown":  {Release: "3.10.0-1160.el7.x86_64", Distro: "centos"},
		"fixed":    {Release: "5.4.0-59-generic", Signature: "Ubuntu 5.4.0-59.65-generic 5.4.78"},
	}
	cookies := []string{"0", "1", "2", "unread"}
	rcvbufs := []string{"-1", "102400", "unset", "no-kafka", "config-unread"}
	for kname, k := range kernelsUnder {
		for _, ck := range cookies {
			for _, rb := range rcvbufs {
				t.Run(fmt.Sprintf("%s/cookies=%s/rcvbuf=%s", kname, ck, rb), func(t *testing.T) {
					f := compliantHost()
					f.Kernel = k
					if ck == "unread" {
						delete(f.Sysctl, KeySyncookies)
					} else {
						f.Sysctl[KeySyncookies] = ck
					}
					switch rb {
					case "-1", "102400":
						f.Kafka.Properties[PropRcvbuf] = rb
					case "unset":
						delete(f.Kafka.Properties, PropRcvbuf)
					case "no-kafka":
						f.Kafka = nil
					case "config-unread":
						f.Kafka.Properties = nil
						f.Sections = map[string]facts.SectionStatus{facts.SecKafkaConf: {State: "denied", Message: "permission denied"}}
					}
					fd := find(t, Evaluate(f, DefaultProfile()), "kernel-synack-wscale")
					exposed := ck != "0" && rb != "-1"
					var wantSt Status
					var wantSev Severity
					var wantReason string
					switch {
					case kname == "fixed":
						wantSt, wantSev, wantReason = Pass, Critical, "≥ 5.4.78"
					case kname == "affected" && exposed:
						wantSt, wantSev, wantReason = Fail, Critical, "window scale different from the one advertised"
					case kname == "affected" && ck == "0":
						wantSt, wantSev, wantReason = Warn, Low, "kernel lacks 909172a but tcp_syncookies=0: cookies never fire; SYNs are dropped instead when the queue is full"
					case kname == "affected":
						wantSt, wantSev, wantReason = Warn, Low, "socket.receive.buffer.bytes=-1: the listener does not set SO_RCVBUF, so the cookie path has no clamp to forget [D]"
					case exposed:
						wantSt, wantSev, wantReason = Unknown, Critical, "Red Hat does not publish upstream sublevels"
					default:
						wantSt, wantSev, wantReason = Unknown, Low, "cannot tell whether the kernel has commit 909172a, but"
					}
					if fd.Status != wantSt || fd.Severity != wantSev || !strings.Contains(fd.Reason, wantReason) {
						t.Fatalf("got %s/%s %q\nwant %s/%s with %q", fd.Status, fd.Severity, fd.Reason, wantSt, wantSev, wantReason)
					}
					switch {
					case kname == "fixed":
						if fd.Fix != nil {
							t.Fatalf("fixed kernel got a fix: %+v", fd.Fix)
						}
					case exposed:
						if fd.Fix == nil || fd.Fix.Sysctl[KeySyncookies] != "0" || !strings.Contains(fd.Fix.Manual, "upgrade the kernel") || len(fd.Fix.Alternatives) != 2 {
							t.Fatalf("exposed host: fix %+v", fd.Fix)
						}
					default:
						if fd.Fix == nil || fd.Fix.Sysctl != nil {
							t.Fatalf("mitigated host must get the upgrade advice without a sysctl change: %+v", fd.Fix)
						}
					}
					if rb == "no-kafka" && exposed && !strings.Contains(fd.Observed, "no Kafka broker found, assuming") {
						t.Errorf("observed %q does not say the SO_RCVBUF assumption", fd.Observed)
					}
					if ck == "unread" && !strings.Contains(fd.Observed, "tcp_syncookies not read, assuming cookies can fire") {
						t.Errorf("observed %q does not say the cookies assumption", fd.Observed)
					}
				})
			}
		}
	}
}

func TestKernelFixManual(t *testing.T) {
	cases := map[string]struct {
		k    facts.Kernel
		want string
	}{
		"debian":  {facts.Kernel{Release: "4.19.0-12-amd64", Version: debianV}, "upgrade the kernel to ≥ 4.19.158 (first fixed in the 4.19 series), or any kernel ≥ 5.10"},
		"focal":   {facts.Kernel{Release: "5.4.0-58-generic", Signature: "Ubuntu 5.4.0-58.64-generic 5.4.73"}, "5.4.0-59.65 or later"},
		"5.6":     {facts.Kernel{Release: "5.6.0"}, "any kernel ≥ 5.10 or a stable series that has the fix (4.4.244, 4.9.244, 4.14.207, 4.19.158, 5.4.78, 5.9.9)"},
		"el7":     {facts.Kernel{Release: "3.10.0-1160.el7.x86_64"}, "RHEL 9"},
		"amazon":  {facts.Kernel{Release: "4.14.203-156.332.amzn2.x86_64"}, "≥ 4.14.207"},
		"vanilla": {facts.Kernel{Release: "5.9.8"}, "≥ 5.9.9"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			f := compliantHost()
			f.Kernel = c.k
			fd := find(t, Evaluate(f, DefaultProfile()), "kernel-synack-wscale")
			if fd.Fix == nil || !strings.Contains(fd.Fix.Manual, c.want) {
				t.Fatalf("fix %+v, want manual with %q", fd.Fix, c.want)
			}
		})
	}
}
