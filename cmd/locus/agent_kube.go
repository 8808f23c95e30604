package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/nodeagent"
	"github.com/locus-project/locus/pkg/kube/podcgroup"
	"github.com/locus-project/locus/pkg/kubelet"
	"github.com/locus-project/locus/pkg/nri"
	"github.com/locus-project/locus/pkg/podresources"
	"github.com/locus-project/locus/pkg/topology"
)

// kubeFlags are the flags of the agent's Kubernetes mode (--node-name).
type kubeFlags struct {
	node, kubeconfig             string
	configNS, resQoSCM, podQoSCM string
	driver, reserved             string
	kubeletRoot                  string
	kubeletDir, kubeletConfig    string
	decisionKeyFile              string
	nrtInterval                  time.Duration
	nrtHeartbeat                 time.Duration
	noNRT                        bool
	moves, rebalance             bool
	ownerDaemonSet               string // NAMESPACE/NAME; see uninstall.go
	nri                          agent.NRIOptions
	standaloneOnly, kubeOnly     []string // flag names, to refuse them in the other mode
}

func addKubeFlags(f *pflag.FlagSet, k *kubeFlags) {
	f.StringVar(&k.node, "node-name", "", "Kubernetes mode: manage the pods bound to this node")
	f.StringVar(&k.kubeconfig, "kubeconfig", "", "Kubernetes mode: kubeconfig file (default: the in-cluster service account)")
	f.StringVar(&k.configNS, "config-namespace", nodeagent.DefaultConfigNamespace, "Kubernetes mode: namespace of the ConfigMaps below")
	f.StringVar(&k.resQoSCM, "resource-qos-configmap", nodeagent.DefaultResourceQoSConfigMap, "Kubernetes mode: ConfigMap with key resource-qos-config")
	f.StringVar(&k.podQoSCM, "pod-qos-configmap", nodeagent.DefaultPodQoSConfigMap, "Kubernetes mode: ConfigMap with key memory-qos")
	f.StringVar(&k.driver, "cgroup-driver", "auto", "Kubernetes mode: the kubelet's cgroup driver: auto, systemd or cgroupfs")
	f.StringVar(&k.kubeletRoot, "kubelet-cgroup-root", "auto", "Kubernetes mode: the kubelet's cgroupRoot (kind: /kubelet), under which its kubepods tree lives; auto finds it, / is the top")
	f.StringVar(&k.reserved, "reserved-cpus", "", "Kubernetes mode: CPUs never given to a pod of its own (Linux list, e.g. 0,64); default: the kubelet's reservedSystemCPUs")
	f.StringVar(&k.kubeletDir, "kubelet-dir", kubelet.DefaultDir, "Kubernetes mode: the kubelet's root directory, whose cpu_manager_state and memory_manager_state are read, never written, and whose pod-resources/kubelet.sock is asked which devices each container holds (empty: read nothing)")
	f.StringVar(&k.kubeletConfig, "kubelet-config", "", "Kubernetes mode: the kubelet's configuration file (default: config.yaml in --kubelet-dir)")
	f.StringVar(&k.decisionKeyFile, "decision-key-file", "", "Kubernetes mode: the keys locus-scheduler signs its decisions with (one \"<id> <base64 key>\" a line), read again when it changes; a pod's locus.io/resource-status is applied only under their signature (empty: none is applied)")
	f.DurationVar(&k.nrtInterval, "nrt-min-interval", time.Second, "Kubernetes mode: least time between two NodeResourceTopology updates")
	f.DurationVar(&k.nrtHeartbeat, "nrt-heartbeat", time.Minute, "Kubernetes mode: rewrite the NodeResourceTopology's locus.io/heartbeat at least this often (0: only on change); locus-scheduler's nrtMaxAge must be longer")
	f.BoolVar(&k.noNRT, "no-nrt", false, "Kubernetes mode: publish no NodeResourceTopology")
	f.StringVar(&k.ownerDaemonSet, "owner-daemonset", "", "Kubernetes mode: NAMESPACE/NAME of the DaemonSet running this agent; when the agent stops and it is gone or being deleted (helm uninstall), restore every cgroup file Locus changed, delete the node's NodeResourceTopology and clear the state")
	f.BoolVar(&k.nri.Enabled, "nri", true, "Kubernetes mode: register with the runtime's NRI socket, so containers are created with their CPUs and memory QoS values (without it, or without the socket, they get them once running)")
	f.StringVar(&k.nri.Socket, "nri-socket", nri.DefaultSocket, "Kubernetes mode: the runtime's NRI socket")
	f.BoolVar(&k.nri.FailClosed, "nri-fail-closed", false, "Kubernetes mode: refuse to create a container of a pod asking for exclusive CPUs when its CPUs cannot be decided at creation (default: it starts, and gets them once running)")
	f.BoolVar(&k.moves, "moves", false, "Kubernetes mode: move pods that opted in (annotation locus.io/movable: \"true\") to other CPUs, live, so that a pod needing a whole NUMA node fits, and count their CPUs in the NodeResourceTopology (locus.io/movable-cpus) for locus-scheduler")
	f.BoolVar(&k.rebalance, "rebalance", false, "Kubernetes mode, with --moves: move movable pods off a NUMA node whose pinned pods use much more CPU than another's, for a sustained time")
	k.kubeOnly = []string{"kubeconfig", "config-namespace", "resource-qos-configmap", "pod-qos-configmap",
		"cgroup-driver", "kubelet-cgroup-root", "reserved-cpus", "nrt-min-interval", "no-nrt", "owner-daemonset", "kubelet-dir", "kubelet-config",
		"nri", "nri-socket", "nri-fail-closed", "decision-key-file", "moves", "rebalance"}
	k.standaloneOnly = []string{"config"}
}

