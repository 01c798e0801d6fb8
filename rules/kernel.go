package rules

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	version "github.com/hashicorp/go-version"

	"github.com/kaudit/kaudit/audit/facts"
)

// KernelFix is whether the running kernel has the fix (KernelFixStatus).
type KernelFix string

// Kernel fix status values returned by KernelFixStatus.
const (
	KernelFixed    KernelFix = "fixed"
	KernelAffected KernelFix = "affected"
	KernelUnknown  KernelFix = "unknown"
)

var (
	xyzRE       = regexp.MustCompile(`^\d+\.\d+\.\d+$`)
	releaseRE   = regexp.MustCompile(`^(\d+)\.(\d+)(?:\.(\d+))?(.*)$`)
	signatureRE = regexp.MustCompile(`^Ubuntu \S+ (\d+\.\d+(?:\.\d+)?)\s*$`)
	debianRE    = regexp.MustCompile(`Debian (\d+\.\d+(?:\.\d+)?)-\S+`)
	amazonRE    = regexp.MustCompile(`\.amzn\d*`)
	rcRE        = regexp.MustCompile(`^-rc\d+\+?$`)
	ltsTagRE    = regexp.MustCompile(`^v?(\d+\.\d+\.\d+)$`)
	redHatRE    = regexp.MustCompile(`\.el\d+`)
	debFlavorRE = regexp.MustCompile(`^-\d+-(cloud-|rt-)?(amd64|arm64|armmp|armmp-lpae|686|686-pae|i386|powerpc64le|ppc64el|s390x|marvell|rpi)$`)
	ubuFlavorRE = regexp.MustCompile(`^-\d+-(generic|lowlatency|aws|azure|gcp|gke|gkeop|kvm|oracle|ibm|raspi|virtual)`)
)

// parseKernelVersion parses a plain X.Y.Z upstream version.
func parseKernelVersion(s string) (*version.Version, error) {
	if !xyzRE.MatchString(s) {
		return nil, fmt.Errorf("not X.Y.Z: %q", s)
	}
	return version.NewVersion(s)
}

// parseSeries parses "X.Y" (a kernel series or a Kafka/CP minor).
func parseSeries(s string) (int, int, bool) {
	a, b, ok := strings.Cut(s, ".")
	if !ok {
		return 0, 0, false
	}
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	return x, y, err1 == nil && err2 == nil && x >= 0 && y >= 0
}

