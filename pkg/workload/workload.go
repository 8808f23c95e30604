// Package workload holds what every side of Locus says about a workload: its
// identity, its cgroups, what it asks of the CPU allocator and of memory QoS,
// the CPUs it holds, and what could not be done for it. Nothing here does I/O.
package workload

import (
	"fmt"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/sloconfig"
)

// Workload is the agent's view of a pod or a standalone workload.
type Workload struct {
	Name string
	// UID is a pod's UID (empty for a standalone workload): the kubelet's
	// CPU manager names its pods by it.
	UID string
	// Cgroup holds the workload (the pod cgroup). Containers may be the same
	// cgroup (standalone workloads) or children of it (pods).
	Cgroup     string
	Containers []Container
	// Unlisted are the cgroups of a pod's containers seen under the pod's
	// cgroup before the pod's status names them (a runtime starting the
	// container ahead of the kubelet's report): their names, and so their
	// memory QoS, CPU limits and container-scope parts, are not known yet.
	// Only the pod's cpuset is written to them, and only where every
	// container of the pod gets the same one.
	Unlisted []string
	CPU      CPUNeed
	// BE workloads run in the BE pool when they hold no CPUs of their own.
	BE bool
	// QoS is the workload's class as its text gives it.
	QoS QoS
	// MemQoS is what memory QoS reads of the workload; MemQoSInvalid, when
	// set, says why its text cannot be read (a bad class label or
	// memoryQOS annotation): then no memory QoS file is written for it.
	MemQoS        memqos.Workload
	MemQoSInvalid string
	// MemoryLocality is the workload's own memoryLocality annotation, nil
	// when it gives none; MemoryLocalityInvalid, when set, says why its text
	// cannot be read: then memory locality is off for it.
	MemoryLocality        *sloconfig.Locality
	MemoryLocalityInvalid string
	// CPUQoS is what CPU QoS reads of the workload; CPUQoSInvalid, when
	// set, says why its text cannot be read (a bad class or annotation):
	// then no CPU QoS file is written for it.
	CPUQoS        cpuqos.Workload
	CPUQoSInvalid string
	// CPUBurst is the workload's own CPU Burst fields (annotation
	// koordinator.sh/cpuBurst), nil when it gives none; CPUBurstInvalid,
	// when set, says why its text cannot be read: then no CPU Burst file
	// is written for it.
	CPUBurst        *cpuburst.Config
	CPUBurstInvalid string
	// Terminating is a workload on its way out (a pod being deleted): it
	// keeps the CPUs it holds, so none of them is handed to another while
	// its processes may still run, but nothing is written for it any more.
	Terminating bool
	// Awaited is a pod bound to the node whose cgroup the kubelet has not
	// made yet. It is decided like any other, so that its CPUs are held and
	// its containers find their cpuset ready as their cgroups appear
	// (decide.Desired.Unlisted), but nothing is written for it until its
	// cgroup exists. It lists no container.
	Awaited bool
	// OwnsMemoryLimit marks a standalone workload, whose limits.memory the
	// agent applies: MemoryLimit bytes to memory.limit_in_bytes (v2
	// memory.max), or, when 0, the original value restored. A pod's limit is
	// the kubelet's, never touched.
	OwnsMemoryLimit bool
	MemoryLimit     int64
	// Movable is the workload's opt-in to being moved to other CPUs
	// (annotation locus.io/movable, HostConfig movable); MovableInvalid,
	// when set, says why its text cannot be read: then it is not movable.
	// MayMove says whether it may move.
	Movable        bool
	MovableInvalid string
	// DeviceResources are the device resources a pod requests
	// (PodDevices: nvidia.com/gpu and the like), by name: a workload
	// holding one never moves.
	DeviceResources []string
	// Devices are the PCI devices the workload holds, by canonical address
	// (0000:3b:00.0, as topology.PCIDevice.Address): pkg/decide places its
	// CPUs on their NUMA nodes. A standalone workload's come from the
	// HostConfig's devices (ParseDevices); any source that learns which
	// devices a workload holds fills it the same way.
	Devices []string
	// HeldDevices are the devices the workload holds whose NUMA nodes its
	// source reports (a pod's device-plugin devices, from the kubelet's
	// PodResources: HeldDevices): pkg/decide places its CPUs on their
	// nodes as it does for Devices, and tells the same problems.
	HeldDevices []HeldDevice
	// NodeDevices are the devices it holds known only by their NUMA node
	// (a DRA driver's numaNode attribute; PlaceDRADevices): pkg/decide
	// places its CPUs on those nodes as on its Devices' nodes.
	NodeDevices []NodeDevice
	// Dedicated, for a libvirt domain under a dedicated CPU policy, are
	// its vCPU and emulator threads' cgroups (SetBelow), which get cpusets
	// of their own; nil otherwise. dedicated is the policy as read.
	Dedicated *DedicatedThreads
	dedicated bool
}

