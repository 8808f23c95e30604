package podresources_test

import (
	"testing"

	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/locus-project/locus/internal/fuzzseed"
	"github.com/locus-project/locus/internal/podresourcestest"
	"github.com/locus-project/locus/pkg/podresources"
)

// seedAnswers are marshalled answers: a good one, one past each bound.
func seedAnswers(f *testing.F) {
	good := &v1.ListPodResourcesResponse{PodResources: []*v1.PodResources{
		podresourcestest.Pod("default", "gpu", "main", podresourcestest.Group("example.com/gpu", []string{"gpu-1"}, 1))}}
	ids := make([]string, podresources.MaxIDs+1)
	for i := range ids {
		ids[i] = "x"
	}
	greedy := &v1.ListPodResourcesResponse{PodResources: []*v1.PodResources{
		podresourcestest.Pod("default", "gpu", "main", podresourcestest.Group("example.com/gpu", ids, 0, 1<<40))}}
	for _, m := range []*v1.ListPodResourcesResponse{good, greedy} {
		b, err := m.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range append(fuzzseed.Texts(), fuzzseed.Lists()...) {
		f.Add([]byte(s))
	}
}

func FuzzFromList(f *testing.F) {
	seedAnswers(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var resp v1.ListPodResourcesResponse
		if resp.Unmarshal(data) != nil {
			return
		}
		fuzzseed.Timed(t, "FromList", func() {
			pods, err := podresources.FromList(&resp)
			fuzzseed.CheckError(t, err, "podResources")
			if err != nil {
				return
			}
			if len(pods) > podresources.MaxPods {
				t.Fatalf("%d pods kept", len(pods))
			}
			ids := 0
			for _, p := range pods {
				for _, c := range p.Containers {
					for _, d := range c.Devices {
						ids += len(d.IDs)
						for _, n := range d.Nodes {
							if n < 0 || n > 1023 {
								t.Fatalf("node %d kept", n)
							}
						}
					}
				}
			}
			if ids > podresources.MaxTotalIDs {
				t.Fatalf("%d ids kept", ids)
			}
		})
	})
}

func FuzzFromAllocatable(f *testing.F) {
	seedAnswers(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var resp v1.AllocatableResourcesResponse
		if resp.Unmarshal(data) != nil {
			return
		}
		fuzzseed.Timed(t, "FromAllocatable", func() {
			devs, err := podresources.FromAllocatable(&resp)
			fuzzseed.CheckError(t, err, "devices")
			if err == nil && len(devs) > podresources.MaxAllocatableGroups {
				t.Fatalf("%d groups kept", len(devs))
			}
		})
	})
}
