package nodeagent

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/locus-project/locus/internal/podresourcestest"
)

// The kubelet is asked List at every reconcile and GetAllocatableResources
// only when its last answer is too old in reconciles or in time, when List
// names a resource it did not offer, or after a failed call.
func TestAllocatableReadOnlyWhenStale(t *testing.T) {
	dir := podresourcestest.TempDir(t)
	srv := podresourcestest.Start(t, dir)
	gpu := podresourcestest.Group("example.com/gpu", []string{"gpu-0"}, 0)
	nic := podresourcestest.Group("example.com/nic", []string{"nic-1"}, 1)
	srv.Set(&v1.ListPodResourcesResponse{PodResources: []*v1.PodResources{podresourcestest.Pod("ns", "a", "main", gpu)}},
		&v1.AllocatableResourcesResponse{Devices: []*v1.ContainerDevices{gpu}})
	clock := time.Unix(1_000_000, 0)
	r := newDeviceReader(podresourcestest.Socket(dir), func() time.Time { return clock })
	reads, allocatable := 0, 0
	read := func(why string, wantAllocatable int) {
		t.Helper()
		if problem := r.read(context.Background()); problem != "" {
			t.Fatalf("%s: %s", why, problem)
		}
		reads++
		allocatable += wantAllocatable
		if got, want := srv.Calls("List"), reads; got != want {
			t.Fatalf("%s: List called %d times, want %d", why, got, want)
		}
		if got := srv.Calls("GetAllocatableResources"); got != allocatable {
			t.Fatalf("%s: GetAllocatableResources called %d times, want %d", why, got, allocatable)
		}
		if st := r.status; st.Allocatable == 0 || len(r.allocatable) == 0 {
			t.Fatalf("%s: the cached answer was not used: status %+v", why, st)
		}
	}

	read("first reconcile", 1)
	for i := 1; i < allocatableEvery; i++ {
		clock = clock.Add(time.Second)
		read("a reconcile within the bounds", 0)
	}
	read("the answer served allocatableEvery reconciles", 1)
	clock = clock.Add(allocatableMaxAge)
	read("the answer is allocatableMaxAge old", 1)
	read("just read", 0)

	srv.Set(&v1.ListPodResourcesResponse{PodResources: []*v1.PodResources{podresourcestest.Pod("ns", "a", "main", gpu),
		podresourcestest.Pod("ns", "b", "main", nic)}},
		&v1.AllocatableResourcesResponse{Devices: []*v1.ContainerDevices{gpu, nic}})
	read("List names a resource the answer did not", 1)
	if r.status.Allocatable != 2 || r.status.Held != 2 {
		t.Fatalf("status %+v: want both devices offered and held", r.status)
	}
	read("both resources known", 0)

	srv.Delay(time.Minute)
	r.client.Timeout = 50 * time.Millisecond
	if problem := r.read(context.Background()); problem == "" {
		t.Fatal("a slow kubelet's read had no problem")
	}
	reads++
	srv.Delay(0)
	read("after a failed call", 1)
}