// Container is one container's cgroup; its name matches MemQoS.Containers.
type Container struct {
	Name   string
	Cgroup string
	// CPULimitMilli is the container's CPU limit in millicores, 0 for
	// none: the kubelet derives its CFS quota from it.
	CPULimitMilli int64
}

// CPUNeed is what a workload asks of the allocator.
type CPUNeed struct {
	// Exclusive is true when the workload opted in to CPU binding
	// (cpuset-scheduler: "true") with an integer CPU limit.
	Exclusive    bool
	CPUs         int
	RequestMilli int64
	Policy       cpualloc.Policy
	NUMAStrategy cpualloc.NUMAStrategy
	// Decided, when not empty, is a CPU set chosen elsewhere (the cluster
	// scheduler) that the agent applies instead of allocating.
	Decided cpuset.CPUSet
	// Containers, set for a container-scope pod only, is each container's
	// count, in spec order: the pod's CPUs are divided among them
	// (cpuset.Partition) instead of shared.
	Containers []cpualloc.ContainerCPUs
	// DecidedContainers is the scheduler's partition of the pod's CPUs
	// (AnnotationContainerCPUSets), checked against the agent's own.
	DecidedContainers map[string]cpuset.CPUSet
	// Memory is what the workload asks of the memory of the NUMA nodes
	// its cpuset.mems names: its memory and huge page requests. Only a
	// workload with CPUs of its own holds memory on its nodes.
	Memory cpualloc.Memory
	// Near are the NUMA nodes of the devices the workload holds, as
	// pkg/decide finds them on the topology (Workload.Devices): the
	// allocator places its CPUs there when they fit (cpualloc.Request.Near).
	Near []int
	// DecidedMems, beside a Decided that is the agent's own (a `locus run`
	// lease), are the nodes that decision gave the memory.
	DecidedMems []int
	// Check, set with a pod's Decided, is what the pod's own text says of
	// the exclusive CPUs it may hold: pkg/decide applies the decision only
	// if the pod qualifies. Nil for a decision that is the agent's own (a
	// `locus run` lease).
	Check *DecisionCheck
}

// DecisionCheck is what a pod's text says of the exclusive CPUs it may
// hold, beside a decision made elsewhere (CPUNeed.Decided).
type DecisionCheck struct {
	// OptedIn: cpuset-scheduler "true".
	OptedIn bool
	// BestEffort: the pod's Kubernetes QoS class is BestEffort.
	BestEffort bool
	// LimitCPUs is the pod's CPU count by its integer limits, as the
	// kubelet actuated them (actuatedLimitCPUs); 0 when they are not
	// whole CPUs, LimitError saying why.
	LimitCPUs  int
	LimitError string
}

// Assignment is the CPU set a workload holds. It is what the checkpoint keeps,
// so a restarted agent re-adopts workloads without moving them.
type Assignment struct {
	CPUs         cpuset.CPUSet
	Policy       cpualloc.Policy
	RequestMilli int64
	// Decided, when set, is the decision made elsewhere (CPUNeed.Decided)
	// that CPUs were resized from: the decision still stands, and the
	// set in force is kept, while the decision names these CPUs.
	Decided cpuset.CPUSet
	// MemNodes, when the CPUs' nodes could not hold the memory, are the
	// larger group of NUMA nodes cpuset.mems names. Empty means the CPUs'
	// nodes, as every checkpoint written before memory was accounted says.
	MemNodes []int
	// Memory is what the workload asked of those nodes when it was placed.
	Memory cpualloc.Memory
	// MemHeld, for memory on more than one node, is how much of Memory
	// each of them holds, as it was accounted when the workload was placed: a group's
	// share depends on what the other workloads held then, so it is kept
	// rather than worked out again.
	MemHeld map[int]cpualloc.Memory
	// Near are the NUMA nodes of the workload's devices when it was placed
	// (CPUNeed.Near): when they change (a device named or gone), its CPUs
	// are chosen again next to them, as when its policy changes.
	Near []int
}

// Problem is something the agent could not do for a workload; the workload
// keeps running in the shared pool and the problem is reported.
type Problem struct {
	Workload string `json:"workload"`
	Reason   string `json:"reason"`
	Message  string `json:"message"`
}

// String summarises a problem for logs.
func (p Problem) String() string {
	if p.Workload == "" {
		return fmt.Sprintf("%s: %s", p.Reason, p.Message)
	}
	return fmt.Sprintf("%s: %s: %s", p.Workload, p.Reason, p.Message)
}
