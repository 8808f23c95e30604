// Package podresources reads the kubelet's PodResources API (gRPC over
// <kubelet dir>/pod-resources/kubelet.sock): which device-plugin devices
// each container holds and the NUMA nodes the kubelet reports for them
// (List), and every device the node's plugins offer (GetAllocatableResources).
// The answer is hostile until bounded: the message size is capped before it
// is decoded, and every list, and their totals, before anything is built
// from it (convert.go).
package podresources

// Device is a group of devices of one resource the kubelet reports
// together, with the NUMA nodes it says they hang off.
type Device struct {
	// Resource is the device plugin's resource name (example.com/gpu).
	Resource string
	// IDs are the devices' ids as the plugin names them.
	IDs []string
	// Nodes are the NUMA nodes the kubelet reports, sorted, each once;
	// empty when the plugin gave no topology.
	Nodes []int
}

// Container is one container and the devices it holds.
type Container struct {
	Name    string
	Devices []Device
}

// Pod is one pod whose containers hold devices.
type Pod struct {
	Namespace, Name string
	Containers      []Container
}

// Bounds on an answer. A node runs a few hundred pods, each a few
// containers holding a few devices; these are far above that and keep a
// hostile answer to a few mebibytes.
const (
	// MaxMessageBytes caps one answer before gRPC decodes it.
	MaxMessageBytes = 4 << 20
	// MaxPods bounds the pods of a List answer.
	MaxPods = 1024
	// MaxContainers bounds one pod's containers, MaxTotalContainers the
	// whole answer's.
	MaxContainers      = 64
	MaxTotalContainers = 4096
	// MaxDeviceGroups bounds the device groups of one container, and of a
	// GetAllocatableResources answer MaxAllocatableGroups.
	MaxDeviceGroups      = 64
	MaxAllocatableGroups = 4096
	// MaxIDs bounds the ids of one group, MaxTotalIDs the whole answer's.
	MaxIDs      = 256
	MaxTotalIDs = 16384
	// MaxNodes bounds the NUMA nodes of one group, MaxTotalNodes the
	// whole answer's; a NUMA id is at most topology.MaxNodeID.
	MaxNodes      = 64
	MaxTotalNodes = 16384
	// MaxNameBytes bounds a name (a resource, a pod, a namespace, a
	// container: at most 253 bytes in Kubernetes) and MaxIDBytes a device's id.
	MaxNameBytes = 253
	MaxIDBytes   = 256
)
