// Package core is the pure decision core of Locus's topology-aware scheduler
// plugin: the CPU state of every node (what its NodeResourceTopology reports,
// the decisions on the pods bound to it, and the scheduler's own assumed
// allocations), where a pod's CPUs would go on a node (pkg/cpualloc, the same
// allocator the node agent runs), and how good that is. No I/O, no clocks:
// the framework adapter in pkg/scheduler/plugin feeds it from informers.
package core

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// machine is one kind of machine: its topology and the allocator indexed on
// it. Nodes of the same kind share one (a cluster of 1000 identical nodes
// indexes its topology once).
type machine struct {
	key   string // the fingerprint it is shared under
	topo  *topology.Topology
	alloc *cpualloc.Allocator
	refs  int
	empty map[string]*memo // by reserved CPUs: the placements on an empty node
	// reserved are the reserved CPU sets its nodes' reports name, each
	// once (internReserved), by their list.
	reserved map[string]cpuset.CPUSet
	// siblings are each CPU's core's CPUs (sharesACore).
	siblings map[int][]int
}

// newMachine builds and indexes a kind of machine not seen before.
func newMachine(key string, build func() (*topology.Topology, error)) (*machine, error) {
	topo, err := build()
	if err != nil {
		return nil, err
	}
	alloc, err := cpualloc.NewAllocator(topo)
	if err != nil {
		return nil, err
	}
	return &machine{key: key, topo: topo, alloc: alloc, siblings: siblingsOf(topo)}, nil
}

// emptyMemo is the memo the views of this machine's empty nodes with
// these reserved CPUs share: a fresh cluster of a thousand identical
// nodes places each request once, not once per node. The cluster's lock
// guards it.
func (m *machine) emptyMemo(reserved cpuset.CPUSet) *memo {
	key := reserved.String()
	if m.empty == nil {
		m.empty = map[string]*memo{}
	}
	if e := m.empty[key]; e != nil {
		return e
	}
	e := &memo{}
	m.empty[key] = e
	return e
}

// internReserved is the set equal to reserved that another node of this
// machine already holds, or reserved, kept for the next: nodes of one kind
// reserve the same CPUs, and each report kept a set (a map) of its own,
// about 160 bytes a node. The cluster's lock guards it.
func (m *machine) internReserved(reserved cpuset.CPUSet) cpuset.CPUSet {
	key := reserved.String()
	if s, ok := m.reserved[key]; ok {
		return s
	}
	if m.reserved == nil {
		m.reserved = map[string]cpuset.CPUSet{}
	}
	m.reserved[key] = reserved
	return reserved
}

// report is a node's NodeResourceTopology as read: its machine, reserved
// CPUs and who holds which CPUs, or why it cannot be used.
type report struct {
	machine   *machine
	reserved  cpuset.CPUSet
	holdings  map[string]workload.Assignment // by namespace/pod
	heartbeat time.Time                      // zero: the report has none
	err       *Unfit
	// free is, by NUMA node id, the memory and huge pages the report
	// says are available to pinned pods; nil when it lists no memory
	// (memory is then not accounted on the node, as before it was).
	free map[int]cpualloc.Memory
	// whole says free is every zone's capacity: the node's empty views
	// place memory as every other such node of its machine does.
	whole bool
	// movable is, by NUMA node id, how many of its CPUs pods that may move
	// hold (nrt.AttributeMovableCPUs); nil for none.
	movable map[int]int
	// devices is where the node's devices hang off.
	devices deviceZones
}

// readNRT reads what the node agent publishes (see pkg/kube/nrt): the zones
// give the NUMA nodes, their distances and memory; the annotation
// locus.io/cpu-topology the CPUs, reserved and isolated CPUs and holdings.
// The machine comes back as its fingerprint and a way to build it, wanted
// only for a kind of machine not seen yet.
func readNRT(obj *nrt.Object) (build func() (*topology.Topology, error), key string, r report, err error) {
	return readNRTWith(obj, nil)
}

