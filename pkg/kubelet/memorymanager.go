package kubelet

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/locus-project/locus/pkg/topology"
)

// MemoryManagerFile is the memory manager's checkpoint in the kubelet's
// root directory.
const MemoryManagerFile = "memory_manager_state"

// The kubelet's memorymanager/state types, with their field names, order
// and types, for the checksum.
type memCheckpoint struct {
	PolicyName   string         `json:"policyName"`
	MachineState memNodeMap     `json:"machineState"`
	Entries      memAssignments `json:"entries,omitempty"`
	Checksum     checksumValue  `json:"checksum"`
}

type memNodeMap map[int]*memNodeState

type memNodeState struct {
	NumberOfAssignments int                           `json:"numberOfAssignments"`
	MemoryMap           map[resourceName]*memoryTable `json:"memoryMap"`
	Cells               []int                         `json:"cells"`
}

type memoryTable struct {
	TotalMemSize   uint64 `json:"total"`
	SystemReserved uint64 `json:"systemReserved"`
	Allocatable    uint64 `json:"allocatable"`
	Reserved       uint64 `json:"reserved"`
	Free           uint64 `json:"free"`
}

type memAssignments map[string]map[string][]memBlock

type memBlock struct {
	NUMAAffinity []int        `json:"numaAffinity"`
	Type         resourceName `json:"type"`
	Size         uint64       `json:"size"`
}

// resourceName is k8s.io/api/core/v1.ResourceName.
type resourceName string

func init() {
	registerSpewName(memCheckpoint{}, "state.MemoryManagerCheckpoint")
	registerSpewName(memNodeMap{}, "state.NUMANodeMap")
	registerSpewName(memNodeState{}, "state.NUMANodeState")
	registerSpewName(memoryTable{}, "state.MemoryTable")
	registerSpewName(memAssignments{}, "state.ContainerMemoryAssignments")
	registerSpewName(memBlock{}, "state.Block")
	registerSpewName(resourceName(""), "v1.ResourceName")
}

// MemoryManager is what the memory manager's checkpoint says.
type MemoryManager struct {
	Policy string `json:"policy"` // "None" or "Static"
	// Assignments are the memory blocks of each container, by pod UID and
	// container name: a resource (memory, hugepages-*), a size and the
	// NUMA nodes it was given on.
	Assignments map[string]map[string][]Block `json:"assignments,omitempty"`
	// Nodes are the NUMA nodes the checkpoint's machine state covers.
	Nodes []int `json:"nodes,omitempty"`
	// SystemReserved is, by NUMA node, the memory the kubelet keeps for
	// the system and itself there (its reservedMemory), as its machine
	// state says.
	SystemReserved map[int]uint64 `json:"systemReserved,omitempty"`
	// Assigned is, by NUMA node and resource (memory, hugepages-2Mi, ...),
	// the bytes the memory manager's assignments hold there, as its
	// machine state counts them; only what is not zero.
	Assigned map[int]map[string]uint64 `json:"assigned,omitempty"`
}

// maxBlockBytes bounds a size of the checkpoint: 1 PiB, beyond any
// machine, so that sums of them cannot overflow.
const maxBlockBytes = 1 << 50

// Block is one memory assignment of a container.
type Block struct {
	Resource string `json:"resource"`
	Bytes    uint64 `json:"bytes"`
	Nodes    []int  `json:"nodes"`
}

// ParseMemoryManager reads a memory_manager_state file as the kubelet does,
// its checksum verified (the memory manager accepts no zero checksum).
func ParseMemoryManager(raw []byte) (MemoryManager, error) {
	if len(raw) > MaxFileBytes {
		return MemoryManager{}, fmt.Errorf("%d bytes, more than %d", len(raw), MaxFileBytes)
	}
	if err := checkDepth(raw, 7); err != nil {
		return MemoryManager{}, err
	}
	cp := memCheckpoint{Entries: memAssignments{}, MachineState: memNodeMap{}}
	if err := json.Unmarshal(raw, &cp); err != nil {
		return MemoryManager{}, fmt.Errorf("not a memory manager checkpoint: %v", shortErr(err))
	}
	// Sizes first: the checksum walks the whole structure.
	if err := cp.bounded(); err != nil {
		return MemoryManager{}, err
	}
	stored := uint64(cp.Checksum)
	if err := verifyChecksum(stored, func() uint64 { c := cp; c.Checksum = 0; return checksum(&c) }, false); err != nil {
		return MemoryManager{}, err
	}
	out := MemoryManager{Policy: cp.PolicyName, Assignments: map[string]map[string][]Block{}}
	for id, st := range cp.MachineState {
		out.Nodes = append(out.Nodes, id)
		out.addAssigned(id, st)
		if st == nil || st.MemoryMap["memory"] == nil || st.MemoryMap["memory"].SystemReserved == 0 {
			continue
		}
		if out.SystemReserved == nil {
			out.SystemReserved = map[int]uint64{}
		}
		out.SystemReserved[id] = st.MemoryMap["memory"].SystemReserved
	}
	sort.Ints(out.Nodes)
	for uid, cs := range cp.Entries {
		out.Assignments[uid] = map[string][]Block{}
		for name, blocks := range cs {
			for _, b := range blocks {
				out.Assignments[uid][name] = append(out.Assignments[uid][name],
					Block{Resource: string(b.Type), Bytes: b.Size, Nodes: append([]int{}, b.NUMAAffinity...)})
			}
		}
	}
	return out, nil
}

