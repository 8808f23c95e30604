// Package scripts tests the build and test scripts of hack/ and .ci/.
package scripts

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// base are the commands make test takes as given: Go and make (the README's
// prerequisites), the project's own binary, and Debian's essential packages.
var base = []string{"go", "make", "locus", "bash", "sh", "sleep", "cp", "cat", "true", "tail", "env", "ldd", "apt-get"}

func repo(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// table is hack/test-deps.sh --list: command -> Debian package.
func table(t *testing.T) map[string]string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join(repo(t), "hack/test-deps.sh"), "--list").Output()
	if err != nil {
		t.Fatalf("hack/test-deps.sh --list: %v", err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			t.Fatalf("hack/test-deps.sh --list: line %q is not COMMAND PACKAGE", l)
		}
		m[f[0]] = f[1]
	}
	return m
}

func packages(m map[string]string) []string {
	var out []string
	for _, p := range m {
		out = append(out, p)
	}
	return out
}

// files are the repository's files under dirs whose names match suffix, the
// build cache and the guests' downloads left out.
func files(t *testing.T, suffix string, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range dirs {
		root := filepath.Join(repo(t), d)
		err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() && (e.Name() == ".cache" || e.Name() == "_output" || e.Name() == "testdata") {
				return filepath.SkipDir
			}
			if !e.IsDir() && strings.HasSuffix(path, suffix) {
				raw, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(repo(t), path)
				out[rel] = string(raw)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

var (
	execRE       = regexp.MustCompile(`exec\.(?:LookPath|Command|CommandContext)\((?:ctx, )?"([^"/]+)"`)
	debianPkgRE  = regexp.MustCompile(`Debian package ([a-z0-9.+-]+)`)
	aptInstallRE = regexp.MustCompile(`(?m)^\s*apt_install ([a-z0-9.+ -]+)$`)
	debsRE       = regexp.MustCompile(`debs\+?=\(([a-z0-9.+ -]+)\)`)
	needRE       = regexp.MustCompile(`need\+=\(([a-z0-9.+-]+)\)`)
	pairRE       = regexp.MustCompile(`([a-z0-9_.-]+):([a-z0-9.+-]+)`)
	pairLoopRE   = regexp.MustCompile(`(?s)for pair in (.*?); do`)
)

// Every command a Go test runs or looks up by name is in the table (or
// given), and every Debian package a test's message asks for is one the
// table installs.
func TestTestsNeedOnlyWhatMakeTestInstalls(t *testing.T) {
	deps := table(t)
	for path, src := range files(t, ".go", "cmd", "pkg", "internal", "test", "bench", "tools") {
		if strings.HasPrefix(path, "test/scripts/") {
			continue // these tests' own messages
		}
		for _, m := range execRE.FindAllStringSubmatch(src, -1) {
			if _, ok := deps[m[1]]; !ok && !slices.Contains(base, m[1]) {
				t.Errorf("%s runs %s, which hack/test-deps.sh neither installs nor takes as given", path, m[1])
			}
		}
		for _, m := range debianPkgRE.FindAllStringSubmatch(src, -1) {
			if !slices.Contains(packages(deps), m[1]) {
				t.Errorf("%s asks for the Debian package %s, which hack/test-deps.sh does not install", path, m[1])
			}
		}
	}
}

// The scripts make test runs install nothing the table does not name, so
// what test-deps says before the run is all the run installs; and CI
// installs nothing but make.
func TestScriptsInstallOnlyWhatTheTableSays(t *testing.T) {
	deps := table(t)
	pkgs := packages(deps)
	scripts := files(t, ".sh", "hack", "test")
	checked := 0
	for path, src := range scripts {
		var named []string
		for _, re := range []*regexp.Regexp{aptInstallRE, debsRE, needRE} {
			for _, m := range re.FindAllStringSubmatch(src, -1) {
				named = append(named, strings.Fields(m[1])...)
			}
		}
		for _, loop := range pairLoopRE.FindAllStringSubmatch(src, -1) {
			for _, p := range pairRE.FindAllStringSubmatch(loop[1], -1) {
				if deps[p[1]] != p[2] {
					t.Errorf("%s installs %s for %s; hack/test-deps.sh says %q", path, p[2], p[1], deps[p[1]])
				}
				checked++
			}
		}
		for _, p := range named {
			if !slices.Contains(pkgs, p) {
				t.Errorf("%s installs the Debian package %s, which hack/test-deps.sh does not name", path, p)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("found only %d packages the scripts install: the patterns no longer match them", checked)
	}
	ci, err := os.ReadFile(filepath.Join(repo(t), ".ci/run"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(ci), "\n") {
		if strings.Contains(l, "apt-get install") && !strings.HasSuffix(strings.TrimSpace(l), "install -y -qq make") {
			t.Errorf(".ci/run installs more than make: %q (make test installs the rest)", l)
		}
	}
	if !strings.Contains(string(ci), "\nmake test\n") {
		t.Error(".ci/run does not run make test, the README's test command")
	}
}

// test-deps says what is missing before it installs, and without root or
// apt-get says what to install instead of failing half-way.
func TestTestDepsSaysWhatIsMissing(t *testing.T) {
	bin := t.TempDir()
	// Only what the script itself runs, and go: every package is missing.
	for _, c := range []string{"bash", "sed", "sort", "grep", "paste", "cat", "id", "go"} {
		p, err := exec.LookPath(c)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if err := os.Symlink(p, filepath.Join(bin, c)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(bin, "bash"), filepath.Join(repo(t), "hack/test-deps.sh"), "--check")
	cmd.Env = append(os.Environ(), "PATH="+bin)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("--check with every package missing: %v\n%s", err, out)
	}
	for _, want := range []string{"installs with apt-get", "tmux", "chromium", "starts a one-node Kubernetes cluster",
		"boots QEMU guests", "missing Debian packages: "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("test-deps does not say %q:\n%s", want, out)
		}
	}
}
