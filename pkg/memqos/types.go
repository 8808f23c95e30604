// Package memqos decides the memory QoS cgroup values of a container from the
// cluster, namespace and pod settings. It is pure and takes types, never
// text: pkg/sloconfig decodes the ConfigMaps (and the HostConfig's section)
// into Config and NamespaceConfig, pkg/workload reads a workload's class and
// memoryQOS annotation into Workload; Compute's result goes to a cgroup
// writer. It has no Kubernetes dependency so that both the standalone agent
// (workloads declared in YAML) and the Kubernetes agent (pods) can use it.
package memqos

// KubeQoS is the QoS class Kubernetes assigned to a pod.
type KubeQoS string

// The Kubernetes QoS classes.
const (
	Guaranteed KubeQoS = "Guaranteed"
	Burstable  KubeQoS = "Burstable"
	BestEffort KubeQoS = "BestEffort"
)

// Class is a koordinator QoS class, set with the label koordinator.sh/qosClass.
type Class string

// The koordinator QoS classes. Only LS and BE have their own memory profile;
// LSE, LSR and SYSTEM are latency-sensitive too and use the LS profile.
const (
	ClassLSE    Class = "LSE"
	ClassLSR    Class = "LSR"
	ClassLS     Class = "LS"
	ClassBE     Class = "BE"
	ClassSystem Class = "SYSTEM"
)

// Container is the memory view of one container. Zero bytes means unset.
type Container struct {
	Name         string
	RequestBytes int64
	LimitBytes   int64
}

// Workload is the view of a pod (or of a standalone workload) that the
// decision needs, its text already read.
type Workload struct {
	Namespace string
	// Class is the workload's class: its class label, else mapped from its
	// Kubernetes QoS class (BestEffort BE, the others LS); ClassFrom says
	// where it came from ("label koordinator.sh/qosClass", "Kubernetes QoS
	// Burstable").
	Class     Class
	ClassFrom string
	// Guaranteed marks a workload without a class label that Kubernetes
	// calls Guaranteed: only lsrClass governs it.
	Guaranteed bool
	// Pod is the workload's memoryQOS annotation; PodKey names the key it
	// was read from, "" when it has none.
	Pod        PodSetting
	PodKey     string
	Containers []Container
}

// Params is a partial set of memoryQOS parameters, as written in a ConfigMap
// or a pod annotation; nil means "not given here".
type Params struct {
	MinLimitPercent   *int64
	LowLimitPercent   *int64
	ThrottlingPercent *int64
	WmarkRatio        *int64
	WmarkMinAdj       *int64
}

// Profile is a complete set of memoryQOS parameters. For every field 0 means
// off: the matching cgroup file keeps the value it was created with.
type Profile struct {
	MinLimitPercent   int64
	LowLimitPercent   int64
	ThrottlingPercent int64
	WmarkRatio        int64
	WmarkMinAdj       int64
}

// ClassConfig is one class's memoryQOS section of resource-qos-config.
// Enable nil means the key was absent, which is the same as false.
type ClassConfig struct {
	Enable *bool
	Params Params
}

// Config is the memory part of resource-qos-config. A nil section means the
// class has no memoryQOS key. Values pkg/sloconfig decodes are shared:
// treat them as read-only.
type Config struct {
	LSR    *ClassConfig // clusterStrategy.lsrClass.memoryQOS
	LS     *ClassConfig // clusterStrategy.lsClass.memoryQOS
	BE     *ClassConfig // clusterStrategy.beClass.memoryQOS
	System *ClassConfig // clusterStrategy.systemClass.memoryQOS
}

// NamespaceConfig is the memory-qos key of ack-slo-pod-config.
type NamespaceConfig struct {
	Enabled  []string
	Disabled []string
}

// Policy is the pod-level switch of the memoryQOS annotation.
type Policy string

// The pod policies. An empty policy is PolicyDefault.
const (
	PolicyAuto    Policy = "auto"    // on, recommended profile, beats the cluster
	PolicyDefault Policy = "default" // inherit namespace and cluster settings
	PolicyNone    Policy = "none"    // off, beats the cluster
)

// PodSetting is a memoryQOS annotation, read: the policy plus explicit
// parameters that override whichever profile ends up in force. The zero
// value is no annotation (policy default).
type PodSetting struct {
	Policy Policy
	Params Params
}

// Options changes how the decision is mapped onto kernel files.
type Options struct {
	// V1SoftLimitForLow adds memory.soft_limit_in_bytes = the memory.low
	// target. Only for upstream cgroup v1 kernels, which lack memory.low.
	V1SoftLimitForLow bool
	// ThrottleNotBelowRequest raises memory.high to the request when
	// limit × throttlingPercent / 100 falls below it. Off by default, so the
	// seed formula applies as written; a Locus extension, not in the protocol.
	ThrottleNotBelowRequest bool
}
