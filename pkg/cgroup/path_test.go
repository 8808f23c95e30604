package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckRel(t *testing.T) {
	for _, tc := range []struct {
		rel     string
		wantErr string
	}{
		{"", ""},
		{"locus.slice/redis", ""},
		{"kubepods/burstable/pod1234/abcd", ""},
		{"..foo/bar..", ""}, // dots inside a name are just a name
		{"../../etc", `".." component`},
		{"a/../../b", `".." component`},
		{"a/..", `".." component`},
		{"./a", `"." component`},
		{"/etc", "absolute"},
		{"/", "absolute"},
		{"a//b", "empty component"},
		{"a/", "empty component"},
		{"a\x00b", "NUL"},
	} {
		err := CheckRel(tc.rel)
		if tc.wantErr == "" && err != nil {
			t.Errorf("CheckRel(%q) = %v, want ok", tc.rel, err)
		}
		if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("CheckRel(%q) = %v, want error with %q", tc.rel, err, tc.wantErr)
		}
	}
}

func TestPrefixesAndParent(t *testing.T) {
	got := strings.Join(prefixes("a/b/c"), ",")
	if got != "a,a/b,a/b/c" {
		t.Errorf("prefixes = %s", got)
	}
	for rel, want := range map[string]string{"a/b": "a", "a": ""} {
		if p, ok := parentRel(rel); !ok || p != want {
			t.Errorf("parentRel(%q) = %q,%v", rel, p, ok)
		}
	}
	if _, ok := parentRel(""); ok {
		t.Error("the root cgroup has no parent")
	}
}

func TestDirResolution(t *testing.T) {
	f1 := newFixture(t, V1, false)
	h1, err := Open(f1.root, V1)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := h1.Dir(Memory, "locus.slice/redis"); err != nil || d != filepath.Join(f1.root, "memory/locus.slice/redis") {
		t.Errorf("v1 Dir = %q, %v", d, err)
	}
	if _, err := h1.Dir("", "a"); err == nil {
		t.Error("v1 needs a controller")
	}
	if _, err := h1.Dir("../x", "a"); err == nil {
		t.Error("controller names must not hold a path")
	}
	f2 := newFixture(t, V2, false)
	h2, _ := Open(f2.root, V2)
	if d, err := h2.Dir(Memory, "locus.slice/redis"); err != nil || d != filepath.Join(f2.root, "locus.slice/redis") {
		t.Errorf("v2 Dir = %q, %v", d, err)
	}
}

// TestPathEscape feeds hostile cgroup paths and planted symlinks; none may
// resolve, and a Writer must write nothing for them.
func TestPathEscape(t *testing.T) {
	f := newFixture(t, V1, false)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "cpuset.cpus"), []byte("0-7\n"), 0o644)
	f.mkcg("ok")
	// A directory symlink leading out of the root, and a file symlink.
	if err := os.Symlink(outside, filepath.Join(f.dir(CPUSet, ""), "evil")); err != nil {
		t.Fatal(err)
	}
	f.mkcg("filelink")
	fl := filepath.Join(f.dir(CPUSet, "filelink"), "cpuset.cpus")
	os.Remove(fl)
	os.Symlink(filepath.Join(outside, "cpuset.cpus"), fl)
	os.Symlink(filepath.Join(outside, "nowhere"), filepath.Join(f.dir(CPUSet, ""), "dangling"))
	// cgroupfs has no symlinks, so even one that stays inside a hierarchy
	// is refused; only a v1 hierarchy may be one (cpu -> cpu,cpuacct).
	os.Symlink("ok", filepath.Join(f.dir(CPUSet, ""), "alias"))

	w, rec := f.writer(NewMemoryStore())
	for _, rel := range []string{"../../etc", "a/../../b", "/etc", "evil", "evil/sub", "filelink", "dangling/x", "ok/../../.."} {
		_, err := w.Apply([]Op{{Cgroup: rel, Knob: CPUSetCPUs, Value: "0"}})
		if err == nil {
			t.Errorf("Apply on %q succeeded, want refusal", rel)
		}
		if rel == "filelink" {
			continue // the directory is inside the root; only its file escapes
		}
		if _, err := w.EnsureCgroup(rel); err == nil {
			t.Errorf("EnsureCgroup(%q) succeeded, want refusal", rel)
		}
	}
	if rec.count() != 0 {
		t.Fatalf("hostile paths caused writes: %v", rec.writes)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "cpuset.cpus")); string(b) != "0-7\n" {
		t.Fatalf("file outside the root changed: %q", b)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Fatalf("something was created outside the root: %v", ents)
	}
	if _, err := w.Apply([]Op{{Cgroup: "alias", Knob: CPUSetCPUs, Value: "0"}}); err == nil {
		t.Errorf("a symlinked cgroup inside a hierarchy was followed")
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{"": Auto, "auto": Auto, "v1": V1, "1": V1, "V2": V2, "2": V2} {
		if v, err := ParseVersion(in); err != nil || v != want {
			t.Errorf("ParseVersion(%q) = %v, %v", in, v, err)
		}
	}
	if _, err := ParseVersion("3"); err == nil {
		t.Error("ParseVersion(3) accepted")
	}
}

func TestDetectFixtureNeedsOverride(t *testing.T) {
	f := newFixture(t, V1, false)
	_, err := Open(f.root, Auto)
	if err == nil || !strings.Contains(err.Error(), "set the cgroup version explicitly") {
		t.Fatalf("Open(auto) on a plain directory = %v", err)
	}
	if _, err := Open("relative/root", V1); err == nil {
		t.Error("relative root accepted")
	}
}

// TestDetectHost checks detection on this host's real mounts.
func TestDetectHost(t *testing.T) {
	for root, want := range map[string]Version{"/sys/fs/cgroup": Auto, "/sys/fs/cgroup/unified": V2} {
		if _, err := os.Stat(root); err != nil {
			t.Logf("%s absent, not checked", root)
			continue
		}
		v, err := Detect(root)
		if err != nil {
			t.Errorf("Detect(%s): %v", root, err)
			continue
		}
		if want != Auto && v != want {
			t.Errorf("Detect(%s) = %v, want %v", root, v, want)
		}
		if root == "/sys/fs/cgroup" && hostIsV1() && v != V1 {
			t.Errorf("Detect(%s) = %v on a host with v1 cpuset", root, v)
		}
	}
}

func hostIsV1() bool {
	_, err := os.Stat("/sys/fs/cgroup/cpuset/cpuset.cpus")
	return err == nil
}
