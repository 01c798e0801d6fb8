package pipeline

import "runtime/debug"

// Version is the version kaudit reports (--version and every report's
// tool_version): set (the -ldflags version) when not empty, else the
// module version the binary was built from (v1.2.3 from `go install
// ...@v1.2.3`, or the pseudo-version go build stamps from the VCS), else
// the VCS revision.
func Version(set string) string {
	if set != "" {
		return set
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return BuildVersion(bi)
}

// BuildVersion is the version bi describes: its main module's version,
// else devel+REVISION (12 digits, -dirty when modified), else devel.
func BuildVersion(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "devel+" + rev
}
