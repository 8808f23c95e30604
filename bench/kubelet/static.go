// Package kubelet drives kubelet's own static CPU manager policy (and, when
// asked, its topology manager) in memory, the way kubelet does when it admits a
// Guaranteed pod, so Locus's allocator can be compared with the real code on
// the same request stream rather than with a re-implementation of it.
package kubelet

import (
	"fmt"
	"sort"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// Topology manager policies kubelet offers (--topology-manager-policy).
const (
	TopologyNone           = topologymanager.PolicyNone
	TopologyBestEffort     = topologymanager.PolicyBestEffort
	TopologyRestricted     = topologymanager.PolicyRestricted
	TopologySingleNUMANode = topologymanager.PolicySingleNumaNode
)

// Config is the kubelet configuration under test.
type Config struct {
	// Reserved is --reserved-cpus.
	Reserved cpuset.CPUSet
	// FullPCPUsOnly sets the static policy option full-pcpus-only=true.
	FullPCPUsOnly bool
	// DistributeAcrossNUMA sets distribute-cpus-across-numa=true (beta).
	DistributeAcrossNUMA bool
	// DistributeAcrossCores sets distribute-cpus-across-cores=true (alpha).
	DistributeAcrossCores bool
	// AlignByUncoreCache sets prefer-align-cpus-by-uncorecache=true (alpha).
	AlignByUncoreCache bool
	// TopologyManager is --topology-manager-policy; "" means none.
	TopologyManager string
}

// containerName is the one container every simulated pod has.
const containerName = "app"

// Static is one node's static CPU manager. Not safe for concurrent use.
type Static struct {
	policy cpumanager.Policy
	state  state.State
	merger topologymanager.Policy
	hints  *hintStore
	cfg    Config
	pods   map[int]*v1.Pod
}

func init() {
	// The alpha options (distribute-cpus-across-cores,
	// prefer-align-cpus-by-uncorecache) need their gate, as on a kubelet.
	if err := utilfeature.DefaultMutableFeatureGate.Set(string(kubefeatures.CPUManagerPolicyAlphaOptions) + "=true"); err != nil {
		panic(err)
	}
	// kubelet logs every allocation at level 0; a logger that is never enabled
	// keeps the measured latency that of the policy, not of log formatting.
	klog.SetLogger(logr.Discard())
}

// New builds the policy on t with kubelet's start-up sequence: the shared pool
// begins as every CPU.
func New(t *topology.Topology, cfg Config) (*Static, error) {
	merger, err := topologyPolicy(t, cfg.TopologyManager)
	if err != nil {
		return nil, err
	}
	hints := &hintStore{policy: merger}
	opts := map[string]string{}
	for _, o := range []struct {
		on   bool
		name string
	}{
		{cfg.FullPCPUsOnly, cpumanager.FullPCPUsOnlyOption},
		{cfg.DistributeAcrossNUMA, cpumanager.DistributeCPUsAcrossNUMAOption},
		{cfg.DistributeAcrossCores, cpumanager.DistributeCPUsAcrossCoresOption},
		{cfg.AlignByUncoreCache, cpumanager.PreferAlignByUnCoreCacheOption},
	} {
		if o.on {
			opts[o.name] = "true"
		}
	}
	policy, err := cpumanager.NewStaticPolicy(CPUTopology(t), cfg.Reserved.Size(), cfg.Reserved, hints, opts)
	if err != nil {
		return nil, fmt.Errorf("kubelet static policy: %w", err)
	}
	st := state.NewMemoryState()
	if err := policy.Start(st); err != nil {
		return nil, fmt.Errorf("kubelet static policy start: %w", err)
	}
	return &Static{policy: policy, state: st, merger: merger, hints: hints, cfg: cfg, pods: map[int]*v1.Pod{}}, nil
}

func topologyPolicy(t *topology.Topology, name string) (topologymanager.Policy, error) {
	info := &topologymanager.NUMAInfo{NUMADistances: topologymanager.NUMADistances{}}
	for _, n := range t.Nodes {
		if n.CPUs.Size() > 0 {
			info.Nodes = append(info.Nodes, n.ID)
		}
	}
	opts, err := topologymanager.NewPolicyOptions(nil)
	if err != nil {
		return nil, err
	}
	switch name {
	case "", TopologyNone:
		return topologymanager.NewNonePolicy(), nil
	case TopologyBestEffort:
		return topologymanager.NewBestEffortPolicy(info, opts), nil
	case TopologyRestricted:
		return topologymanager.NewRestrictedPolicy(info, opts), nil
	case TopologySingleNUMANode:
		return topologymanager.NewSingleNumaNodePolicy(info, opts), nil
	}
	return nil, fmt.Errorf("topology manager policy %q: want none, best-effort, restricted or single-numa-node", name)
}

// Name says which kubelet configuration this is, as a table row label.
func (s *Static) Name() string {
	name := "kubelet static"
	switch {
	case s.cfg.FullPCPUsOnly:
		name = "kubelet full-pcpus-only"
	case s.cfg.DistributeAcrossNUMA:
		name = "kubelet distribute-cpus-across-numa"
	case s.cfg.DistributeAcrossCores:
		name = "kubelet distribute-cpus-across-cores"
	}
	return name + " (tm " + s.merger.Name() + ")"
}

// WholeCores reports whether the policy only hands out whole cores, which
// with full-pcpus-only it does for every request it admits.
func (s *Static) WholeCores(int) bool { return s.cfg.FullPCPUsOnly }

// Free returns the CPUs the policy may still hand out exclusively: the shared
// pool less the reserved CPUs.
func (s *Static) Free() cpuset.CPUSet {
	return s.state.GetDefaultCPUSet().Difference(s.cfg.Reserved)
}

// Allocate admits pod id asking for n CPUs as kubelet does: topology hints,
// the topology manager's merge and admit decision, then the CPU manager.
func (s *Static) Allocate(id, n int) (cpuset.CPUSet, error) {
	if _, dup := s.pods[id]; dup {
		return cpuset.New(), fmt.Errorf("pod %d already admitted", id)
	}
	pod := guaranteedPod(id, n)
	c := &pod.Spec.Containers[0]
	if s.merger.Name() != TopologyNone {
		hint, admit := s.merger.Merge([]map[string][]topologymanager.TopologyHint{
			s.policy.GetTopologyHints(s.state, pod, c),
		})
		if !admit {
			return cpuset.New(), fmt.Errorf("topology affinity error: no NUMA alignment for %d CPUs", n)
		}
		s.hints.set(string(pod.UID), hint)
	}
	err := s.policy.Allocate(s.state, pod, c)
	s.hints.forget(string(pod.UID))
	if err != nil {
		return cpuset.New(), err
	}
	s.pods[id] = pod
	cpus, _ := s.state.GetCPUSet(string(pod.UID), containerName)
	return cpus, nil
}

// Release returns pod id's CPUs to the shared pool.
func (s *Static) Release(id int) error {
	pod, ok := s.pods[id]
	if !ok {
		return fmt.Errorf("pod %d is not admitted", id)
	}
	delete(s.pods, id)
	return s.policy.RemoveContainer(s.state, string(pod.UID), containerName)
}

// occupant is the pod that holds the CPUs Occupy takes.
const occupant = "occupied-before-start"

// Occupy marks cpus as exclusively held by containers admitted before this
// simulation started, so a measurement can begin on a busy node.
func (s *Static) Occupy(cpus cpuset.CPUSet) error {
	if !cpus.IsSubsetOf(s.Free()) {
		return fmt.Errorf("occupy %s: %s are not free", cpus, cpus.Difference(s.Free()))
	}
	held, _ := s.state.GetCPUSet(occupant, containerName)
	s.state.SetCPUSet(occupant, containerName, held.Union(cpus))
	s.state.SetDefaultCPUSet(s.state.GetDefaultCPUSet().Difference(cpus))
	return nil
}

// Pods returns the ids of admitted pods, sorted.
func (s *Static) Pods() []int {
	ids := make([]int, 0, len(s.pods))
	for id := range s.pods {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// guaranteedPod is a one-container pod in the Guaranteed QoS class (requests
// equal limits for CPU and memory), which is what the static policy pins.
func guaranteedPod(id, cpus int) *v1.Pod {
	res := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewQuantity(int64(cpus), resource.DecimalSI),
		v1.ResourceMemory: resource.MustParse("1Gi"),
	}
	return &v1.Pod{
		ObjectMeta: metaFor(id),
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name:      containerName,
			Resources: v1.ResourceRequirements{Requests: res, Limits: res},
		}}},
	}
}

func metaFor(id int) metav1.ObjectMeta {
	name := fmt.Sprintf("pod-%d", id)
	return metav1.ObjectMeta{Name: name, Namespace: "bench", UID: types.UID(name)}
}

// hintStore is the topology manager's side of the CPU manager: the affinity
// it merged for the container being admitted.
type hintStore struct {
	policy topologymanager.Policy
	hints  map[string]topologymanager.TopologyHint
}

func (h *hintStore) set(podUID string, hint topologymanager.TopologyHint) {
	if h.hints == nil {
		h.hints = map[string]topologymanager.TopologyHint{}
	}
	h.hints[podUID] = hint
}

func (h *hintStore) forget(podUID string) { delete(h.hints, podUID) }

// GetAffinity is empty (no NUMA preference) unless a hint was merged, as with
// kubelet's "none" topology manager policy.
func (h *hintStore) GetAffinity(podUID, _ string) topologymanager.TopologyHint {
	return h.hints[podUID]
}

func (h *hintStore) GetPolicy() topologymanager.Policy { return h.policy }