// readNRTWith is readNRT with the texts read before (nil: none).
func readNRTWith(obj *nrt.Object, texts *reportTexts) (build func() (*topology.Topology, error), key string, r report, err error) {
	raw, ok := obj.Metadata.Annotations[nrt.AnnotationCPUTopology]
	if !ok {
		return nil, "", report{}, fmt.Errorf("it has no annotation %s: it was not published by the locus agent", nrt.AnnotationCPUTopology)
	}
	ct, cpus, err := texts.read(raw)
	if err != nil {
		return nil, "", report{}, fmt.Errorf("annotation %s: %w", nrt.AnnotationCPUTopology, err)
	}
	if err := checkSizes(ct, obj.Zones); err != nil {
		return nil, "", report{}, err
	}
	build = func() (*topology.Topology, error) { return buildTopology(ct, obj.Zones) }
	reserved, err := topology.ParseCPUList(ct.Reserved)
	if err != nil {
		return nil, "", report{}, fmt.Errorf("reserved: %v", err)
	}
	// The kubelet's exclusive CPUs are taken for as long as it holds them:
	// the scheduler routes around them as around reserved ones.
	kubelet, err := topology.ParseCPUList(ct.Kubelet)
	if err != nil {
		return nil, "", report{}, fmt.Errorf("kubelet: %v", err)
	}
	reserved = reserved.Union(kubelet)
	r = report{reserved: reserved}
	if n := len(ct.Exclusive) + len(ct.StaticBurst); n > 0 {
		// Most reports list no holding: no map for them (an empty one
		// was 48 bytes on every node). checkSizes bounded n.
		r.holdings = make(map[string]workload.Assignment, n)
	}
	if v, ok := obj.Metadata.Annotations[nrt.AnnotationHeartbeat]; ok {
		if r.heartbeat, err = time.Parse(time.RFC3339, v); err != nil {
			return nil, "", report{}, fmt.Errorf("annotation %s: %q is not an RFC 3339 time", nrt.AnnotationHeartbeat, v)
		}
	}
	if err := readHoldings(ct, r.holdings); err != nil {
		return nil, "", report{}, err
	}
	if r.free, r.whole, err = readFree(obj.Zones); err != nil {
		return nil, "", report{}, err
	}
	if r.movable, err = readMovable(ct, obj.Zones); err != nil {
		return nil, "", report{}, err
	}
	// Devices that cannot be read leave the node usable: the pods holding
	// devices score it as one where their nodes are unknown.
	r.devices = readDevices(obj.Zones)
	if key, err = fingerprint(ct, cpus, obj.Zones); err != nil {
		return nil, "", report{}, err
	}
	return build, key, r, nil
}

// placementTopology is the annotation as far as placing pods needs it: the
// containers' parts of container-scope pods are not, so their key decodes
// to nothing, costs nothing to read, and a malformed one does not make the
// report unreadable.
type placementTopology struct {
	nrt.CPUTopology
	// CPUs is the list's text, parsed through reportTexts: nodes of one
	// machine publish the same list.
	CPUs       json.RawMessage `json:"cpus"`
	Containers skipped         `json:"containers"`
}

// skipped is a JSON value read and dropped.
type skipped struct{}

func (*skipped) UnmarshalJSON([]byte) error { return nil }

