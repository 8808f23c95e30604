package execute

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/state"
)

// countingState counts the checkpoint's updates.
type countingState struct {
	state.State
	updates int
}

func (s *countingState) Update(change func(*state.Checkpoint) error) error {
	s.updates++
	return s.State.Update(change)
}

// countingOriginals counts the originals' forgets, the writer's included.
type countingOriginals struct {
	*cgroup.MemoryStore
	forgets int
}

func (o *countingOriginals) Forget(keys ...string) error {
	o.forgets++
	return o.MemoryStore.Forget(keys...)
}

// TestRemoveAllUpdatesTheStoresOnceForAll: pods deleted together are removed
// in one pass: each pod's container files still there get their originals
// back, the originals of the containers gone are forgotten, and every pod
// leaves the checkpoint, with one checkpoint update and one forget of what
// is gone for all of them, not one of each per pod.
func TestRemoveAllUpdatesTheStoresOnceForAll(t *testing.T) {
	root := t.TempDir()
	ctl := map[string]string{"cgroup.controllers": "cpuset cpu memory", "cgroup.subtree_control": "cpuset cpu memory"}
	dirs := map[string]map[string]string{"": ctl, "pods": ctl, "pods/stay": {"cgroup.procs": ""},
		"pods/p0": {"cgroup.procs": ""}, "pods/p0/c": {"cgroup.procs": "", "cpuset.cpus": "2-3"}}
	writeTree(t, root, dirs)
	h, err := cgroup.Open(root, cgroup.V2)
	if err != nil {
		t.Fatal(err)
	}
	// p0's container is still there; p1 … p4 are gone, the kubelet removed
	// them; stay stays.
	orig := &countingOriginals{MemoryStore: cgroup.NewMemoryStore()}
	recorded := map[string]string{"pods/stay/cpuset.cpus": "0-7"}
	removed := map[string]state.Workload{}
	for i := range 5 {
		name := fmt.Sprintf("p%d", i)
		recorded["pods/"+name+"/c/cpuset.cpus"] = "0-7"
		removed[name] = state.Workload{Cgroup: "pods/" + name}
	}
	if err := orig.RecordOriginals(recorded); err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	c := testConfig(t, h, orig, ev)
	c.Pods = true
	if err := c.Store.Update(func(ck *state.Checkpoint) error {
		ck.Workloads["stay"] = state.Workload{Cgroup: "pods/stay"}
		for name, w := range removed {
			ck.Workloads[name] = w
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	st := &countingState{State: c.Store}
	c.Store = st
	e := mustNew(t, c)

	rep, errs := e.RemoveAll(removed, map[string]bool{"pods/stay": true})
	if len(errs) != 0 || len(rep.Errors) != 0 {
		t.Fatalf("errors %v, report %+v", errs, rep)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "pods/p0/c/cpuset.cpus")); string(got) != "0-7" {
		t.Errorf("p0's container cpuset.cpus = %q after removal, want its original 0-7", got)
	}
	if keys := orig.Keys(); !slices.Equal(keys, []string{"pods/stay/cpuset.cpus"}) {
		t.Errorf("originals after removal %q, want stay's alone", keys)
	}
	ck, err := st.Load()
	if err != nil || len(ck.Workloads) != 1 || ck.Workloads["stay"].Cgroup != "pods/stay" {
		t.Errorf("checkpoint after removal: %+v, %v; want stay alone", ck.Workloads, err)
	}
	if st.updates != 1 {
		t.Errorf("%d checkpoint updates for 5 pods removed, want 1", st.updates)
	}
	// One for the original restored (the writer's), one for the four gone.
	if orig.forgets != 2 {
		t.Errorf("%d originals forgets for 5 pods removed, want 2", orig.forgets)
	}
	var gone []string
	for _, e := range *ev {
		if strings.HasPrefix(e, "WorkloadRemoved ") {
			gone = append(gone, strings.Fields(e)[1])
		}
	}
	if want := []string{"p0:", "p1:", "p2:", "p3:", "p4:"}; !slices.Equal(gone, want) {
		t.Errorf("WorkloadRemoved events for %q, want %q", gone, want)
	}
}