// checkMode refuses flags of the other mode, so that a flag never silently
// does nothing.
func (k *kubeFlags) checkMode(f *pflag.FlagSet, standalone bool) error {
	switch {
	case standalone && k.node != "":
		return usagef("give either --standalone or --node-name, not both")
	case !standalone && k.node == "":
		return usagef("give --standalone (workloads of a HostConfig) or --node-name NODE (the pods of a Kubernetes node)")
	}
	wrong := k.kubeOnly
	if !standalone {
		wrong = k.standaloneOnly
	}
	for _, name := range wrong {
		if f.Changed(name) {
			mode := "--node-name"
			if standalone {
				mode = "--standalone"
			}
			return usagef("--%s does not apply with %s", name, mode)
		}
	}
	return nil
}

// run runs the agent on the node's pods until ctx ends.
func (k *kubeFlags) run(ctx context.Context, o agent.Options) error {
	driver, err := podcgroup.ParseDriver(k.driver)
	if err != nil {
		return usageError{fmt.Errorf("--cgroup-driver: %w", err)}
	}
	var root podcgroup.Root
	if k.kubeletRoot != "auto" {
		if root, err = podcgroup.ParseRoot(k.kubeletRoot); err != nil {
			return usageError{fmt.Errorf("--kubelet-cgroup-root: %w", err)}
		}
	} else {
		root = findKubeletRoot(o)
	}
	reserved, err := topology.ParseCPUList(k.reserved)
	if err != nil {
		return usagef("--reserved-cpus: %v", err)
	}
	if k.rebalance && !k.moves {
		return usagef("--rebalance needs --moves: rebalancing moves pods")
	}
	if k.kubeletConfig != "" && k.kubeletDir == "" {
		return usagef("--kubelet-config needs --kubelet-dir")
	}
	o.Kubelet = kubelet.Paths{Dir: k.kubeletDir, Config: k.kubeletConfig}
	cfg, err := k.restConfig()
	if err != nil {
		return err
	}
	o.NRI = k.nri
	err = runKube(ctx, o, nodeagent.RunOptions{Config: cfg, NRTMinInterval: k.nrtInterval, NRTHeartbeat: heartbeatOption(k.nrtHeartbeat), NoNRT: k.noNRT,
		Source: nodeagent.SourceOptions{NodeName: k.node, ConfigNamespace: k.configNS, ResourceQoSConfigMap: k.resQoSCM,
			PodQoSConfigMap: k.podQoSCM, CgroupDriver: driver, KubeletCgroupRoot: root, Reserved: reserved,
			DecisionKeyFile: k.decisionKeyFile, Moves: k.moves, Rebalance: k.rebalance,
			PodResourcesSocket: podResourcesSocket(k.kubeletDir)}})
	if err != nil || k.ownerDaemonSet == "" || o.DryRun {
		return err
	}
	// Stopped cleanly: if by an uninstall, put the node back (uninstall.go).
	return k.uninstallNode(o, cfg, o.Out)
}

// podResourcesSocket is the kubelet's PodResources socket under its root
// directory; none without one.
func podResourcesSocket(kubeletDir string) string {
	if kubeletDir == "" {
		return ""
	}
	return podresources.SocketPath(kubeletDir)
}

// findKubeletRoot finds the kubelet's cgroupRoot from the cgroups it made
// (on v1 in the cpuset hierarchy, as the agent looks for pods), and says
// what it found. Nothing found is the top, where the agent then reports the
// missing kubepods tree.
func findKubeletRoot(o agent.Options) podcgroup.Root {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	h, err := cgroup.Open(o.CgroupRoot, o.CgroupVersion)
	if err != nil {
		return nil // the agent reports it when it opens the hierarchy
	}
	exists := func(rel string) bool { return h.Exists(cgroup.CPUSet, rel) }
	children := func(rel string) ([]string, error) { return h.Children(cgroup.CPUSet, rel) }
	root, found, ok := podcgroup.FindRoot(exists, children)
	switch {
	case ok:
		log.Info("kubelet cgroup root found", "root", root.String(), "candidates", found)
	case len(found) > 1:
		log.Warn("several cgroups hold a kubelet's kubepods tree; using the top: give --kubelet-cgroup-root", "candidates", found)
	default:
		log.Warn("no kubepods or kubepods.slice under the cgroup root or one level down (the kubelet has not started?); using the top")
	}
	return root
}

// restConfig reaches the apiserver from --kubeconfig or in-cluster; its
// typed clients speak protobuf (nodeagent.ProtobufConfig), those of the agent
// and of `locus uninstall` and `remove-agents` alike.
func (k *kubeFlags) restConfig() (*rest.Config, error) {
	if k.kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", k.kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", k.kubeconfig, err)
		}
		return nodeagent.ProtobufConfig(cfg), nil
	}
	cfg, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		return nil, usagef("not running in a pod of the cluster: give --kubeconfig")
	}
	if err != nil {
		return nil, err
	}
	return nodeagent.ProtobufConfig(cfg), nil
}

// heartbeatOption maps the flag (0: off) onto nodeagent.RunOptions (0: the
// default, negative: off).
func heartbeatOption(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// runKube runs the agent on the source of Kubernetes mode (pkg/kube/nodeagent)
// until ctx ends, or once with o.Once or o.DryRun.
func runKube(ctx context.Context, o agent.Options, k nodeagent.RunOptions) error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	k.Logger, k.DryRun, k.Once = o.Logger, o.DryRun, o.Once
	if k.StateDir = o.StateDir; k.StateDir == "" {
		k.StateDir = agent.DefaultStateDir
	}
	return nodeagent.Run(ctx, k, func(src *nodeagent.Source) error { return agent.RunOn(ctx, o, src) })
}
