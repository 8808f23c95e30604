package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// countingStore counts the store updates a Writer asks for.
type countingStore struct {
	*MemoryStore
	records, forgets int
}

func (s *countingStore) RecordOriginals(m map[string]string) error {
	s.records++
	return s.MemoryStore.RecordOriginals(m)
}

func (s *countingStore) Forget(keys ...string) error {
	s.forgets++
	return s.MemoryStore.Forget(keys...)
}

func TestApplyBatchesOneStoreUpdate(t *testing.T) {
	f := newFixture(t, V1, true)
	f.mkcg("p/a", "p/b", "p/c", "q")
	store := &countingStore{MemoryStore: NewMemoryStore()}
	w, rec := f.writer(store)
	paused := 0
	w.BetweenBatches = func() { paused++ }
	bs := []Batch{
		{Ops: []Op{{Cgroup: "p/a", Knob: CPUSetCPUs, Value: "1"}, {Cgroup: "p/a", Knob: MemoryMin, Value: "8192"}}},
		{Ops: []Op{{Cgroup: "p/b", Knob: CPUSetCPUs, Value: "2"}}},
		{Ops: []Op{{Cgroup: "q", Knob: MemoryLow, Value: "4096"}}},
	}
	for i, r := range w.ApplyBatches(bs) {
		if r.Err != nil {
			t.Fatalf("batch %d: %v", i, r.Err)
		}
	}
	if store.records != 1 || paused != 2 || rec.count() != 4 {
		t.Fatalf("%d originals updates, %d pauses, %d writes; want 1, 2, 4", store.records, paused, rec.count())
	}
	if got := f.get(CPUSet, "p/b", "cpuset.cpus"); got != "2" {
		t.Errorf("p/b cpuset.cpus = %q", got)
	}
	// Nothing to do: no write, no store update.
	w.ApplyBatches(bs)
	if store.records != 1 || rec.count() != 4 {
		t.Errorf("an idempotent call made %d store updates and %d writes", store.records-1, rec.count()-4)
	}
	// Restores of several batches are forgotten in one update.
	reps := w.ApplyBatches([]Batch{{Restores: []Target{{Cgroup: "p/a", Knob: CPUSetCPUs}, {Cgroup: "p/a", Knob: MemoryMin}}},
		{Restores: []Target{{Cgroup: "p/b", Knob: CPUSetCPUs}, {Cgroup: "p/b", Knob: CPUShares}}}, {Restores: []Target{{Cgroup: "q", Knob: MemoryLow}}}})
	if store.forgets != 1 || len(store.Keys()) != 0 {
		t.Errorf("%d forget updates, originals left %v; want 1 and none", store.forgets, store.Keys())
	}
	if reps[1].Results[1].Outcome != NoOriginal || f.get(CPUSet, "p/b", "cpuset.cpus") != "0-7" {
		t.Errorf("p/b restore: %+v, cpuset.cpus %q", reps[1].Results, f.get(CPUSet, "p/b", "cpuset.cpus"))
	}
}

