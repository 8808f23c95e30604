package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

var fullBatch = []Op{
	{Cgroup: "pod/c", Knob: CPUSetCPUs, Value: "2,3"},
	{Cgroup: "pod/c", Knob: CPUSetMems, Value: "0"},
	{Cgroup: "pod/c", Knob: MemoryMin, Value: "104857600"},
	{Cgroup: "pod/c", Knob: MemoryLow, Value: "52428800"},
	{Cgroup: "pod/c", Knob: MemoryHigh, Value: "83886080"},
	{Cgroup: "pod/c", Knob: MemoryLimit, Value: "104857600"},
	{Cgroup: "pod/c", Knob: MemorySoftLimit, Value: "52428800"},
	{Cgroup: "pod/c", Knob: MemoryWmarkRatio, Value: "95"},
	{Cgroup: "pod/c", Knob: MemoryWmarkMinAdj, Value: "-25"},
	{Cgroup: "pod/c", Knob: CPUQuota, Value: "200000"},
	{Cgroup: "pod/c", Knob: CPUShares, Value: "2048"},
}

func TestApplyIdempotentAndUnsupported(t *testing.T) {
	for _, tc := range []struct {
		v           Version
		anolis      bool
		unsupported string // knobs reported unsupported, in batch order
		files       map[string]string
	}{
		{V1, true, "", map[string]string{"cpuset/pod/c/cpuset.cpus": "2-3", "memory/pod/c/memory.min": "104857600",
			"memory/pod/c/memory.soft_limit_in_bytes": "52428800", "memory/pod/c/memory.wmark_min_adj": "-25", "cpu/pod/c/cpu.shares": "2048"}},
		{V1, false, "memory.min memory.low memory.high memory.wmark_ratio memory.wmark_min_adj",
			map[string]string{"cpuset/pod/c/cpuset.mems": "0", "memory/pod/c/memory.limit_in_bytes": "104857600", "cpu/pod/c/cpu.cfs_quota_us": "200000"}},
		{V2, true, "memory.soft_limit_in_bytes", map[string]string{"pod/c/memory.max": "104857600", "pod/c/cpu.max": "200000",
			"pod/c/cpu.weight": "79", "pod/c/memory.wmark_ratio": "95"}},
		{V2, false, "memory.soft_limit_in_bytes memory.wmark_ratio memory.wmark_min_adj",
			map[string]string{"pod/c/memory.high": "83886080", "pod/c/memory.low": "52428800", "pod/c/cpuset.cpus": "2-3"}},
	} {
		t.Run(fmt.Sprintf("%v-anolis=%v", tc.v, tc.anolis), func(t *testing.T) {
			f := newFixture(t, tc.v, tc.anolis)
			f.mkcg("pod/c")
			if tc.v == V2 { // v2 fixture cgroups inherit nothing; give the pod CPUs
				f.set("", "pod", "cpuset.cpus", "0-7")
			}
			w, rec := f.writer(NewMemoryStore())
			rep, err := w.Apply(fullBatch)
			if err != nil {
				t.Fatal(err)
			}
			var unsup []string
			for _, r := range rep.Results {
				switch r.Outcome {
				case Unsupported:
					unsup = append(unsup, string(r.Knob))
					if r.Reason == "" {
						t.Errorf("%s: unsupported without a reason", r.Knob)
					}
				case Written:
				default:
					t.Errorf("%s: first apply outcome %s", r.Knob, r.Outcome)
				}
			}
			if got := strings.Join(unsup, " "); got != tc.unsupported {
				t.Errorf("unsupported = %q, want %q", got, tc.unsupported)
			}
			for rel, want := range tc.files {
				if got := f.get("", "", rel); got != want {
					t.Errorf("%s = %q, want %q", rel, got, want)
				}
			}
			if len(rep.Writes) != rec.count() {
				t.Errorf("report lists %d writes, %d happened", len(rep.Writes), rec.count())
			}
			before := rec.count()
			rep, err = w.Apply(fullBatch)
			if err != nil {
				t.Fatal(err)
			}
			if rec.count() != before || len(rep.Writes) != 0 {
				t.Fatalf("second apply wrote: %v", rec.writes[before:])
			}
			for _, r := range rep.Results {
				if r.Outcome != Unchanged && r.Outcome != Unsupported {
					t.Errorf("%s: second apply outcome %s", r.Knob, r.Outcome)
				}
			}
		})
	}
}

