// Package status is what the agent publishes about the node and each
// workload: the types of status.json and /status, the file itself, and the
// status drawn on the machine's map for /ui and `locus top`. It decides
// nothing; the agent fills it.
package status

import (
	"time"

	"github.com/locus-project/locus/pkg/kubelet"
)

// Source says where a workload's processes come from: a cgroup, a command
// the agent starts, a process match, or a pod.
type Source string

// Status is what the agent last decided and found, for `locus status`,
// /status and humans.
type Status struct {
	Time        time.Time        `json:"time"`
	Config      string           `json:"config"`
	ConfigError string           `json:"configError,omitempty"`
	Node        NodeStatus       `json:"node"`
	Workloads   []WorkloadStatus `json:"workloads"`
}

// NodeStatus summarises the machine and the pools.
type NodeStatus struct {
	CgroupVersion string   `json:"cgroupVersion"`
	Topology      string   `json:"topology"`
	CPUs          string   `json:"cpus"`
	Reserved      string   `json:"reserved"`
	Exclusive     string   `json:"exclusivePool"`
	Shared        string   `json:"sharedPool"`
	BE            string   `json:"bePool"`
	Unsupported   []string `json:"unsupportedKnobs,omitempty"`
	Problems      []string `json:"problems,omitempty"`
	// Pinning says when containers get their values; absent outside
	// Kubernetes mode.
	Pinning *Pinning `json:"pinning,omitempty"`
	// CPUQoS says what the kernel offers CPU QoS: cpu.idle, core scheduling.
	CPUQoS []string `json:"cpuQOS,omitempty"`
	// HostChecks are `locus doctor`'s checks as the agent ran them at start.
	HostChecks []HostCheck `json:"hostChecks,omitempty"`
	// KubeletCPUs are the CPUs the kubelet's static CPU manager holds alone;
	// Kubelet what its files say, when the agent reads them.
	KubeletCPUs string           `json:"kubeletCPUs,omitempty"`
	Kubelet     *kubelet.Summary `json:"kubelet,omitempty"`
	// Devices says what the agent knows of the devices pods hold, and
	// from where; absent where the source reads none.
	Devices *Devices `json:"devices,omitempty"`
}

// Devices is what the last reconcile read of the device-plugin devices
// the node's containers hold (the kubelet's PodResources API).
type Devices struct {
	// Source is where they were read (the PodResources socket).
	Source string `json:"source"`
	// Containers and Held are how many containers hold devices, and how
	// many devices they hold; Allocatable how many the node's plugins
	// offer, WithTopology how many of those report their NUMA nodes.
	Containers   int `json:"containers"`
	Held         int `json:"held"`
	Allocatable  int `json:"allocatable"`
	WithTopology int `json:"withTopology"`
	// Problem says why the last read failed: the agent then goes on
	// without device data (pods are placed as if they held none).
	Problem string `json:"problem,omitempty"`
}

// HostCheck is one host check's result: status is ok, warn, fail or n/a.
type HostCheck struct {
	Check  string `json:"check"`
	Status string `json:"status"`
	Found  string `json:"found"`
	Do     string `json:"do,omitempty"`
}

// Pinning is the path by which a node's containers get their cpuset and
// memory QoS values.
type Pinning struct {
	// Path is PinAtCreation (the runtime asks the agent before it creates
	// a container, over NRI) or PinAfterStart (the reconcile loop writes
	// the values once the container runs).
	Path    string    `json:"path"`
	Runtime string    `json:"runtime,omitempty"` // with PinAtCreation
	Reason  string    `json:"reason,omitempty"`  // why not PinAtCreation
	Since   time.Time `json:"since,omitzero"`
	// CgroupWatch is the watch of the pods' cgroups for new containers;
	// absent where the source has none.
	CgroupWatch *CgroupWatch `json:"cgroupWatch,omitempty"`
}

// CgroupWatch is the agent's watch of the pods' cgroup directories: a
// container whose cgroup appears under a decided pod's is given the pod's
// cpuset at once, before the pod's status lists it.
type CgroupWatch struct {
	// Watched is how many directories are watched (the pods' and the QoS
	// tiers').
	Watched int `json:"watched"`
	// Problem says why some pod's cgroup is not watched ("" when every one
	// is): its new containers wait for the pod's status.
	Problem string `json:"problem,omitempty"`
	// EarlyWrites counts the containers given their pod's cpuset as their
	// cgroup appeared, since the agent started.
	EarlyWrites int `json:"earlyWrites"`
}

