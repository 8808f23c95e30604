// Package nrt builds and publishes the NodeResourceTopology object
// (topology.node.k8s.io/v1alpha2) that tells a topology-aware scheduler what
// each NUMA node of this machine has and what is taken, plus, in the
// annotation locus.io/cpu-topology, what it needs to pick exact CPUs.
// Build is pure; Publisher is the thin shell that writes it.
package nrt

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/locus-project/locus/pkg/quantity"
	"github.com/locus-project/locus/pkg/topology"
)

// Where the objects live.
const (
	Group      = "topology.node.k8s.io"
	Version    = "v1alpha2"
	Kind       = "NodeResourceTopology"
	APIVersion = Group + "/" + Version
)

// GVR is the resource of NodeResourceTopology objects (cluster-scoped).
var GVR = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "noderesourcetopologies"}

// AnnotationCPUTopology holds CPUTopology as JSON.
const AnnotationCPUTopology = "locus.io/cpu-topology"

// AnnotationHeartbeat holds when the agent last wrote the object (RFC 3339,
// UTC). The agent rewrites it at least every heartbeat interval even when
// nothing changed, so a scheduler can tell a report whose agent stopped
// (the node's CPUs no longer follow it) from a quiet one.
const AnnotationHeartbeat = "locus.io/heartbeat"

// ZoneType is the type of the zones: one per NUMA node, named node-<id>.
const ZoneType = "Node"

// Object is the part of a NodeResourceTopology the agent owns. It encodes to
// exactly the JSON the CRD stores.
type Object struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Zones      []Zone   `json:"zones"`
}

// Metadata is the object's name and the annotation.
type Metadata struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Zone is one NUMA node.
type Zone struct {
	Name       string      `json:"name"`
	Type       string      `json:"type"`
	Costs      []Cost      `json:"costs,omitempty"`
	Attributes []Attribute `json:"attributes,omitempty"`
	Resources  []Resource  `json:"resources,omitempty"`
}

// Cost is the SLIT distance to another zone (to itself: the local distance).
type Cost struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
}

// Attribute is a named string.
type Attribute struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Resource is one resource of a zone.
type Resource struct {
	Name        string            `json:"name"`
	Capacity    resource.Quantity `json:"capacity"`
	Allocatable resource.Quantity `json:"allocatable"`
	Available   resource.Quantity `json:"available"`
}

// CPUTopology is the value of AnnotationCPUTopology: the machine's CPUs and
// who holds which, so that a scheduler can choose exact CPUs the way the
// node's own allocator would. CPU lists use the Linux list format.
type CPUTopology struct {
	// CPUs are the online CPUs: id, core, socket, die, numa, l3 (l3 is -1
	// when the machine reports none). Core and L3 ids are machine-wide.
	CPUs []topology.CPU `json:"cpus"`
	// Reserved CPUs are never given to a pod of its own; Isolated ones
	// (isolcpus) neither.
	Reserved string `json:"reserved"`
	Isolated string `json:"isolated"`
	// Kubelet are the CPUs the kubelet's static CPU manager gave containers
	// alone: taken, never given to a pod by Locus.
	Kubelet string `json:"kubelet,omitempty"`
	// Exclusive maps namespace/pod to the CPUs it holds alone.
	Exclusive map[string]string `json:"exclusive"`
	// Containers maps namespace/pod, for pods whose CPUs are divided among
	// their containers (locus.io/cpu-scope: container), to each container's
	// part; absent when no pod's are. A scheduler needs none of it to place
	// pods: it shows where each container runs.
	Containers map[string]map[string]string `json:"containers,omitempty"`
	// StaticBurst maps namespace/pod to its static-burst CPUs and CPU
	// request; such pods share CPUs while their summed requests per CPU
	// stay within one CPU.
	StaticBurst map[string]Burst `json:"staticBurst"`
	// BurstMilli is, per CPU id, the summed request share (millicores) of
	// the static-burst pods on it: a static-burst pod with request R on N
	// CPUs adds ceil(R/N) to each.
	BurstMilli map[string]int64 `json:"burstMilli"`
}

// Burst is one static-burst holding.
type Burst struct {
	CPUs         string `json:"cpus"`
	RequestMilli int64  `json:"requestMilli"`
}

// UnmarshalJSON reads a resource with its quantities through
// quantity.FromJSON: a report is text another node wrote, and an exponent
// such as "1e-99999999999" would keep apimachinery's own parser busy for
// good.
func (r *Resource) UnmarshalJSON(data []byte) error {
	var raw struct {
		Name                             string
		Capacity, Allocatable, Available json.RawMessage
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	out := Resource{Name: raw.Name}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  *resource.Quantity
	}{{"capacity", raw.Capacity, &out.Capacity}, {"allocatable", raw.Allocatable, &out.Allocatable}, {"available", raw.Available, &out.Available}} {
		if f.raw == nil {
			continue
		}
		q, err := quantity.FromJSON(f.raw)
		if err != nil {
			return fmt.Errorf("resource %.64q: %s: %v", raw.Name, f.name, err)
		}
		if q != nil {
			*f.dst = *q
		}
	}
	*r = out
	return nil
}