func TestUnsupportedReportedOnce(t *testing.T) {
	f := newFixture(t, V1, false)
	f.mkcg("a", "b")
	w, _ := f.writer(NewMemoryStore())
	var tr UnsupportedTracker
	var said []string
	for _, rel := range []string{"a", "b", "a"} {
		rep, err := w.Apply([]Op{{Cgroup: rel, Knob: MemoryHigh, Value: "1048576"}, {Cgroup: rel, Knob: MemoryWmarkRatio, Value: "95"}, {Cgroup: rel, Knob: MemoryLimit, Value: "2097152"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range tr.Fresh(rep.Results) {
			said = append(said, string(r.Knob))
		}
	}
	if got := strings.Join(said, " "); got != "memory.high memory.wmark_ratio" {
		t.Fatalf("reported %q", got)
	}
}

func writePaths(ws []FileWrite, root string) string {
	var out []string
	for _, w := range ws {
		rel, _ := filepath.Rel(root, w.Path)
		out = append(out, rel+"="+w.Value)
	}
	return strings.Join(out, " ")
}

func TestApplyOrdersCpusets(t *testing.T) {
	f := newFixture(t, V1, false)
	f.mkcg("p/c")
	f.set(CPUSet, "p", "cpuset.cpus", "0-3")
	f.set(CPUSet, "p/c", "cpuset.cpus", "2-3")
	w, rec := f.writer(NewMemoryStore())
	steps := []struct {
		ops  []Op
		want string
	}{
		{[]Op{{Cgroup: "p/c", Knob: CPUSetCPUs, Value: "0"}, {Cgroup: "p", Knob: CPUSetCPUs, Value: "0-1"}},
			"cpuset/p/c/cpuset.cpus=0 cpuset/p/cpuset.cpus=0-1"},
		{[]Op{{Cgroup: "p/c", Knob: CPUSetCPUs, Value: "4-5"}, {Cgroup: "p", Knob: CPUSetCPUs, Value: "4-7"}},
			"cpuset/p/cpuset.cpus=0-1,4-7 cpuset/p/c/cpuset.cpus=4-5 cpuset/p/cpuset.cpus=4-7"},
	}
	for _, s := range steps {
		n := rec.count()
		if _, err := w.Apply(s.ops); err != nil {
			t.Fatal(err)
		}
		if got := writePaths(rec.writes[n:], f.root); got != s.want {
			t.Errorf("writes %q, want %q", got, s.want)
		}
	}
	// A sibling the batch does not touch still holds 4: narrowing the parent
	// away from it must be refused before anything is written.
	f.mkcg("p/other")
	f.set(CPUSet, "p/other", "cpuset.cpus", "4")
	n := rec.count()
	_, err := w.Apply([]Op{{Cgroup: "p", Knob: CPUSetCPUs, Value: "5-7"}, {Cgroup: "p/c", Knob: CPUSetCPUs, Value: "5"}})
	if err == nil || !strings.Contains(err.Error(), `"p/other"`) {
		t.Fatalf("err = %v, want refusal naming p/other", err)
	}
	if rec.count() != n {
		t.Fatal("a refused batch wrote")
	}
}

// checkingStore fails the test if an original is recorded after its file
// changed; the Writer's hook checks the converse.
type checkingStore struct {
	*MemoryStore
	t    *testing.T
	root string
}

func (s checkingStore) RecordOriginals(m map[string]string) error {
	for k, v := range m {
		if raw, _ := os.ReadFile(filepath.Join(s.root, k)); strings.TrimSpace(string(raw)) != v {
			got := strings.TrimSpace(string(raw))
			s.t.Errorf("original of %s recorded as %q after the file became %q", k, v, got)
		}
	}
	return s.MemoryStore.RecordOriginals(m)
}

func TestOriginalsBeforeWriteAndRestore(t *testing.T) {
	f := newFixture(t, V1, true)
	f.mkcg("p/c")
	f.set(CPUSet, "p", "cpuset.cpus", "0-3")
	f.set(CPUSet, "p/c", "cpuset.cpus", "2-3")
	f.set(Memory, "p/c", "memory.min", "4096")
	store := checkingStore{NewMemoryStore(), t, f.root}
	w, rec := f.writer(store)
	rec.fail = func(path, _ string) error {
		if _, ok := store.Original(w.h.key(path)); !ok {
			t.Errorf("write to %s before its original was recorded", path)
		}
		return nil
	}
	batch := []Op{{Cgroup: "p", Knob: CPUSetCPUs, Value: "0-1"}, {Cgroup: "p/c", Knob: CPUSetCPUs, Value: "1"}, {Cgroup: "p/c", Knob: MemoryMin, Value: "8192"}, {Cgroup: "p/c", Knob: CPUShares, Value: "1024"}}
	if _, err := w.Apply(batch); err != nil {
		t.Fatal(err)
	}
	// A second, different apply keeps the first originals.
	if _, err := w.Apply([]Op{{Cgroup: "p/c", Knob: MemoryMin, Value: "12288"}}); err != nil {
		t.Fatal(err)
	}
	if v, _ := store.Original("memory/p/c/memory.min"); v != "4096" {
		t.Fatalf("original memory.min = %q, want 4096", v)
	}
	if _, ok := store.Original("cpu/p/c/cpu.shares"); ok {
		t.Error("an unchanged file got an original recorded")
	}
	targets := []Target{{Cgroup: "p/c", Knob: CPUSetCPUs}, {Cgroup: "p", Knob: CPUSetCPUs}, {Cgroup: "p/c", Knob: MemoryMin}, {Cgroup: "p/c", Knob: CPUShares}}
	n := rec.count()
	rep, err := w.Restore(targets)
	if err != nil {
		t.Fatal(err)
	}
	if got := writePaths(rec.writes[n:], f.root); got != "cpuset/p/cpuset.cpus=0-3 cpuset/p/c/cpuset.cpus=2-3 memory/p/c/memory.min=4096" {
		t.Errorf("restore writes %q: parent must widen before the child", got)
	}
	if rep.Results[3].Outcome != NoOriginal {
		t.Errorf("cpu.shares restore outcome %s, want no-original", rep.Results[3].Outcome)
	}
	if len(store.Keys()) != 0 {
		t.Errorf("restored originals not forgotten: %v", store.Keys())
	}
}

func TestDryRun(t *testing.T) {
	f := newFixture(t, V1, true)
	f.mkcg("p/c")
	store := NewMemoryStore()
	w, rec := f.writer(store)
	w.DryRun = true
	batch := []Op{{Cgroup: "p", Knob: CPUSetCPUs, Value: "4-7"}, {Cgroup: "p/c", Knob: CPUSetCPUs, Value: "6"}, {Cgroup: "p/c", Knob: MemoryLimit, Value: "max"}, {Cgroup: "p/c", Knob: MemoryHigh, Value: "1048576"}}
	plan, err := w.Apply(batch)
	if err != nil {
		t.Fatal(err)
	}
	if rec.count() != 0 || len(store.Keys()) != 0 {
		t.Fatal("dry run touched files or the store")
	}
	if f.get(CPUSet, "p", "cpuset.cpus") != "0-7" {
		t.Fatal("dry run changed a file")
	}
	if plan.Results[0].Outcome != Planned || plan.Results[2].Outcome != Unchanged {
		t.Errorf("outcomes %v", plan.Results)
	}
	w.DryRun = false
	done, err := w.Apply(batch)
	if err != nil {
		t.Fatal(err)
	}
	if writePaths(plan.Writes, f.root) != writePaths(done.Writes, f.root) || len(done.Writes) != 3 {
		t.Errorf("planned %v, did %v", plan.Writes, done.Writes)
	}
}

func TestApplyErrors(t *testing.T) {
	f := newFixture(t, V1, true)
	f.mkcg("a", "b")
	w, rec := f.writer(NewMemoryStore())
	for _, tc := range []struct {
		ops  []Op
		want string
	}{
		{[]Op{{Cgroup: "a", Knob: CPUSetCPUs, Value: "x"}}, `cgroup "a": cpuset.cpus: value "x"`},
		{[]Op{{Cgroup: "a", Knob: MemoryWmarkMinAdj, Value: "60"}}, "memory.wmark_min_adj"},
		{[]Op{{Cgroup: "a", Knob: "memory.swappiness", Value: "0"}}, "unknown cgroup knob"},
		{[]Op{{Cgroup: "a", Knob: MemoryWmarkHigh, Value: "1"}}, "read-only"},
		{[]Op{{Cgroup: "", Knob: CPUShares, Value: "2"}}, "root cgroup"},
		{[]Op{{Cgroup: "a", Knob: CPUShares, Value: "2"}, {Cgroup: "a", Knob: CPUShares, Value: "4"}}, "twice"},
		{[]Op{{Cgroup: "nope", Knob: CPUShares, Value: "2"}}, `cgroup "nope" does not exist`},
	} {
		_, err := w.Apply(tc.ops)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.ops, err, tc.want)
		}
	}
	// An upstream file missing is an error naming it, not "unsupported".
	if err := removeFile(f.dir(Memory, "a"), "memory.limit_in_bytes"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Apply([]Op{{Cgroup: "a", Knob: MemoryLimit, Value: "max"}}); err == nil || !strings.Contains(err.Error(), "memory.limit_in_bytes is missing") {
		t.Errorf("missing upstream file: %v", err)
	}
	// The kernel refusing a write: the error names file, value and errno;
	// the batch stops and later ops are reported as not run.
	rec.fail = func(path, _ string) error {
		if strings.HasSuffix(path, "cpu.shares") {
			return unix.EBUSY
		}
		return nil
	}
	rep, err := w.Apply([]Op{{Cgroup: "b", Knob: CPUShares, Value: "512"}, {Cgroup: "b", Knob: CPUQuota, Value: "50000"}})
	var we *WriteError
	if !errors.As(err, &we) || !errors.Is(err, unix.EBUSY) || we.Value != "512" ||
		!strings.Contains(err.Error(), filepath.Join("cpu", "b", "cpu.shares")) || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("err = %v", err)
	}
	if rep.Results[0].Outcome != Failed || rep.Results[1].Outcome != NotRun {
		t.Errorf("outcomes %s %s", rep.Results[0].Outcome, rep.Results[1].Outcome)
	}
	if f.get(CPU, "b", "cpu.cfs_quota_us") != "-1" {
		t.Error("an op after the failed write ran")
	}
}

// On v2 (a lenient plan) the ancestors of a cpuset target are read only when
// one of them is a target too: a container's write alone does not read its
// pod's file. The pod's file is made unreadable to show it.
func TestLenientPlanReadsAncestorsOfNestedTargetsOnly(t *testing.T) {
	f := newFixture(t, V2, false)
	f.mkcg("p/c", "q/c")
	f.set("", "p/c", "cpuset.cpus", "2-3")
	f.set("", "q", "cpuset.cpus", "0-3")
	f.set("", "q/c", "cpuset.cpus", "2-3")
	podFile := filepath.Join(f.root, "p", "cpuset.cpus")
	if err := os.Remove(podFile); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(podFile, 0o755); err != nil { // reading it fails
		t.Fatal(err)
	}
	w, rec := f.writer(NewMemoryStore())
	if _, err := w.Apply([]Op{{Cgroup: "p/c", Knob: CPUSetCPUs, Value: "4-5"}}); err != nil {
		t.Fatalf("a container's cpuset alone: %v (its pod's file was read)", err)
	}
	// With the pod a target too, the plan still widens the pod first.
	n := rec.count()
	if _, err := w.Apply([]Op{{Cgroup: "q/c", Knob: CPUSetCPUs, Value: "4-5"}, {Cgroup: "q", Knob: CPUSetCPUs, Value: "4-7"}}); err != nil {
		t.Fatal(err)
	}
	if got, want := writePaths(rec.writes[n:], f.root), "q/cpuset.cpus=0-7 q/c/cpuset.cpus=4-5 q/cpuset.cpus=4-7"; got != want {
		t.Errorf("pod and container: writes %q, want %q", got, want)
	}
}
