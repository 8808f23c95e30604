package cgroup

import (
	"os"
	"path/filepath"
	"testing"
)

// bothResolvers runs f with openat2 and with the component walk that
// replaces it on kernels without openat2.
func bothResolvers(t *testing.T, f func(t *testing.T)) {
	for _, withOpenat2 := range []bool{true, false} {
		name := "openat2"
		if !withOpenat2 {
			name = "walk"
		}
		t.Run(name, func(t *testing.T) {
			useOpenat2.Store(withOpenat2)
			defer useOpenat2.Store(true)
			f(t)
		})
	}
}

// swapForSymlink replaces cgroup directory rel by a symlink to outside, as
// an attacker racing the writer would, and keeps the directory aside.
func swapForSymlink(t *testing.T, f *fixture, rel, outside string) {
	dir := f.dir(CPUSet, rel)
	if err := os.Rename(dir, dir+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, dir); err != nil {
		t.Fatal(err)
	}
}

// TestDirectorySwappedForSymlinkAfterCheck swaps a cgroup's parent directory
// for a symlink out of the root between the writer's containment check and
// its write: the write must be refused and nothing outside may change.
func TestDirectorySwappedForSymlinkAfterCheck(t *testing.T) {
	for _, v := range []Version{V1, V2} {
		t.Run(v.String(), func(t *testing.T) {
			bothResolvers(t, func(t *testing.T) {
				f := newFixture(t, v, false)
				f.mkcg("pod/c")
				outside := t.TempDir()
				if err := os.MkdirAll(filepath.Join(outside, "c"), 0o755); err != nil {
					t.Fatal(err)
				}
				victim := filepath.Join(outside, "c", "cpuset.cpus")
				os.WriteFile(victim, []byte("0-7\n"), 0o644)

				w, _ := f.writer(NewMemoryStore())
				checked := w.write
				swapped := false
				w.write = func(path, value string) error {
					if !swapped { // after every check, before the first write
						swapForSymlink(t, f, "pod", outside)
						swapped = true
					}
					return checked(path, value)
				}
				if _, err := w.Apply([]Op{{Cgroup: "pod/c", Knob: CPUSetCPUs, Value: "1"}}); err == nil {
					t.Error("the write through a swapped directory succeeded")
				}
				if b, _ := os.ReadFile(victim); string(b) != "0-7\n" {
					t.Errorf("file outside the root changed to %q", b)
				}
				// mkdir and rmdir through the swapped directory are refused too.
				newDir := filepath.Join(f.dir(CPUSet, "pod"), "new")
				if err := w.h.mkdirCgroup(newDir); err == nil {
					t.Error("mkdir through a swapped directory succeeded")
				}
				if err := w.h.rmdirCgroup(filepath.Join(f.dir(CPUSet, "pod"), "c")); err == nil {
					t.Error("rmdir through a swapped directory succeeded")
				}
				if ents, _ := os.ReadDir(outside); len(ents) != 1 {
					t.Errorf("something was created or removed outside the root: %v", ents)
				}
				if _, err := os.Stat(filepath.Join(outside, "c")); err != nil {
					t.Errorf("a directory outside the root was removed: %v", err)
				}
			})
		})
	}
}

// TestV1HierarchySymlink keeps working with a v1 hierarchy reached through a
// symlink to its sibling, as hosts mount cpu and cpuacct together.
func TestV1HierarchySymlink(t *testing.T) {
	bothResolvers(t, func(t *testing.T) {
		f := newFixture(t, V1, false)
		cpu := filepath.Join(f.root, "cpu")
		if err := os.Rename(cpu, cpu+",cpuacct"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("cpu,cpuacct", cpu); err != nil {
			t.Fatal(err)
		}
		f.mkcg("pod")
		w, _ := f.writer(NewMemoryStore())
		if _, err := w.Apply([]Op{{Cgroup: "pod", Knob: CPUShares, Value: "512"}}); err != nil {
			t.Fatalf("write through the cpu -> cpu,cpuacct link: %v", err)
		}
		if got := f.get(CPU, "pod", "cpu.shares"); got != "512" {
			t.Errorf("cpu.shares = %q, want 512", got)
		}
	})
}

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	return len(es)
}

