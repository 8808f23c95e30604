// Package buildinfo is what `locus version` and `locus-scheduler --version` print:
// the version and commit stamped by the build (make build, make images) with
//
//	-ldflags "-X github.com/locus-project/locus/cmd/internal/buildinfo.version=V
//	          -X github.com/locus-project/locus/cmd/internal/buildinfo.commit=SHA"
//
// and the Go version that built the binary. A plain `go build` leaves them "dev"
// and "unknown".
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time; variables, not constants, so that -X can.
var (
	version = "dev"
	commit  = "unknown"
)

// Info is the build's identity.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the stamped version and commit.
func Get() Info {
	return Info{Version: version, Commit: commit, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
}

// String is the one line both binaries print: "NAME VERSION (commit C, go1.x, os/arch)".
func (i Info) String(name string) string {
	return fmt.Sprintf("%s %s (commit %s, %s, %s)", name, i.Version, i.Commit, i.GoVersion, i.Platform)
}

// ModuleVersion is the version of a module the binary was built with (e.g.
// k8s.io/kubernetes for the scheduler), or "" when it was not.
func ModuleVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, m := range bi.Deps {
		if m.Path == path {
			if m.Replace != nil {
				return m.Replace.Version
			}
			return m.Version
		}
	}
	return ""
}
