package buildinfo

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestUnstampedBuildSaysDev(t *testing.T) {
	got := Get().String("locus")
	want := "locus dev (commit unknown, " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestModuleVersion(t *testing.T) {
	// Test binaries carry no dependency list of the main package's; an unknown
	// module must give "", never a wrong version.
	if v := ModuleVersion("example.com/not/a/dependency"); v != "" {
		t.Errorf("ModuleVersion of a missing module = %q", v)
	}
	if strings.Contains(Get().String("x"), "\n") {
		t.Error("version line spans lines")
	}
}

// The Makefile's -X flags name this package's variables: a build stamped as
// `make build` stamps prints them.
func TestStampedBuildPrintsVersionAndCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "stamp")
	pkg := "github.com/locus-project/locus/cmd/internal/buildinfo"
	build := exec.Command("go", "build", "-o", bin, "-ldflags",
		"-X "+pkg+".version=1.2.3 -X "+pkg+".commit=0123abc", "./testdata/stamp")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "stamp 1.2.3 (commit 0123abc, " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")"
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
