package cgroup

import (
	"path/filepath"
	"testing"
	"time"
)

// TestChildrenFromParent: below a pod marked ChildrenFromParent a
// container's cpuset files take the pod's original, recorded even when the
// container already holds the value written (a runtime that created it
// with Locus's); its other files and the pod's own files keep their current
// text as their original. Covered keeps the containers' cpuset records in
// memory until the next save, and only those.
func TestChildrenFromParent(t *testing.T) {
	for _, v := range []Version{V1, V2} {
		t.Run(v.String(), func(t *testing.T) {
			f := newFixture(t, v, false)
			f.mkcg("pod")
			cpuset, memory := CPUSet, Memory
			if v == V2 {
				cpuset, memory = "", ""
			}
			f.set(cpuset, "pod", "cpuset.cpus", "0-7")
			fs, path := markedStore(t)
			if err := fs.MarkUnmarked(FromDefaults, "pod"); err != nil || fs.CgroupMark("pod/new") != ChildrenFromParent {
				t.Fatalf("MarkUnmarked replaced a mark: %v, %q", err, fs.CgroupMark("pod/new"))
			}
			if m := fs.CgroupMark("pod"); m != NoMark {
				t.Errorf("the marked pod's own mark reads %q, want none", m)
			}
			w, _ := f.writer(fs.Covered(v))
			// The pod first: its containers' original is its original, not the
			// value Locus gave it.
			if _, err := w.Apply([]Op{{Cgroup: "pod", Knob: CPUSetCPUs, Value: "2-3"}}); err != nil {
				t.Fatal(err)
			}
			// Then two containers: one caught before the runtime filled its
			// cpuset, one the runtime created with Locus's value (NRI).
			f.mkcg("pod/new", "pod/nri")
			f.set(cpuset, "pod/nri", "cpuset.cpus", "2-3")
			lim := "memory.limit_in_bytes"
			if v == V2 {
				lim = "memory.max"
			}
			f.set(memory, "pod/new", lim, "1048576")
			if _, err := w.Apply([]Op{{Cgroup: "pod/new", Knob: CPUSetCPUs, Value: "2-3"}, {Cgroup: "pod/nri", Knob: CPUSetCPUs, Value: "2-3"}}); err != nil {
				t.Fatal(err)
			}
			key := func(rel, file string) string {
				c := cpuset
				if file == lim {
					c = memory
				}
				return w.h.key(f.dir(c, rel) + "/" + file)
			}
			for _, cg := range []string{"pod/new", "pod/nri"} {
				if got, ok := fs.Original(key(cg, "cpuset.cpus")); !ok || got != "0-7" {
					t.Errorf("original of %s's cpuset.cpus: %q %v, want the pod's 0-7", cg, got, ok)
				}
			}
			// Not on disk yet: a crash now has the mark give them back.
			again, _ := OpenFileStore(path)
			if _, ok := again.Original(key("pod/new", "cpuset.cpus")); ok {
				t.Error("a covered original was saved before the write: the early write waits for the disk")
			}
			w2, _ := f.writer(again)
			if _, err := w2.Apply([]Op{{Cgroup: "pod/nri", Knob: CPUSetCPUs, Value: "2-3"}}); err != nil {
				t.Fatal(err)
			}
			if got, _ := again.Original(key("pod/nri", "cpuset.cpus")); got != "0-7" {
				t.Errorf("after a crash the unsaved original came back as %q, want the pod's 0-7", got)
			}
			// The pod's own file and a container's memory limit are not covered:
			// their current text, durable at once.
			if _, err := w.Apply([]Op{{Cgroup: "pod/new", Knob: MemoryLimit, Value: "2097152"}}); err != nil {
				t.Fatal(err)
			}
			again, _ = OpenFileStore(path)
			for k, want := range map[string]string{key("pod", "cpuset.cpus"): "0-7", key("pod/new", lim): "1048576",
				key("pod/new", "cpuset.cpus"): "0-7"} { // saved with them
				if got, ok := again.Original(k); !ok || got != want {
					t.Errorf("on disk %s: %q %v, want %q", k, got, ok, want)
				}
			}
			if _, err := w.Apply([]Op{{Cgroup: "pod/new", Knob: CPUSetMems, Value: "0"}}); err != nil {
				t.Fatal(err)
			}
			if err := fs.Flush(); err != nil {
				t.Fatal(err)
			}
			if again, _ = OpenFileStore(path); !hasKey(again, key("pod/new", "cpuset.mems")) {
				t.Error("Flush did not save the covered original")
			}
			// Undoing Locus gives every container the pod's CPUs back.
			if _, err := w.Restore([]Target{{Cgroup: "pod", Knob: CPUSetCPUs}, {Cgroup: "pod/new", Knob: CPUSetCPUs}, {Cgroup: "pod/nri", Knob: CPUSetCPUs}}); err != nil {
				t.Fatal(err)
			}
			for _, cg := range []string{"pod", "pod/new", "pod/nri"} {
				if got := f.get(cpuset, cg, "cpuset.cpus"); got != "0-7" {
					t.Errorf("%s restored to %q, want 0-7", cg, got)
				}
			}
		})
	}
}

