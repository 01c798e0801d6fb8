package main

import (
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=..."; when
// it is empty the binary reports the version its build info carries.
var version = ""

// toolVersion is the version kaudit reports (--version and every
// report's tool_version): the -ldflags version, else the module version
// the binary was built from (v1.2.3 from `go install ...@v1.2.3`, or the
// pseudo-version go build stamps from the VCS), else the VCS revision.
func toolVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return buildVersion(bi)
}

func buildVersion(bi *debug.BuildInfo) string {
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
