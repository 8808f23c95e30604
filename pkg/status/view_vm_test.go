package status

import (
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/view"
)

// A workload that is a libvirt domain reaches the views as a VM, its
// threads' CPUs vCPUs first; a pod's containers do not make it one.
func TestViewSnapshotVMs(t *testing.T) {
	st := Status{Workloads: []WorkloadStatus{
		{Name: "db", Pool: "exclusive", CPUs: "2-3", LibvirtDomain: "db-1",
			ContainerCPUs: map[string]string{"emulator": "0-1", "vcpu1": "3", "vcpu0": "2"}},
		{Name: "web", Pool: "shared", CPUs: "0-1", LibvirtDomain: "web-front"},
		{Name: "ns/pod", Pool: "exclusive", CPUs: "4-5", ContainerCPUs: map[string]string{"app": "4", "side": "5"}},
	}}
	snap := ViewSnapshot(st, fixture.MustBuild(fixture.MemoryOnly))
	want := []*view.VM{
		{Domain: "db-1", Threads: []view.VMThread{{Name: "vcpu0", CPUs: "2"}, {Name: "vcpu1", CPUs: "3"}, {Name: "emulator", CPUs: "0-1"}}},
		{Domain: "web-front"},
		nil,
	}
	for i, w := range snap.Workloads {
		got, exp := w.VM, want[i]
		switch {
		case (got == nil) != (exp == nil):
			t.Errorf("%s: VM %+v, want %+v", w.Name, got, exp)
		case got == nil:
		case got.Domain != exp.Domain || len(got.Threads) != len(exp.Threads):
			t.Errorf("%s: VM %+v, want %+v", w.Name, got, exp)
		default:
			for j := range got.Threads {
				if got.Threads[j] != exp.Threads[j] {
					t.Errorf("%s: thread %d is %+v, want %+v", w.Name, j, got.Threads[j], exp.Threads[j])
				}
			}
		}
	}
}
