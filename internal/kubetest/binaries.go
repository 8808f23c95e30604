package kubetest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// BinDirEnv names the environment variable that points at the control-plane binaries;
// without it they are looked for in DefaultBinDir under the repository root.
const BinDirEnv = "LOCUS_CONTROLPLANE_BIN"

// DefaultBinDir is where hack/build-controlplane.sh puts the binaries, relative to
// the repository root.
const DefaultBinDir = ".cache/controlplane/bin"

// Binaries are the paths of the programs a control plane runs.
type Binaries struct {
	Dir           string
	KubeAPIServer string
	Etcd          string
	Kubectl       string
	Kwok          string
}

// FindBinaries locates the binaries built by hack/build-controlplane.sh: in dir if it
// is not empty, else in $LOCUS_CONTROLPLANE_BIN, else in <repo>/.cache/controlplane/bin.
// A missing binary is an error that says how to build them: tests that need a control
// plane fail rather than skip, so that a machine without them is noticed.
func FindBinaries(dir string) (Binaries, error) {
	if dir == "" {
		dir = os.Getenv(BinDirEnv)
	}
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return Binaries{}, fmt.Errorf("finding the control-plane binaries: %w (or set %s)", err, BinDirEnv)
		}
		dir = filepath.Join(root, DefaultBinDir)
	}
	b := Binaries{
		Dir:           dir,
		KubeAPIServer: filepath.Join(dir, "kube-apiserver"),
		Etcd:          filepath.Join(dir, "etcd"),
		Kubectl:       filepath.Join(dir, "kubectl"),
		Kwok:          filepath.Join(dir, "kwok"),
	}
	var missing []string
	for _, p := range []string{b.KubeAPIServer, b.Etcd, b.Kubectl, b.Kwok} {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			missing = append(missing, filepath.Base(p))
		}
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("control-plane binaries missing in %s: %s; build them with hack/build-controlplane.sh (or point %s at a directory that has them)",
			dir, strings.Join(missing, ", "), BinDirEnv)
	}
	return b, nil
}

// RepoRoot walks up from the working directory (a package directory under go test)
// to the directory holding hack/build-controlplane.sh.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "build-controlplane.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no hack/build-controlplane.sh in the working directory or above it: not inside the locus repository")
		}
		dir = parent
	}
}