func hasKey(s *FileStore, key string) bool {
	_, ok := s.Original(key)
	return ok
}

// A record Covered keeps in memory, and a read, do not wait for a save in
// progress (an fsync takes seconds on a loaded node); the record is not lost
// by that save's commit, stays unsaved, and reaches the disk with the next
// flush. Each of update, a mark and a flush is such a save.
func TestCoveredDoesNotWaitForASave(t *testing.T) {
	for name, save := range map[string]func(fs *FileStore) error{
		"update": func(fs *FileStore) error {
			return fs.RecordOriginals(map[string]string{"cpuset/other/cpuset.cpus": "0-7"})
		},
		"mark":  func(fs *FileStore) error { return fs.MarkUnmarked(ChildrenFromParent, "other") },
		"flush": func(fs *FileStore) error { return fs.Flush() },
	} {
		t.Run(name, func(t *testing.T) {
			fs, path := markedStore(t)
			c := fs.Covered(V1)
			if err := c.RecordOriginals(map[string]string{"cpuset/pod/a/cpuset.cpus": "0-7"}); err != nil {
				t.Fatal(err) // something for the flush to save
			}
			writing, release := make(chan struct{}), make(chan struct{})
			fs.beforeWrite = func() { close(writing); <-release }
			done := make(chan error)
			go func() { done <- save(fs) }()
			<-writing
			recorded := make(chan error)
			go func() { recorded <- c.RecordOriginals(map[string]string{"cpuset/pod/b/cpuset.cpus": "0-7"}) }()
			select {
			case err := <-recorded:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("a covered record waited for the save in progress")
			}
			if v, ok := fs.Original("cpuset/pod/b/cpuset.cpus"); !ok || v != "0-7" {
				t.Fatalf("the record made during the save reads %q %v", v, ok)
			}
			fs.beforeWrite = nil
			close(release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if v, ok := fs.Original("cpuset/pod/b/cpuset.cpus"); !ok || v != "0-7" {
				t.Fatalf("the save's commit lost the record made during it: %q %v", v, ok)
			}
			if err := fs.Flush(); err != nil {
				t.Fatal(err)
			}
			again, err := OpenFileStore(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"cpuset/pod/a/cpuset.cpus", "cpuset/pod/b/cpuset.cpus"} {
				if _, ok := again.Original(k); !ok {
					t.Errorf("%s is not on disk after the flush (keys %v)", k, again.Keys())
				}
			}
		})
	}
}

// markedStore opens an originals file in a new directory with the cgroup
// "pod" marked ChildrenFromParent.
func markedStore(t *testing.T) (*FileStore, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "originals.json")
	fs, err := OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.MarkUnmarked(ChildrenFromParent, "pod"); err != nil {
		t.Fatal(err)
	}
	return fs, path
}
