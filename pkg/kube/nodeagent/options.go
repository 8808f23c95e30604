package nodeagent

import (
	"log/slog"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/kube/kubeclient"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/kube/podcgroup"
)

// SourceOptions configure a Source.
type SourceOptions struct {
	NodeName string
	Client   kubeclient.Interface
	// EventClient posts the events (default Client); Run gives it a rate
	// limit of its own (EventQPS), so events never wait behind the watches.
	EventClient kubeclient.Interface
	// ConfigNamespace holds the ConfigMaps (default kube-system); the agent's
	// Role lets it read ConfigMaps there only.
	ConfigNamespace      string
	ResourceQoSConfigMap string // default ack-slo-config
	PodQoSConfigMap      string // default ack-slo-pod-config
	// CgroupDriver is forced when set; else it is detected from the
	// kubepods cgroup the kubelet made.
	CgroupDriver podcgroup.Driver
	// KubeletCgroupRoot is the kubelet's cgroupRoot, under which its
	// kubepods tree lives (nil: the top of the cgroup root).
	KubeletCgroupRoot podcgroup.Root
	Reserved          cpuset.CPUSet
	// PodResync replays every pod to the loop this often (default 5m); the
	// agent's own --resync reconciles more often from its cache anyway.
	PodResync time.Duration
	// NRT publishes the NodeResourceTopology when set.
	NRT *nrt.Publisher
	// StateDir is the agent's state directory, where the last good value of
	// each ConfigMap is kept (SavedConfigFile); "" keeps none.
	StateDir string
	// DecisionKeyFile holds the keys the scheduler signs its decisions
	// with (pkg/decisionsig), read again when it changes: a pod's
	// resource-status is applied only under its signature. "": no key, and
	// no decision is applied.
	DecisionKeyFile string
	// Moves switches on moving the pods that opted in (locus.io/movable)
	// to other CPUs so that another fits (the agent's --moves; off by
	// default); Rebalance, with Moves, moves them off a NUMA node busier
	// than another (--rebalance). A node-wide setting of the operator's:
	// no pod can turn it on.
	Moves, Rebalance bool
	// PodResourcesSocket is the kubelet's PodResources socket
	// (podresources.SocketPath of its root directory), read once a
	// reconcile for the devices each pod holds; "" reads none.
	PodResourcesSocket string
	// Quiet posts no events (a dry run changes nothing in the cluster).
	Quiet  bool
	Logger *slog.Logger
}

// Defaults for SourceOptions.
const (
	DefaultConfigNamespace      = "kube-system"
	DefaultResourceQoSConfigMap = "ack-slo-config"
	DefaultPodQoSConfigMap      = "ack-slo-pod-config"
)