func TestApplyBatchesFailureStaysInItsBatch(t *testing.T) {
	f := newFixture(t, V1, true)
	f.mkcg("a", "b", "c")
	store := &countingStore{MemoryStore: NewMemoryStore()}
	w, rec := f.writer(store)
	rec.fail = func(path, _ string) error {
		if strings.Contains(path, filepath.Join("cpuset", "b")) {
			return unix.EBUSY
		}
		return nil
	}
	reps := w.ApplyBatches([]Batch{
		{Ops: []Op{{Cgroup: "a", Knob: CPUShares, Value: "512"}}},
		{Ops: []Op{{Cgroup: "b", Knob: CPUSetCPUs, Value: "3"}, {Cgroup: "b", Knob: CPUShares, Value: "512"}}}, // its first write fails
		{Ops: []Op{{Cgroup: "missing", Knob: CPUShares, Value: "512"}}},                                        // fails to resolve
		{Ops: []Op{{Cgroup: "c", Knob: CPUShares, Value: "512"}}},
	})
	if reps[0].Err != nil || reps[3].Err != nil {
		t.Fatalf("healthy batches failed: %v, %v", reps[0].Err, reps[3].Err)
	}
	if reps[1].Err == nil || reps[1].Results[0].Outcome != Failed || reps[1].Results[1].Outcome != NotRun {
		t.Errorf("broken batch: %v %+v", reps[1].Err, reps[1].Results)
	}
	if reps[2].Err == nil || !strings.Contains(reps[2].Err.Error(), `"missing" does not exist`) {
		t.Errorf("missing cgroup: %v", reps[2].Err)
	}
	if f.get(CPU, "a", "cpu.shares") != "512" || f.get(CPU, "c", "cpu.shares") != "512" || f.get(CPU, "b", "cpu.shares") != "1024" {
		t.Error("a failure in one batch changed what the others wrote")
	}
	// The failed batch's originals were recorded with the others, in one update.
	if _, ok := store.Original("cpuset/b/cpuset.cpus"); !ok || store.records != 1 {
		t.Errorf("originals: b recorded %v, %d updates", ok, store.records)
	}
}

func TestApplyBatchesRefusesNestedBatches(t *testing.T) {
	f := newFixture(t, V2, false)
	f.mkcg("p/a", "p/b")
	w, rec := f.writer(NewMemoryStore())
	reps := w.ApplyBatches([]Batch{
		{Ops: []Op{{Cgroup: "p/a", Knob: CPUShares, Value: "512"}}},
		{Ops: []Op{{Cgroup: "p", Knob: CPUShares, Value: "512"}}},
		{Ops: []Op{{Cgroup: "p/b", Knob: CPUShares, Value: "512"}}, Restores: []Target{{Cgroup: "p/b", Knob: MemoryLow}}},
		{Restores: []Target{{Cgroup: "p/b", Knob: MemoryMin}}},
	})
	for i, want := range []string{"contains", "contains", "two batches", "two batches"} {
		if reps[i].Err == nil || !strings.Contains(reps[i].Err.Error(), want) {
			t.Errorf("batch %d: err %v, want %q", i, reps[i].Err, want)
		}
	}
	if rec.count() != 0 {
		t.Errorf("refused batches wrote %v", rec.writes)
	}
}