func cmpSeries(a, b string) int {
	ax, ay, _ := parseSeries(a)
	bx, by, _ := parseSeries(b)
	switch {
	case ax != bx:
		return cmpInt(ax, bx)
	default:
		return cmpInt(ay, by)
	}
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func seriesOf(v *version.Version) string {
	s := v.Segments()
	return fmt.Sprintf("%d.%d", s[0], s[1])
}

// firstFixedIn returns the first fixed release of an upstream stable series.
func firstFixedIn(series string) (string, bool) {
	for _, s := range kernels.Stable {
		if s.Series == series {
			return s.FirstFixed, true
		}
	}
	return "", false
}

// distroFirstFixed is, from kernels.yaml's distros, the first fixed build
// of a distribution's kernel series (Ubuntu focal's 5.4.0-59.65) and the
// upstream stable release that build carries (5.4.78).
func distroFirstFixed(distro, series string) (d distroNote, upstream string, ok bool) {
	for _, d := range kernels.Distros {
		if d.Distro == distro && d.KernelSeries == series && d.FirstFixed != "" {
			up, ok := firstFixedIn(series)
			return d, up, ok
		}
	}
	return distroNote{}, "", false
}

// uekFixedTag is the LTS tag of Oracle UEK's series (kernels.yaml distro
// "ol") from which a UEK changelog carries the fix: "v5.4.78".
func uekFixedTag() string {
	for _, d := range kernels.Distros {
		if up, ok := firstFixedIn(d.KernelSeries); d.Distro == "ol" && ok {
			return "v" + up
		}
	}
	return "the first fixed release of its series"
}

// kernelAnalysis is the full result behind KernelFixStatus.
type kernelAnalysis struct {
	status     KernelFix
	reason     string
	release    string
	series     string // X.Y of the release ("" when unparsable)
	upstream   string // upstream stable version the kernel is built on, when known
	firstFixed string // first fixed release of the series, "" when the series never got the fix
	vendor     string // vanilla, ubuntu, debian, amazon, redhat, uek, other
	source     Source // which evidence decided: a Source* constant ("" = nothing did)
	probeNote  string // why the probe, when asked for, did not decide
}

// fixedRange says which kernels of this kind have the fix, for Expected.
func (a kernelAnalysis) fixedRange() string {
	if d, up, ok := distroFirstFixed(a.vendor, a.series); ok && a.vendor == "ubuntu" {
		return "Ubuntu ≥ " + d.FirstFixed + " (upstream ≥ " + up + "), or ≥ " + kernels.Mainline
	}
	switch {
	case a.firstFixed != "" && a.vendor != "redhat" && a.vendor != "uek":
		return "≥ " + a.firstFixed + " in the " + a.series + " series, or ≥ " + kernels.Mainline
	}
	return "≥ " + kernels.Mainline + ", or a build that carries it"
}

// upgradeTarget says which kernel to move to, for Fix.Manual.
func (a kernelAnalysis) upgradeTarget() string {
	if d, up, ok := distroFirstFixed(a.vendor, a.series); ok && a.vendor == "ubuntu" {
		return d.FirstFixed + " or later (upstream ≥ " + up + "), or any kernel ≥ " + kernels.Mainline
	}
	switch {
	case a.vendor == "redhat":
		return "a build whose changelog contains \"" + kernels.Title + "\", or a distribution kernel ≥ " + kernels.Mainline + " (RHEL 9's 5.14 has it)"
	case a.vendor == "uek":
		return "a UEK build whose changelog contains \"" + kernels.Title + "\" (LTS tag ≥ " + uekFixedTag() + "), or any kernel ≥ " + kernels.Mainline
	case a.firstFixed != "":
		return "≥ " + a.firstFixed + " (first fixed in the " + a.series + " series), or any kernel ≥ " + kernels.Mainline
	}
	var fixed []string
	for _, s := range kernels.Stable {
		fixed = append(fixed, s.FirstFixed)
	}
	series := cmp.Or(a.series, "this")
	return "any kernel ≥ " + kernels.Mainline + " or a stable series that has the fix (" + strings.Join(fixed, ", ") +
		"); the " + series + " series has no fixed upstream release"
}

// KernelFixStatus says whether the running kernel contains Linux commit
// 909172a ("net: Update window_clamp if SOCK_RCVBUF is set"): "fixed",
// "affected" or "unknown", with the reason. It reads only facts.Kernel.
//
// Decision order: the package changelog (title present, or an Oracle UEK LTS
// tag at or above the series' first fixed release) → fixed; a base version
// X.Y ≥ 5.10 → fixed; a known upstream sublevel (Ubuntu version_signature,
// Debian /proc/version, Amazon Linux release, plain upstream release) compared
// with the series' first fixed release; a series that never got the backport
// → affected for upstream builds, unknown for vendor builds; any other vendor
// kernel → affected when its changelog was read and lacks the title, else
// unknown. Never "fixed" without evidence.
func KernelFixStatus(k facts.Kernel) (status KernelFix, reason string) {
	a := analyzeKernel(k)
	return a.status, a.reason
}

func analyzeKernel(k facts.Kernel) kernelAnalysis {
	a := &kernelAnalysis{release: strings.TrimSpace(k.Release), status: KernelUnknown}
	if a.release == "" {
		a.reason = "kernel release not gathered"
		return *a
	}
	m := releaseRE.FindStringSubmatch(a.release)
	if m == nil {
		a.reason = fmt.Sprintf("kernel release %q is not X.Y[.Z]", a.release)
		return *a
	}
	a.series = m[1] + "." + m[2]
	sub, suffix := m[3], m[4]
	a.firstFixed, _ = firstFixedIn(a.series)
	a.vendor = classifyVendor(k, suffix)
	cl := k.Changelog
	if a.byChangelog(cl) || a.byBase(sub, suffix) {
		return *a
	}
	upstream, done := a.byUpstream(k, sub, suffix)
	if done {
		return *a
	}
	// Vendor kernels whose sublevel cannot settle it. A changelog that
	// lists each backported upstream title (RPM kernels, Oracle UEK, Ubuntu)
	// settles it by the title's absence too.
	if cl != nil && (a.vendor == "redhat" || a.vendor == "uek" || a.vendor == "ubuntu") {
		a.status, a.source = KernelAffected, SourceChangelog
		a.reason = fmt.Sprintf("kernel %s: changelog of %s lacks the fix title %q", a.release, clSource(cl, a.release), kernels.Title)
		if cl.LastLTSTag != "" {
			a.reason += fmt.Sprintf(" and its last merged LTS tag %s is below the first fixed release", cl.LastLTSTag)
		}
		return *a
	}
	a.reason = unsettledReason(*a, upstream, sub)
	if cl != nil {
		a.reason += fmt.Sprintf("; its changelog (%s) lacks the title, but this vendor's changelog is not known to list every upstream title", clSource(cl, a.release))
	}
	return *a
}

// byChangelog settles a kernel as fixed by its package changelog: the
// fix title, or an Oracle UEK LTS tag at or above its series' first fixed
// release (or of a series ≥ mainline).
func (a *kernelAnalysis) byChangelog(cl *facts.KernelChangelog) bool {
	if cl != nil && cl.HasFix {
		a.status, a.source = KernelFixed, SourceChangelog
		a.reason = fmt.Sprintf("kernel %s: changelog (%s) contains %q", a.release, clSource(cl, a.release), kernels.Title)
		return true
	}
	if cl == nil || cl.LastLTSTag == "" {
		return false
	}
	tm := ltsTagRE.FindStringSubmatch(cl.LastLTSTag)
	if tm == nil {
		return false
	}
	tv, _ := parseKernelVersion(tm[1])
	ts := seriesOf(tv)
	if ff, ok := firstFixedIn(ts); ok {
		fv, _ := parseKernelVersion(ff)
		if !tv.GreaterThanOrEqual(fv) {
			return false
		}
		a.status, a.source = KernelFixed, SourceChangelog
		a.upstream = tm[1]
		a.reason = fmt.Sprintf("kernel %s: changelog (%s) merged LTS tag %s ≥ v%s, which carries the fix", a.release, clSource(cl, a.release), cl.LastLTSTag, ff)
		return true
	}
	if cmpSeries(ts, kernels.Mainline) >= 0 {
		a.status, a.source = KernelFixed, SourceChangelog
		a.reason = fmt.Sprintf("kernel %s: changelog (%s) merged LTS tag %s of a series ≥ %s", a.release, clSource(cl, a.release), cl.LastLTSTag, kernels.Mainline)
		return true
	}
	return false
}

// byBase settles a kernel whose base version X.Y is ≥ mainline: fixed,
// except a mainline release candidate (unknown).
func (a *kernelAnalysis) byBase(sub, suffix string) bool {
	if cmpSeries(a.series, kernels.Mainline) < 0 {
		return false
	}
	if a.series == kernels.Mainline && (sub == "" || sub == "0") && rcRE.MatchString(suffix) {
		a.reason = fmt.Sprintf("kernel %s is a %s release candidate: the fix landed during the %s-rc cycle (for -rc4), so an rc build cannot be settled from its name", a.release, kernels.Mainline, kernels.Mainline)
		return true
	}
	a.status, a.source = KernelFixed, SourceVersion
	a.reason = fmt.Sprintf("kernel %s: base version %s ≥ %s, which contains commit %s", a.release, a.series, kernels.Mainline, kernels.Commit[:7])
	return true
}

// byUpstream compares a known upstream sublevel with the series' first
// fixed release; a plain upstream build of a series that never got the
// backport is affected. upstream is the sublevel found, if any.
func (a *kernelAnalysis) byUpstream(k facts.Kernel, sub, suffix string) (upstream string, done bool) {
	upstream, how := upstreamSublevel(k, *a, sub, suffix)
	if upstream == "" {
		return "", false
	}
	a.upstream, a.source = upstream, SourceVersion
	uv, _ := parseKernelVersion(upstream)
	if a.firstFixed != "" {
		fv, _ := parseKernelVersion(a.firstFixed)
		if uv.GreaterThanOrEqual(fv) {
			a.status = KernelFixed
			a.reason = fmt.Sprintf("kernel %s is built on upstream %s (%s) ≥ %s, the first fixed release of the %s series", a.release, upstream, how, a.firstFixed, a.series)
		} else {
			a.status = KernelAffected
			a.reason = fmt.Sprintf("kernel %s is built on upstream %s (%s) < %s, the first fixed release of the %s series: it lacks commit %s", a.release, upstream, how, a.firstFixed, a.series, kernels.Commit[:7])
		}
		return upstream, true
	}
	if a.vendor != "vanilla" {
		a.source = ""
		return upstream, false // a vendor kernel on a series with no upstream fix: the vendor may have backported it
	}
	a.status = KernelAffected
	if cmpSeries(a.series, kernels.OldestFixedSeries) < 0 {
		a.reason = fmt.Sprintf("kernel %s: series %s is older than %s and no release of it has commit %s", a.release, a.series, kernels.OldestFixedSeries, kernels.Commit[:7])
	} else {
		a.reason = fmt.Sprintf("kernel %s: the %s series had ended before the fix was backported (Nov 2020), so no %s release has commit %s", a.release, a.series, a.series, kernels.Commit[:7])
	}
	return upstream, true
}

func clSource(cl *facts.KernelChangelog, release string) string {
	return cmp.Or(cl.Source, "the kernel "+release+" package")
}

func classifyVendor(k facts.Kernel, suffix string) string {
	distro := strings.ToLower(k.Distro + " " + k.DistroLike)
	switch {
	case strings.Contains(suffix, "uek"):
		return "uek"
	case redHatRE.MatchString(suffix):
		return "redhat"
	case amazonRE.MatchString(suffix):
		return "amazon"
	case k.Signature != "" || ubuFlavorRE.MatchString(suffix):
		return "ubuntu"
	case debFlavorRE.MatchString(suffix):
		return "debian"
	case suffix == "" || suffix == "+" || rcRE.MatchString(suffix):
		return "vanilla" // a self-built upstream kernel, whatever the distribution
	case strings.Contains(distro, "ubuntu"):
		return "ubuntu"
	case strings.Contains(distro, "debian"):
		return "debian"
	}
	return "other"
}

// upstreamSublevel finds the upstream stable version the kernel is built on,
// when the host shows it; how says where it came from.
func upstreamSublevel(k facts.Kernel, a kernelAnalysis, sub, suffix string) (upstream, how string) {
	same := func(v string) bool {
		pv, err := parseKernelVersion(v)
		return err == nil && seriesOf(pv) == a.series
	}
	norm := func(v string) string {
		if strings.Count(v, ".") == 1 {
			return v + ".0"
		}
		return v
	}
	if m := signatureRE.FindStringSubmatch(strings.TrimSpace(k.Signature)); m != nil && same(norm(m[1])) {
		return norm(m[1]), "/proc/version_signature"
	}
	if ms := debianRE.FindAllStringSubmatch(k.Version, -1); len(ms) > 0 {
		// The last match: gcc's own "(Debian 8.3.0-6)" comes earlier in /proc/version.
		if v := norm(ms[len(ms)-1][1]); same(v) {
			return v, "/proc/version"
		}
	}
	switch a.vendor {
	case "amazon":
		if sub != "" {
			return a.series + "." + sub, "Amazon Linux release string"
		}
	case "vanilla":
		sub = cmp.Or(sub, "0")
		if rcRE.MatchString(suffix) {
			// X.Y-rcN precedes X.Y.0: for a series below mainline it has no fix either.
			return a.series + ".0", "upstream release candidate"
		}
		return a.series + "." + sub, "upstream release string"
	}
	return "", ""
}

// ubuntuFixedNote is " (focal: fixed from 5.4.0-59.65, upstream 5.4.78)"
// for every Ubuntu release with a confirmed first fixed build.
func ubuntuFixedNote() string {
	var notes []string
	for _, d := range kernels.Distros {
		if up, ok := firstFixedIn(d.KernelSeries); d.Distro == "ubuntu" && d.FirstFixed != "" && ok {
			notes = append(notes, d.Release+": fixed from "+d.FirstFixed+", upstream "+up)
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
}

const probeHint = "or run the SYN-cookie probe (tcp_syncookies=2 in a throw-away network namespace, compare the client's and the server's window scale)"

func unsettledReason(a kernelAnalysis, upstream, sub string) string {
	grep := fmt.Sprintf("grep -F '%s'", kernels.Title)
	switch a.vendor {
	case "redhat":
		el := redHatRE.FindString(a.release)
		return fmt.Sprintf("%s kernel %s: Red Hat does not publish upstream sublevels and no changelog evidence either way is known [U]; run `rpm -q --changelog kernel-$(uname -r) | %s` %s",
			strings.TrimPrefix(el, "."), a.release, grep, probeHint)
	case "uek":
		return fmt.Sprintf("Oracle UEK kernel %s: the %s sublevel never changes and the first fixed UEK build is not confirmed [U]; run `rpm -q --changelog kernel-uek-$(uname -r) | grep -e 'LTS tag' -e '%s'` (title present or LTS tag ≥ %s: fixed) %s",
			a.release, a.series, kernels.Title, uekFixedTag(), probeHint)
	case "ubuntu":
		if upstream != "" {
			return fmt.Sprintf("Ubuntu kernel %s: version_signature reports upstream %s, but the %s series has no fixed upstream release and Ubuntu keeps that field fixed for every ABI (bionic stays 4.15.18) [U]; search the package changelog (`apt changelog linux-image-$(uname -r) | %s`) %s",
				a.release, upstream, a.series, grep, probeHint)
		}
		return fmt.Sprintf("Ubuntu kernel %s: uname -r does not carry the upstream sublevel and /proc/version_signature was not read; its last field settles it%s", a.release, ubuntuFixedNote())
	case "debian":
		if upstream != "" {
			return fmt.Sprintf("Debian kernel %s: built on upstream %s, but the %s series has no fixed upstream release and Debian may have backported it [U]; search the package changelog for %q %s",
				a.release, upstream, a.series, kernels.Title, probeHint)
		}
		return fmt.Sprintf("Debian kernel %s: the release string's ABI is not the upstream sublevel and /proc/version (\"Debian <upstream>-<rev>\") was not read or did not match", a.release)
	case "amazon":
		return fmt.Sprintf("Amazon Linux kernel %s: the %s series has no fixed upstream release and Amazon's changelog lists only its own patches [U] %s", a.release, a.series, probeHint)
	}
	hint := ""
	if sub != "" && sub != "0" && a.firstFixed != "" {
		hint = fmt.Sprintf(" (if it is an unmodified upstream %s.%s build, compare with %s, the first fixed release of the series)", a.series, sub, a.firstFixed)
	}
	return fmt.Sprintf("kernel %s: not a recognised distribution or plain upstream release, so its upstream sublevel is not known%s; search the kernel package changelog for %q %s",
		a.release, hint, kernels.Title, probeHint)
}
