package nodeagent

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/locus-project/locus/pkg/kube/podcgroup"
	"github.com/locus-project/locus/pkg/kube/podplan"
	"github.com/locus-project/locus/pkg/source"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// countingSink accepts every event and keeps none.
type countingSink struct{ n atomic.Int64 }

func (s *countingSink) Create(e *corev1.Event) (*corev1.Event, error) { s.n.Add(1); return e, nil }
func (s *countingSink) Update(e *corev1.Event) (*corev1.Event, error) { s.n.Add(1); return e, nil }
func (s *countingSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) {
	s.n.Add(1)
	return e, nil
}

func churnPod(i int) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("wave%d", i/50), Name: fmt.Sprintf("p%02d", i%50),
		UID: types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))}}
}

func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// The events of pods that come and go leave nothing behind that grows
// with their number: the recorder's caches of past events are bounded by
// eventCacheSize, not by client-go's cluster-wide default. Memory is
// measured after 2 000 pods' events and again after 10 000 more: with the
// caches full at the first mark, the second adds nothing (client-go's
// default would add some 2 000 entries to each of three caches, 3 MiB).
func TestEventPosterForgetsDepartedPods(t *testing.T) {
	sink := &countingSink{}
	p := newEventPoster(sink, "node", false)
	defer p.stop()
	posted := 0
	post := func(n int) {
		// In chunks the recorder's queue (1 000) holds, each drained before
		// the next: a full queue drops events.
		for n > 0 {
			chunk := min(n, 500)
			for range chunk {
				pod := churnPod(posted)
				p.onPod(pod, corev1.EventTypeNormal, "WorkloadRemoved", "no longer managed; cgroup "+string(pod.UID)+" restored")
				posted++
			}
			n -= chunk
			deadline := time.Now().Add(time.Minute)
			for sink.n.Load() < int64(posted) {
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d events reached the sink", sink.n.Load(), posted)
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	post(2000)
	before := heapAlloc()
	post(10000)
	grew := heapAlloc() - before
	t.Logf("heap after 2 000 pods' events %d KiB, +%d KiB after 10 000 more", before>>10, grew>>10)
	if grew > 1<<20 {
		t.Errorf("the recorder kept %d KiB more for 10 000 departed pods: its caches grow with the pods", grew>>10)
	}
}

// sourceSizes are the sizes of what a Source keeps per pod.
func sourceSizes(s *Source) (bad, memReq, lagging, refs int) {
	s.events.mu.Lock()
	defer s.events.mu.Unlock()
	return len(s.badPods), len(s.memReq), len(s.lagging.since), len(s.events.refs)
}

// A Source keeps nothing of the pods that left but their event references,
// and those only for forgetRefsAfter: pods with a bad UID, pods whose
// container cgroup is missing, pods being deleted, waves of them, leave
// its maps as they found them.
func TestSourceForgetsDepartedPods(t *testing.T) {
	s, err := NewSource(SourceOptions{NodeName: "n", Quiet: true, CgroupDriver: podcgroup.Cgroupfs})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(1_700_000_000, 0)
	s.now = func() time.Time { return clock }
	s.events.now = s.now
	cgroups := map[string]bool{"kubepods": true}
	env := source.Env{Topology: fixture.MustBuild(fixture.Small4), Exists: func(rel string) bool { return cgroups[rel] }}
	store := s.pods.GetStore()
	// snap checks the workloads and ContainerCgroupNotFound problems.
	snap := func(what string, want, missing int) {
		t.Helper()
		ws := s.Snapshot(env).Workloads
		n := 0
		for _, w := range ws {
			for _, p := range w.Problems {
				if p.Reason == podplan.ReasonContainerCgroupNotFound {
					n++
				}
			}
		}
		if len(ws) != want || n != missing {
			t.Fatalf("%s: %d workloads, %d missing container cgroups; want %d, %d", what, len(ws), n, want, missing)
		}
	}
	const perWave = 20
	for wave := range 20 {
		var pods []*corev1.Pod
		for i := range perWave {
			p := churnPod(wave*perWave + i)
			p.Spec.NodeName = "n"
			p.Status = corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBestEffort,
				ContainerStatuses: []corev1.ContainerStatus{{Name: "c", ContainerID: fmt.Sprintf("containerd://%064x", wave*perWave+i),
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
			podCg, err := podcgroup.PodCgroup(podcgroup.Cgroupfs, string(p.Status.QOSClass), string(p.UID))
			if err != nil {
				t.Fatal(err)
			}
			cgroups[podCg] = true
			if i%4 != 0 { // every fourth container's cgroup is missing: ContainerCgroupNotFound
				cgroups[podCg+"/"+fmt.Sprintf("%064x", wave*perWave+i)] = true
			}
			if i == 1 {
				p.UID = "not-a-uid" // PodNotManaged
			}
			pods = append(pods, p)
			if err := store.Add(p); err != nil {
				t.Fatal(err)
			}
		}
		snap("up", perWave-1, 0) // a missing cgroup is no problem at first
		clock = clock.Add(containerGrace + time.Second)
		snap("problems reported", perWave-1, perWave/4)
		if bad, memReq, lagging, _ := sourceSizes(s); bad != 1 || memReq != perWave-1 || lagging != perWave/4 {
			t.Fatalf("wave %d running: %d bad pods, %d memory requests, %d lagging containers", wave, bad, memReq, lagging)
		}
		now := metav1.NewTime(clock)
		for _, p := range pods {
			p.DeletionTimestamp = &now
			if err := store.Update(p); err != nil {
				t.Fatal(err)
			}
		}
		for cg := range cgroups {
			if strings.Count(cg, "/") == 3 {
				delete(cgroups, cg) // the containers' cgroups
			}
		}
		snap("terminating", perWave-1, 0)
		for cg := range cgroups {
			if cg != "kubepods" {
				delete(cgroups, cg)
			}
		}
		snap("cgroups gone", 0, 0)
		for _, p := range pods {
			if err := store.Delete(p); err != nil {
				t.Fatal(err)
			}
		}
		snap("deleted", 0, 0)
		bad, memReq, lagging, refs := sourceSizes(s)
		// References stay forgetRefsAfter (10 minutes, 10 waves here).
		if bad != 0 || memReq != 0 || lagging != 0 || refs > 11*(perWave-1) {
			t.Fatalf("after wave %d: %d bad pods, %d memory requests, %d lagging containers, %d references kept",
				wave, bad, memReq, lagging, refs)
		}
		clock = clock.Add(time.Minute - containerGrace - time.Second)
	}
	clock = clock.Add(forgetRefsAfter + time.Second)
	snap("later", 0, 0)
	if _, _, _, refs := sourceSizes(s); refs != 0 {
		t.Fatalf("%d references kept %s after their pods left", refs, forgetRefsAfter)
	}
}

// goneNamespaceSink refuses every create as the apiserver does in a
// namespace that no longer exists.
type goneNamespaceSink struct{ countingSink }

func (s *goneNamespaceSink) Create(e *corev1.Event) (*corev1.Event, error) {
	s.n.Add(1)
	return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), e.Namespace)
}

func (s *goneNamespaceSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) {
	return nil, apierrors.NewNotFound(corev1.Resource("events"), e.Name)
}

// An event about a pod whose namespace is gone is dropped as delivered:
// nobody can read it, and the recorder would log an error per pod.
func TestEventInGoneNamespaceIsNoError(t *testing.T) {
	inner := &goneNamespaceSink{}
	sink := &reportingSink{EventSink: inner, instance: "locus-n"}
	e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "gone", Name: "p.1"}}
	if out, err := sink.Create(e); err != nil || out != e || e.ReportingController != Component {
		t.Fatalf("create in a gone namespace: %v, %v", out, err)
	}
	if _, err := sink.Patch(e, nil); err == nil {
		t.Fatal("only creates are taken as posted")
	}
}
