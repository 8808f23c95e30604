package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A checkout of the two files hack/version.sh reads, in a git repository of
// its own.
func versionRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"hack/version.sh", "deploy/helm/locus/Chart.yaml"} {
		raw, err := os.ReadFile(filepath.Join(repo(t), f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), raw, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "first")
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func version(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(dir, "hack/version.sh")).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// Every commit's build says which commit it is; only the release commit,
// tagged v<appVersion>, says the bare version, the image tag the chart
// installs.
func TestVersionIsPerCommitUntilTagged(t *testing.T) {
	dir := versionRepo(t)
	raw, err := os.ReadFile(filepath.Join(dir, "deploy/helm/locus/Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	app := regexp.MustCompile(`(?m)^appVersion: *"?([^"\n]+)"?$`).FindSubmatch(raw)
	if app == nil {
		t.Fatal("Chart.yaml has no appVersion")
	}
	v := string(app[1])
	first := git(t, dir, "rev-parse", "--short=12", "HEAD")
	if got := version(t, dir); got != v+"-dev+"+first {
		t.Errorf("an untagged commit: %q, want %q", got, v+"-dev+"+first)
	}
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "second")
	second := git(t, dir, "rev-parse", "--short=12", "HEAD")
	if got := version(t, dir); got != v+"-dev+"+second {
		t.Errorf("the next commit: %q, want %q", got, v+"-dev+"+second)
	}
	git(t, dir, "tag", "v"+v)
	if got := version(t, dir); got != v {
		t.Errorf("the commit tagged v%s: %q, want %q", v, got, v)
	}
	if err := os.WriteFile(filepath.Join(dir, "deploy/helm/locus/Chart.yaml"), append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := version(t, dir); got != v+"-dev+"+second+".dirty" {
		t.Errorf("the tagged commit with a change: %q, want %q", got, v+"-dev+"+second+".dirty")
	}
}

// The images' tag is the version in a tag's grammar, which has no '+': each
// commit's images have a tag of their own, and the release's the bare version.
func TestImageTagIsTheVersionAsATag(t *testing.T) {
	dir := versionRepo(t)
	tag := func() string {
		t.Helper()
		out, err := exec.Command(filepath.Join(dir, "hack/version.sh"), "--image-tag").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	ociTag := regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	v := version(t, dir)
	if got := tag(); got != strings.ReplaceAll(v, "+", ".") || !ociTag.MatchString(got) || got == strings.TrimSuffix(v, "-dev+"+git(t, dir, "rev-parse", "--short=12", "HEAD")) {
		t.Errorf("image tag %q for version %q: want the version with '.' for '+', a valid tag, not the release's", got, v)
	}
	app := strings.TrimSuffix(v, "-dev+"+git(t, dir, "rev-parse", "--short=12", "HEAD"))
	git(t, dir, "tag", "v"+app)
	if got := tag(); got != app {
		t.Errorf("the release commit's image tag %q, want %q", got, app)
	}
	if err := exec.Command(filepath.Join(dir, "hack/version.sh"), "--bogus").Run(); err == nil {
		t.Error("hack/version.sh --bogus succeeded, want a usage error")
	}
}
