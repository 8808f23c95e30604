package podresources_test

import (
	"strings"
	"testing"

	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/locus-project/locus/internal/podresourcestest"
	"github.com/locus-project/locus/pkg/podresources"
)

func TestFromListRefusesNamingFieldAndValue(t *testing.T) {
	many := func(n int) []*v1.PodResources {
		out := make([]*v1.PodResources, n)
		for i := range out {
			out[i] = podresourcestest.Pod("ns", "p", "c")
		}
		return out
	}
	manyContainers := func(pods, per int) []*v1.PodResources {
		out := make([]*v1.PodResources, pods)
		for i := range out {
			p := &v1.PodResources{Namespace: "ns", Name: "p"}
			for range per {
				p.Containers = append(p.Containers, &v1.ContainerResources{Name: "c"})
			}
			out[i] = p
		}
		return out
	}
	for _, tc := range []struct {
		name string
		pods []*v1.PodResources
		want string
	}{
		{"too many pods", many(podresources.MaxPods + 1), "podResources: 1025 pods, at most 1024"},
		{"too many containers in one pod", manyContainers(1, podresources.MaxContainers+1), "podResources[0].containers: 65 containers"},
		{"too many containers in all", manyContainers(podresources.MaxTotalContainers/podresources.MaxContainers+1, podresources.MaxContainers),
			"podResources[64].containers: more than 4096 containers"},
		{"empty pod name", []*v1.PodResources{podresourcestest.Pod("ns", "", "c")}, "podResources[0].name: empty"},
		{"long namespace", []*v1.PodResources{podresourcestest.Pod(strings.Repeat("n", 300), "p", "c")}, "podResources[0].namespace: \"nnn"},
		{"empty resource", []*v1.PodResources{podresourcestest.Pod("ns", "p", "c", podresourcestest.Group("", []string{"a"}))},
			"podResources[0].containers[0].devices[0].resourceName: empty"},
		{"empty id", []*v1.PodResources{podresourcestest.Pod("ns", "p", "c", podresourcestest.Group("r/x", []string{""}))},
			"devices[0].deviceIds[0]: empty"},
		{"negative node", []*v1.PodResources{podresourcestest.Pod("ns", "p", "c", podresourcestest.Group("r/x", []string{"a"}, -1))},
			"devices[0].topology.nodes[0].ID: -1, not a NUMA node"},
		{"huge node", []*v1.PodResources{podresourcestest.Pod("ns", "p", "c", podresourcestest.Group("r/x", []string{"a"}, 1<<40))},
			"topology.nodes[0].ID: 1099511627776"},
		{"too many nodes", []*v1.PodResources{podresourcestest.Pod("ns", "p", "c", podresourcestest.Group("r/x", []string{"a"}, make([]int64, 65)...))},
			"topology.nodes: 65 nodes, at most 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods, err := podresources.FromList(&v1.ListPodResourcesResponse{PodResources: tc.pods})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("FromList = %v, %v; want an error with %q", pods, err, tc.want)
			}
		})
	}
}

func TestFromListTotalIDsBounded(t *testing.T) {
	ids := make([]string, podresources.MaxIDs)
	for i := range ids {
		ids[i] = "d"
	}
	var pods []*v1.PodResources
	for range podresources.MaxTotalIDs/podresources.MaxIDs + 1 {
		pods = append(pods, podresourcestest.Pod("ns", "p", "c", podresourcestest.Group("r/x", ids)))
	}
	_, err := podresources.FromList(&v1.ListPodResourcesResponse{PodResources: pods})
	if err == nil || !strings.Contains(err.Error(), "podResources[64].containers[0].devices[0]: more than 16384 device ids") {
		t.Fatalf("FromList of %d ids: %v", len(pods)*len(ids), err)
	}
}

func TestFromAllocatableSortsNodesOnce(t *testing.T) {
	devs, err := podresources.FromAllocatable(&v1.AllocatableResourcesResponse{Devices: []*v1.ContainerDevices{
		podresourcestest.Group("r/x", []string{"a"}, 3, 1, 3)}})
	if err != nil || len(devs) != 1 || len(devs[0].Nodes) != 2 || devs[0].Nodes[0] != 1 || devs[0].Nodes[1] != 3 {
		t.Fatalf("FromAllocatable = %+v, %v; want nodes [1 3]", devs, err)
	}
	many := make([]*v1.ContainerDevices, podresources.MaxAllocatableGroups+1)
	for i := range many {
		many[i] = podresourcestest.Group("r/x", []string{"a"})
	}
	if _, err := podresources.FromAllocatable(&v1.AllocatableResourcesResponse{Devices: many}); err == nil ||
		!strings.Contains(err.Error(), "devices: 4097 groups") {
		t.Fatalf("FromAllocatable of %d groups: %v", len(many), err)
	}
}
