package cgroup

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestParseOriginalKey(t *testing.T) {
	for _, tc := range []struct {
		v    Version
		key  string
		ctrl Controller
		cg   string
		knob Knob
		ok   bool
	}{
		{V1, "cpuset/kubepods/pod1/c1/cpuset.cpus", "cpuset", "kubepods/pod1/c1", CPUSetCPUs, true},
		{V2, "kubepods/pod1/c1/cpuset.cpus", "", "kubepods/pod1/c1", CPUSetCPUs, true},
		{V2, "locus.slice/redis/memory.low", "", "locus.slice/redis", MemoryLow, true},
		// v1 keys name their controller; without it, or under another, no knob.
		{V1, "kubepods/pod1/cpuset.cpus", "", "", "", false},
		{V1, "memory/kubepods/pod1/cpuset.cpus", "", "", "", false},
		// No cgroup, a path CheckRel refuses, a file no writable knob has.
		{V2, "cpuset.cpus", "", "", "", false},
		{V2, "a/../../etc/cpuset.cpus", "", "", "", false},
		{V2, "kubepods/cgroup.procs", "", "", "", false},
	} {
		ctrl, cg, knob, ok := ParseOriginalKey(tc.v, tc.key)
		if ctrl != tc.ctrl || cg != tc.cg || knob != tc.knob || ok != tc.ok {
			t.Errorf("v%d %q: %q %q %q %v, want %q %q %q %v", tc.v, tc.key, ctrl, cg, knob, ok, tc.ctrl, tc.cg, tc.knob, tc.ok)
		}
	}
}

// OriginalKey names a file as the writer records its original, for every
// writable knob on both versions, and a path not clean as it cleans it.
func TestOriginalKeyIsTheWritersKey(t *testing.T) {
	for _, v := range []Version{V1, V2} {
		f := newFixture(t, v, false)
		f.mkcg("kubepods.slice/pod1.slice")
		h, err := Open(f.root, v)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range Knobs() {
			spec, _ := Lookup(k)
			pl := spec.Placement(v)
			if pl == nil || spec.ReadOnly {
				continue
			}
			path, err := h.file(pl.Controller, "kubepods.slice/pod1.slice", pl.File)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := OriginalKey(*pl, "kubepods.slice/pod1.slice"), h.key(path); got != want {
				t.Errorf("v%d %s: key %q, want the writer's %q", v, k, got, want)
			}
			if got, want := OriginalKey(*pl, "a//b/"), OriginalKey(*pl, "a/b"); got != want {
				t.Errorf("v%d %s: key of an unclean path %q, want %q", v, k, got, want)
			}
		}
	}
}

// onlyOriginal is a store of no type this package knows: HasOriginal asks
// it through the interface.
type onlyOriginal struct{ OriginalStore }

// HasOriginal answers as Original of OriginalKey does, for every store, for
// keys recorded and not, with and without a controller, and for a cgroup
// path the store spells cleaned.
func TestHasOriginalAsOriginal(t *testing.T) {
	fs, err := OpenFileStore(filepath.Join(t.TempDir(), "originals.json"))
	if err != nil {
		t.Fatal(err)
	}
	mem := NewMemoryStore()
	pls := []Placement{{Controller: CPUSet, File: "cpuset.cpus"}, {File: "memory.low"}}
	rels := []string{"a/b", "a/c", "a", "", "a//b", "../x", strings.Repeat("long/", 80) + "x"}
	recorded := map[string]string{}
	for i, rel := range rels {
		if i%2 == 0 {
			for _, pl := range pls {
				recorded[OriginalKey(pl, rel)] = "v"
			}
		}
	}
	for _, s := range []OriginalStore{fs, mem} {
		if err := s.RecordOriginals(recorded); err != nil {
			t.Fatal(err)
		}
		for _, s := range []OriginalStore{s, onlyOriginal{s}} {
			for _, pl := range pls {
				for _, rel := range rels {
					_, want := s.Original(OriginalKey(pl, rel))
					if got := HasOriginal(s, pl, rel); got != want {
						t.Errorf("%T: HasOriginal(%v, %q) = %v, Original says %v", s, pl, rel, got, want)
					}
				}
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { HasOriginal(mem, pls[0], "a/b") }); n != 0 {
		t.Errorf("HasOriginal allocates %v times a call", n)
	}
}