// buildTopology makes the machine model the allocator needs: CPUs from the
// annotation, one NUMA node per zone node-<id> with its distances (costs) and
// memory capacity.
func buildTopology(ct nrt.CPUTopology, zones []nrt.Zone) (*topology.Topology, error) {
	t := &topology.Topology{CPUs: slices.Clone(ct.CPUs)}
	slices.SortFunc(t.CPUs, func(a, b topology.CPU) int { return a.ID - b.ID })
	var err error
	if t.Isolated, err = topology.ParseCPUList(ct.Isolated); err != nil {
		return nil, fmt.Errorf("isolated: %v", err)
	}
	type zone struct {
		id int
		z  nrt.Zone
	}
	var zs []zone
	for _, z := range zones {
		id, ok := zoneID(z)
		if !ok {
			continue
		}
		zs = append(zs, zone{id, z})
	}
	if len(zs) == 0 {
		return nil, fmt.Errorf("it has no zones of type %s named node-<id>", nrt.ZoneType)
	}
	slices.SortFunc(zs, func(a, b zone) int { return a.id - b.id })
	for _, z := range zs {
		n := topology.NUMANode{ID: z.id, CPUs: t.CPUsWhere(func(c topology.CPU) bool { return c.NUMA == z.id })}
		mem, err := readZoneMemory(z.z)
		if err != nil {
			return nil, err
		}
		n.MemoryTotal, n.HugePages = mem.capacity.Bytes, hugePagesOf(mem.capacity)
		for _, other := range zs {
			d := int64(-1)
			for _, c := range z.z.Costs {
				if c.Name == other.z.Name {
					d = c.Value
				}
			}
			if d < 0 {
				return nil, fmt.Errorf("zone %s has no cost to zone %s", z.z.Name, other.z.Name)
			}
			n.Distances = append(n.Distances, int(d))
		}
		t.Nodes = append(t.Nodes, n)
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	return t, nil
}

// checkSizes bounds the lists of a report before anything walks them:
// buildTopology compares every zone with every other through their costs,
// so a report with a million zones would hold the scheduler for hours.
func checkSizes(ct nrt.CPUTopology, zones []nrt.Zone) error {
	if n := len(ct.CPUs); n > topology.MaxCPUID+1 {
		return fmt.Errorf("cpus: %d entries, more than %d", n, topology.MaxCPUID+1)
	}
	for _, m := range []int{len(ct.Exclusive), len(ct.StaticBurst), len(ct.BurstMilli)} {
		if m > maxHoldings {
			return fmt.Errorf("%d holdings, more than %d", m, maxHoldings)
		}
	}
	if n := len(zones); n > topology.MaxNodeID+1 {
		return fmt.Errorf("zones: %d, more than %d", n, topology.MaxNodeID+1)
	}
	for _, z := range zones {
		if n := len(z.Costs); n > topology.MaxNodeID+1 {
			return fmt.Errorf("zone %s: %d costs, more than %d", topology.Quote(z.Name), n, topology.MaxNodeID+1)
		}
		if n := len(z.Resources); n > maxZoneResources {
			return fmt.Errorf("zone %s: %d resources, more than %d", topology.Quote(z.Name), n, maxZoneResources)
		}
	}
	return nil
}

// maxHoldings bounds the pods a report may list as holding CPUs: at most one
// per CPU.
const maxHoldings = topology.MaxCPUID + 1

func zoneID(z nrt.Zone) (int, bool) {
	s, ok := strings.CutPrefix(z.Name, "node-")
	if !ok || z.Type != nrt.ZoneType {
		return 0, false
	}
	id, err := strconv.Atoi(s)
	return id, err == nil && id >= 0 && id <= topology.MaxNodeID
}

// fingerprint identifies a machine: every input of buildTopology, and
// nothing that changes with allocations (available counts, holdings).
// cpus is the CPU list's text as the report has it: the same list
// written otherwise makes another key, and only shares less.
func fingerprint(ct nrt.CPUTopology, cpus string, zones []nrt.Zone) (string, error) {
	type zoneKey struct {
		Name      string
		Type      string
		Costs     []nrt.Cost
		Memory    string
		HugePages []string `json:",omitempty"`
	}
	k := struct {
		Isolated string
		Zones    []zoneKey
	}{Isolated: ct.Isolated}
	for _, z := range zones {
		zk := zoneKey{Name: z.Name, Type: z.Type, Costs: z.Costs}
		for _, r := range z.Resources {
			switch r.Name {
			case "memory":
				zk.Memory = r.Capacity.String()
			case nrt.ResourceHugePages2Mi, nrt.ResourceHugePages1Gi:
				zk.HugePages = append(zk.HugePages, r.Name+"="+r.Capacity.String())
			}
		}
		k.Zones = append(k.Zones, zk)
	}
	raw, err := json.Marshal(k)
	// cpus is one JSON value, as the decoder cut it out, so the newline
	// after it ends it: the two parts cannot run together.
	return cpus + "\n" + string(raw), err
}

// maxRequestMilli bounds a static-burst holding's request: every CPU id a
// list may name, a whole CPU each.
const maxRequestMilli = 1000 * (topology.MaxCPUID + 1)