func TestScopeKeepsContainment(t *testing.T) {
	f := newFixture(t, V1, false)
	f.mkcg("ok")
	outside := t.TempDir()
	h, err := Open(f.root, V1)
	if err != nil {
		t.Fatal(err)
	}
	end := h.Scope()
	if _, err := h.Dir(CPUSet, "ok"); err != nil {
		t.Fatal(err)
	}
	// Under a verified directory, a planted symlink is still resolved.
	if err := os.Symlink(outside, filepath.Join(f.dir(CPUSet, "ok"), "evil")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Dir(CPUSet, "ok/evil"); err == nil || !strings.Contains(err.Error(), "outside the cgroup root") {
		t.Errorf("symlink under a verified directory: %v", err)
	}
	end()
	// Once the scope ends nothing is remembered: a directory replaced by a
	// symlink is caught.
	if err := os.RemoveAll(f.dir(CPUSet, "ok")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, f.dir(CPUSet, "ok")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Dir(CPUSet, "ok"); err == nil {
		t.Error("a directory swapped for a symlink after the scope passed")
	}
}

// Within a scope a cgroup seen to exist is not looked up again by
// ExistsInScope, until the agent removes it; Exists and every question
// outside a scope are answered afresh.
func TestScopeRemembersExistingCgroups(t *testing.T) {
	f := newFixture(t, V1, false)
	f.mkcg("p/c")
	w, _ := f.writer(NewMemoryStore())
	h := w.h
	end := h.Scope()
	if !h.Exists(CPUSet, "p/c") {
		t.Fatal("p/c not found")
	}
	// Gone behind the agent's back: the scope still answers from memory
	// (a reconcile sees one snapshot; the writer reports a cgroup gone).
	if err := os.RemoveAll(f.dir(CPUSet, "p/c")); err != nil {
		t.Fatal(err)
	}
	if !h.ExistsInScope(CPUSet, "p/c") {
		t.Error("within the scope, a cgroup seen is looked up again")
	}
	if h.Exists(CPUSet, "p/c") {
		t.Error("Exists answers from the scope's memory")
	}
	// Removed by the agent: forgotten at once.
	if _, err := w.EnsureCgroup("locus.slice/d"); err != nil {
		t.Fatal(err)
	}
	if !h.Exists(CPUSet, "locus.slice/d") {
		t.Fatal("locus.slice/d not found")
	}
	if err := w.RemoveCgroup("locus.slice/d"); err != nil {
		t.Fatal(err)
	}
	if h.ExistsInScope(CPUSet, "locus.slice/d") {
		t.Error("a cgroup the writer removed still exists for the scope")
	}
	end()
	if h.ExistsInScope(CPUSet, "p/c") {
		t.Error("after the scope, a removed cgroup still exists")
	}
}

// failingStore cannot record originals: nothing may be written then.
type failingStore struct{ *MemoryStore }

func (failingStore) RecordOriginals(map[string]string) error { return errors.New("disk full") }

func TestApplyBatchesWritesNothingWithoutOriginals(t *testing.T) {
	f := newFixture(t, V2, false)
	f.mkcg("a", "b")
	f.set("", "b", "cpu.weight", "39") // already what batch b wants
	w, rec := f.writer(failingStore{NewMemoryStore()})
	reps := w.ApplyBatches([]Batch{{Ops: []Op{{Cgroup: "a", Knob: CPUShares, Value: "1024"}, {Cgroup: "a", Knob: MemoryHigh, Value: "1048576"}}},
		{Ops: []Op{{Cgroup: "b", Knob: CPUShares, Value: "1024"}}}})
	if rec.count() != 0 {
		t.Fatalf("wrote %v without recording originals", rec.writes)
	}
	if reps[0].Err == nil || !strings.Contains(reps[0].Err.Error(), "disk full") || reps[0].Results[1].Outcome != NotRun {
		t.Errorf("batch a: %v %+v", reps[0].Err, reps[0].Results)
	}
	if reps[1].Err != nil || reps[1].Results[0].Outcome != Unchanged {
		t.Errorf("batch b had nothing to write, yet: %v %+v", reps[1].Err, reps[1].Results)
	}
}

// On v1 a cpuset cgroup caught before the runtime filled it (empty
// cpuset.cpus and cpuset.mems) records its parent's values as its
// originals, the parent's own original where one is recorded, so a
// restore gives it what the runtime would have; a file holding a value
// records that value.
func TestEmptyV1CPUSetInheritsItsOriginal(t *testing.T) {
	f := newFixture(t, V1, false)
	f.mkcg("pod", "pod/new", "pod/old")
	f.set(CPUSet, "pod", "cpuset.cpus", "0-3")
	f.set(CPUSet, "pod", "cpuset.mems", "0")
	f.set(CPUSet, "pod/new", "cpuset.cpus", "")
	f.set(CPUSet, "pod/new", "cpuset.mems", "")
	f.set(CPUSet, "pod/old", "cpuset.cpus", "2")
	store := NewMemoryStore()
	if err := store.RecordOriginals(map[string]string{"cpuset/pod/cpuset.cpus": "0-7"}); err != nil {
		t.Fatal(err)
	}
	w, _ := f.writer(store)
	if _, err := w.Apply([]Op{{Cgroup: "pod/new", Knob: CPUSetMems, Value: "0"}, {Cgroup: "pod/new", Knob: CPUSetCPUs, Value: "1"},
		{Cgroup: "pod/old", Knob: CPUSetCPUs, Value: "1"}}); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"cpuset/pod/new/cpuset.cpus": "0-7", "cpuset/pod/new/cpuset.mems": "0",
		"cpuset/pod/old/cpuset.cpus": "2"} {
		if got, ok := store.Original(key); !ok || got != want {
			t.Errorf("original of %s: %q %v, want %q", key, got, ok, want)
		}
	}
}