// Within a scope the opens beneath the root share one descriptor of it,
// closed when the outermost scope ends; outside a scope none is kept.
func TestScopeSharesTheRootDescriptor(t *testing.T) {
	f := newFixture(t, V2, false)
	f.mkcg("a", "b")
	h, err := Open(f.root, V2)
	if err != nil {
		t.Fatal(err)
	}
	read := func() {
		t.Helper()
		for _, rel := range []string{"a", "b"} {
			if _, err := h.ReadKnob(rel, CPUSetCPUs); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := openFDs(t)
	read()
	if n := openFDs(t); n != before {
		t.Errorf("outside a scope: %d descriptors open after reading, want %d", n, before)
	}
	end := h.Scope()
	inner := h.Scope()
	read()
	if n := openFDs(t); n != before+1 {
		t.Errorf("in a scope: %d descriptors open after reading, want %d (the root's, kept)", n, before+1)
	}
	inner()
	read()
	if n := openFDs(t); n != before+1 {
		t.Errorf("an inner scope ended: %d descriptors open, want %d", n, before+1)
	}
	end()
	if n := openFDs(t); n != before {
		t.Errorf("the scope ended: %d descriptors open, want %d (the root's closed)", n, before)
	}
	end = h.Scope() // a new scope opens the root again
	read()
	end()
	if n := openFDs(t); n != before {
		t.Errorf("a second scope ended: %d descriptors open, want %d", n, before)
	}
}

// Within a scope a name absent from a directory inside the root is inside
// too, and not taken to exist; one absent beneath a symlink out of the root
// is still refused.
func TestScopeAbsentNames(t *testing.T) {
	f := newFixture(t, V2, false)
	f.mkcg("a")
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(f.root, "evil")); err != nil {
		t.Fatal(err)
	}
	h, err := Open(f.root, V2)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Scope()()
	for range 2 { // the second time with a's directory verified
		if _, err := h.Dir("", "a/missing"); err != nil {
			t.Errorf("absent name in a cgroup: %v", err)
		}
		if h.Exists("", "a/missing") || h.ExistsInScope("", "a/missing") {
			t.Error("absent name in a cgroup taken to exist")
		}
		if _, err := h.Dir("", "evil/missing"); err == nil {
			t.Error("absent name beneath a symlink out of the root: accepted")
		}
	}
	if err := os.Mkdir(filepath.Join(f.root, "a", "missing"), 0o755); err != nil {
		t.Fatal(err)
	}
	if !h.ExistsInScope("", "a/missing") {
		t.Error("a cgroup created after it was found absent: not seen in the same scope")
	}
}

// Within a scope DirID answers a cgroup seen by its name, until the
// directory is seen made anew (Exists looks again) or removed by the writer.
func TestScopeDirIDFollowsARecreatedDirectory(t *testing.T) {
	f := newFixture(t, V2, false)
	f.mkcg("a")
	h, err := Open(f.root, V2)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Scope()()
	first, ok := h.DirID("", "a")
	if !ok {
		t.Fatal("a: no directory")
	}
	dir := filepath.Join(f.root, "a")
	if err := os.Rename(dir, dir+".old"); err != nil { // keeps the inode from coming back
		t.Fatal(err)
	}
	f.mkcg("a")
	if again, _ := h.DirID("", "a"); again != first {
		t.Fatalf("within the scope, before a look: %v, want the one seen %v", again, first)
	}
	if !h.Exists("", "a") {
		t.Fatal("a made anew: not found")
	}
	if now, _ := h.DirID("", "a"); now == first {
		t.Error("a made anew and looked at: DirID still gives the old directory")
	}
}