// The paths of Pinning.
const (
	PinAtCreation = "at-creation"
	PinAfterStart = "after-start"
)

// WorkloadStatus is one workload as it stands.
type WorkloadStatus struct {
	Name      string        `json:"name"`
	Source    Source        `json:"source"`
	Cgroup    string        `json:"cgroup"`
	QOSClass  string        `json:"qosClass,omitempty"`
	Pool      string        `json:"pool"`
	CPUs      string        `json:"cpus"`
	Mems      string        `json:"mems"`
	NUMANodes []int         `json:"numaNodes"`
	MemoryQOS MemQoSStatus  `json:"memoryQOS"`
	CPUQOS    CPUQoSStatus  `json:"cpuQOS"`
	PIDs      []int         `json:"pids"`
	Process   *ProcessState `json:"process,omitempty"`
	Problems  []string      `json:"problems,omitempty"`
	// Devices are the PCI devices it holds, by address (its HostConfig's
	// devices:, a pod's DRA devices).
	Devices []string `json:"devices,omitempty"`
	// MemoryLocality is the last memory locality run, while it applies.
	MemoryLocality *LocalityStatus `json:"memoryLocality,omitempty"`
	// MemoryByNode is, by NUMA node, the memory and huge pages the
	// workload's request holds there (a workload with CPUs of its own and
	// a request only), in node order.
	MemoryByNode []NodeMemory `json:"memoryByNode,omitempty"`
	// LibvirtDomain is the libvirt domain the workload is (a HostConfig
	// workload's match.libvirtDomain), for the views to show it as a VM.
	LibvirtDomain string `json:"libvirtDomain,omitempty"`
	// ContainerCPUs are the CPUs of each part of the workload that has
	// its own: a container-scope pod's containers, or a dedicated libvirt
	// domain's thread cgroups (vcpu0, vcpu1, ..., emulator).
	ContainerCPUs map[string]string `json:"containerCPUs,omitempty"`
}

// NodeMemory is the memory of each kind a workload holds on one node, in
// bytes.
type NodeMemory struct {
	Node         int    `json:"node"`
	Bytes        uint64 `json:"bytes,omitempty"`
	HugePages2Mi uint64 `json:"hugepages2Mi,omitempty"`
	HugePages1Gi uint64 `json:"hugepages1Gi,omitempty"`
}

// MemQoSStatus is the memory QoS decision and the files as read back.
type MemQoSStatus struct {
	Enabled bool   `json:"enabled"`
	Reason  string `json:"reason"`
	// Values maps each memory QoS file that exists to its current text.
	Values map[string]string `json:"values,omitempty"`
}

// CPUQoSStatus is the CPU QoS decision and the files as read back.
type CPUQoSStatus struct {
	Reason string `json:"reason,omitempty"`
	// CoreIsolation is why the workload has, or has not, a core scheduling
	// cookie of its own; "" when not asked for.
	CoreIsolation string `json:"coreIsolation,omitempty"`
	// CPUBurst is what CPU Burst's burst buffer does for the workload, and
	// CFSQuotaBurst what its CFS quota raise does (docs/cpu-burst.md).
	CPUBurst      string            `json:"cpuBurst,omitempty"`
	CFSQuotaBurst string            `json:"cfsQuotaBurst,omitempty"`
	Values        map[string]string `json:"values,omitempty"`
}

// ProcessState is the process the agent started for a command workload.
type ProcessState struct {
	PID       int    `json:"pid,omitempty"`
	StartTime uint64 `json:"startTime,omitempty"`
	State     string `json:"state"` // running, restarting, not started
	Restarts  int    `json:"restarts"`
}

// LocalityStatus is the last memory locality run of a workload, for status.
type LocalityStatus struct {
	Time   time.Time `json:"time"`   // when the run ended
	Reason string    `json:"reason"` // MemoryLocalitySuccess, ...Completed, ...Skipped or ...Failed
	// LocalRatio is the percentage of the workload's pages on its NUMA nodes
	// afterwards; absent when no container could be measured.
	LocalRatio    *int   `json:"localRatio,omitempty"`
	PagesMigrated uint64 `json:"pagesMigrated"`
}