// addAssigned records what a node's machine state says is assigned there.
func (m *MemoryManager) addAssigned(id int, st *memNodeState) {
	if st == nil {
		return
	}
	for res, t := range st.MemoryMap {
		if t == nil || t.Reserved == 0 {
			continue
		}
		if m.Assigned == nil {
			m.Assigned = map[int]map[string]uint64{}
		}
		if m.Assigned[id] == nil {
			m.Assigned[id] = map[string]uint64{}
		}
		m.Assigned[id][string(res)] = t.Reserved
	}
}

// bounded checks every count and id of the checkpoint, naming the field.
func (cp memCheckpoint) bounded() error {
	if len(cp.PolicyName) > maxPolicyNameLen {
		return fmt.Errorf("policyName: %s is longer than %d bytes", topology.Quote(cp.PolicyName), maxPolicyNameLen)
	}
	if len(cp.MachineState) > MaxNUMANodes {
		return fmt.Errorf("machineState: %d NUMA nodes, more than %d", len(cp.MachineState), MaxNUMANodes)
	}
	for id, st := range cp.MachineState {
		field := fmt.Sprintf("machineState[%d]", id)
		if id < 0 || id > topology.MaxNodeID {
			return fmt.Errorf("%s: NUMA node id out of range 0-%d", field, topology.MaxNodeID)
		}
		if st == nil {
			continue
		}
		if len(st.MemoryMap) > 64 {
			return fmt.Errorf("%s.memoryMap: %d resources, more than 64", field, len(st.MemoryMap))
		}
		for res, t := range st.MemoryMap {
			if len(res) > maxNameLen {
				return fmt.Errorf("%s.memoryMap: a resource name longer than %d bytes", field, maxNameLen)
			}
			if t != nil && (t.SystemReserved > maxBlockBytes || t.Reserved > maxBlockBytes) {
				return fmt.Errorf("%s.memoryMap[%s]: systemReserved %d, reserved %d: more than %d bytes", field,
					topology.Quote(string(res)), t.SystemReserved, t.Reserved, uint64(maxBlockBytes))
			}
		}
		if err := nodeIDs(field+".cells", st.Cells); err != nil {
			return err
		}
	}
	if len(cp.Entries) > MaxPods {
		return fmt.Errorf("entries: %d pods, more than %d", len(cp.Entries), MaxPods)
	}
	for uid, cs := range cp.Entries {
		field := "entries[" + topology.Quote(uid) + "]"
		if err := checkName(field, uid); err != nil {
			return err
		}
		if len(cs) > MaxContainers {
			return fmt.Errorf("%s: %d containers, more than %d", field, len(cs), MaxContainers)
		}
		for name, blocks := range cs {
			cf := field + "[" + topology.Quote(name) + "]"
			if err := checkName(cf, name); err != nil {
				return err
			}
			if len(blocks) > MaxBlocks {
				return fmt.Errorf("%s: %d blocks, more than %d", cf, len(blocks), MaxBlocks)
			}
			for i, b := range blocks {
				if len(b.Type) > maxNameLen {
					return fmt.Errorf("%s[%d].type: longer than %d bytes", cf, i, maxNameLen)
				}
				if b.Size > maxBlockBytes {
					return fmt.Errorf("%s[%d].size: %d bytes, more than %d", cf, i, b.Size, uint64(maxBlockBytes))
				}
				if err := nodeIDs(fmt.Sprintf("%s[%d].numaAffinity", cf, i), b.NUMAAffinity); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func nodeIDs(field string, ids []int) error {
	if len(ids) > MaxNUMANodes {
		return fmt.Errorf("%s: %d nodes, more than %d", field, len(ids), MaxNUMANodes)
	}
	for _, id := range ids {
		if id < 0 || id > topology.MaxNodeID {
			return fmt.Errorf("%s: NUMA node %d out of range 0-%d", field, id, topology.MaxNodeID)
		}
	}
	return nil
}
