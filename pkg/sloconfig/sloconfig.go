// Package sloconfig owns the node's SLO configuration: the keys of
// ConfigMap ack-slo-config (resource-qos-config, cpu-burst-config) and the
// namespace lists of ack-slo-pod-config (memory-qos), as ack-koordinator's
// users write them, and the standalone HostConfig's resourceQOSConfig and
// cpuBurstConfig, which are the same documents. Each is decoded once, when
// it arrives, into the typed values the pure cores take (memqos.Config,
// cpuqos.Config, cpuburst.Config, Locality), every error naming the field
// path and the value; Doc.ForNode gives one node's settings. The sections a
// pod's annotation carries (memoryQOS, cpuBurst, memoryLocality) are read
// by the same code, for pkg/workload, which owns the annotation keys.
// Nothing here does I/O.
package sloconfig

import (
	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/memqos"
)

// The ConfigMap keys, exactly as written.
const (
	ConfigKeyResourceQoS = "resource-qos-config" // in kube-system/ack-slo-config
	ConfigKeyCPUBurst    = "cpu-burst-config"    // in kube-system/ack-slo-config
	ConfigKeyNamespaces  = "memory-qos"          // in kube-system/ack-slo-pod-config
)

// MaxValueBytes bounds one ConfigMap value (or HostConfig section) before
// it is decoded: the API server stores at most 1 MiB in a whole ConfigMap,
// so no value a cluster can hold is refused.
const MaxValueBytes = 1 << 20

// Doc is the node's SLO configuration, decoded: every key as written for
// the whole cluster, the nodeStrategies entries of each included.
type Doc struct {
	ResourceQoS ResourceQoS
	CPUBurst    CPUBurst
	Namespaces  memqos.NamespaceConfig
}

// Node is the configuration in force on one node.
type Node struct {
	MemQoS memqos.Config
	CPUQoS cpuqos.Config
	// Locality holds the memoryLocality sections, by class key (lsClass,
	// beClass, ...).
	Locality map[string]Locality
	// Strategy names the nodeStrategies entry of resource-qos-config in
	// force (its name, or "nodeStrategies[i]"); "" for none.
	Strategy   string
	CPUBurst   cpuburst.NodeConfig
	Namespaces memqos.NamespaceConfig
}

// ForNode is the configuration in force on a node with these labels: in
// each key, the first nodeStrategies entry that selects them, merged over
// clusterStrategy, or clusterStrategy alone. A standalone host has no
// labels: only an entry whose selector matches an empty set applies there.
func (d Doc) ForNode(labels map[string]string) Node {
	s, name := d.ResourceQoS.ForNode(labels)
	return Node{MemQoS: s.MemQoS, CPUQoS: s.CPUQoS, Locality: s.Locality, Strategy: name,
		CPUBurst: d.CPUBurst.ForNode(labels), Namespaces: d.Namespaces}
}
