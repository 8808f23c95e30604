package kubelet

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// CPUManagerFile is the CPU manager's checkpoint in the kubelet's root
// directory.
const CPUManagerFile = "cpu_manager_state"

// Bounds on what a checkpoint may hold. A node runs at most a few hundred
// pods (the kubelet's maxPods defaults to 110); these leave a wide margin
// and keep a hostile file from costing more than a few megabytes.
const (
	MaxFileBytes     = 4 << 20
	MaxPods          = 4096
	MaxContainers    = 256 // per pod
	MaxBlocks        = 64  // memory blocks per container
	MaxNUMANodes     = topology.MaxNodeID + 1
	maxNameLen       = 253 // a pod UID or a container name
	maxPolicyNameLen = 64
	// MaxEntries bounds a checkpoint's containers in all, whatever their
	// pods: sixteen a pod of MaxPods.
	MaxEntries = 16 * MaxPods
	// MaxCheckpointCPUs bounds the CPUs a CPU manager checkpoint's lists
	// name in all, counted before any is expanded: the default set and
	// the containers' exclusive sets divide the machine's CPUs between
	// them (the kubelet refuses a state whose union is not the machine's
	// CPUs, or whose exclusive sets meet the default one), and only init
	// containers' sets name a CPU again (an app container reuses them):
	// four times the largest machine leaves room for three init
	// containers' sets on every CPU, at ~1.2 MiB of sets. Before the
	// bound, 24 KB of "0-8191" lists kept 423 MiB.
	MaxCheckpointCPUs = 4 * (topology.MaxCPUID + 1)
)

// cpuCheckpointV2 and cpuCheckpointV1 are the kubelet's
// state.CPUManagerCheckpoint (v2, entries by pod UID and container name) and
// state.CPUManagerCheckpointV1 (entries by container ID): the same field
// names, order and types, since the checksum prints them.
type cpuCheckpointV2 struct {
	PolicyName    string                       `json:"policyName"`
	DefaultCPUSet string                       `json:"defaultCpuSet"`
	Entries       map[string]map[string]string `json:"entries,omitempty"`
	Checksum      checksumValue                `json:"checksum"`
}

type cpuCheckpointV1 struct {
	PolicyName    string            `json:"policyName"`
	DefaultCPUSet string            `json:"defaultCpuSet"`
	Entries       map[string]string `json:"entries,omitempty"`
	Checksum      checksumValue     `json:"checksum"`
}

// checksumValue is the kubelet's checksum.Checksum.
type checksumValue uint64

func init() {
	registerSpewName(cpuCheckpointV2{}, "state.CPUManagerCheckpoint")
	// The kubelet replaces the v1 type's name by the v2 one before hashing.
	registerSpewName(cpuCheckpointV1{}, "state.CPUManagerCheckpoint")
	registerSpewName(checksumValue(0), "checksum.Checksum")
}

// CPUManager is what the CPU manager's checkpoint says.
type CPUManager struct {
	Policy string `json:"policy"` // "none" or "static"
	// Default is the kubelet's shared pool: every CPU not given exclusively
	// (the reserved CPUs are in it).
	Default cpuset.CPUSet `json:"-"`
	// Assignments are the exclusive CPUs of each container, by pod UID and
	// container name. A v1 checkpoint names containers by ID only: those
	// are under ByContainerID.
	Assignments   map[string]map[string]cpuset.CPUSet `json:"-"`
	ByContainerID map[string]cpuset.CPUSet            `json:"-"`
	Version       int                                 `json:"version"` // 1 or 2
}

// Exclusive is the union of every CPU the kubelet gave a container alone.
func (c CPUManager) Exclusive() cpuset.CPUSet {
	out := cpuset.New()
	for _, cs := range c.Assignments {
		for _, set := range cs {
			out = out.Union(set)
		}
	}
	for _, set := range c.ByContainerID {
		out = out.Union(set)
	}
	return out
}

// All is every CPU the checkpoint names.
func (c CPUManager) All() cpuset.CPUSet { return c.Default.Union(c.Exclusive()) }

// ParseCPUManager reads a cpu_manager_state file as the kubelet does: as a
// v1 checkpoint whose checksum holds, else as a v2 one whose checksum holds
// (a checksum of 0 is accepted unchecked, as kubelet v1.33's
// VerifyChecksum accepts it for both versions, "for compatibility with old
// file backend"). Every CPU list is counted against MaxCheckpointCPUs
// before any is expanded (topology.CPUBudget).
func ParseCPUManager(raw []byte) (CPUManager, error) {
	if len(raw) > MaxFileBytes {
		return CPUManager{}, fmt.Errorf("%d bytes, more than %d", len(raw), MaxFileBytes)
	}
	if err := checkDepth(raw, 4); err != nil {
		return CPUManager{}, err
	}
	v1 := cpuCheckpointV1{Entries: map[string]string{}}
	var v1Err error
	if v1Err = json.Unmarshal(raw, &v1); v1Err == nil {
		if v1Err = v1.verify(); v1Err == nil {
			return fromV1(v1)
		}
	}
	v2 := cpuCheckpointV2{Entries: map[string]map[string]string{}}
	if err := json.Unmarshal(raw, &v2); err != nil {
		if _, isV1 := v1Err.(checksumError); isV1 {
			return CPUManager{}, v1Err // a v1 checkpoint whose checksum fails
		}
		return CPUManager{}, fmt.Errorf("not a CPU manager checkpoint: %v", shortErr(err))
	}
	if err := v2.verify(); err != nil {
		return CPUManager{}, err
	}
	return fromV2(v2)
}

func (cp cpuCheckpointV1) verify() error {
	return verifyChecksum(uint64(cp.Checksum), func() uint64 { cp.Checksum = 0; return checksum(&cp) }, true)
}

func (cp cpuCheckpointV2) verify() error {
	return verifyChecksum(uint64(cp.Checksum), func() uint64 { cp.Checksum = 0; return checksum(&cp) }, true)
}

// verifyChecksum compares a stored checksum with the computed one; zero is
// accepted when zeroOK (the kubelet's CPU manager accepts it, for files of
// its oldest backend).
func verifyChecksum(stored uint64, compute func() uint64, zeroOK bool) error {
	if stored == 0 && zeroOK {
		return nil
	}
	if got := compute(); got != stored {
		return checksumError{stored, got}
	}
	return nil
}

type checksumError struct{ stored, got uint64 }

func (e checksumError) Error() string {
	return fmt.Sprintf("checksum: the file says %d, its content hashes to %d (corrupt or written by hand)", e.stored, e.got)
}

func fromV1(cp cpuCheckpointV1) (CPUManager, error) {
	if len(cp.Entries) > MaxEntries {
		return CPUManager{}, fmt.Errorf("entries: %d containers, more than %d", len(cp.Entries), MaxEntries)
	}
	ids := slices.Sorted(maps.Keys(cp.Entries))
	budget := checkpointBudget()
	if err := header(budget, cp.PolicyName, cp.DefaultCPUSet); err != nil {
		return CPUManager{}, err
	}
	for _, id := range ids {
		if err := charge(budget, cp.Entries[id], "entries["+topology.Quote(id)+"]", id); err != nil {
			return CPUManager{}, err
		}
	}
	out := CPUManager{Version: 1, Policy: cp.PolicyName, Default: mustParse(cp.DefaultCPUSet), ByContainerID: make(map[string]cpuset.CPUSet, len(ids))}
	for _, id := range ids {
		out.ByContainerID[id] = mustParse(cp.Entries[id])
	}
	return out, nil
}

func fromV2(cp cpuCheckpointV2) (CPUManager, error) {
	if len(cp.Entries) > MaxPods {
		return CPUManager{}, fmt.Errorf("entries: %d pods, more than %d", len(cp.Entries), MaxPods)
	}
	budget := checkpointBudget()
	if err := header(budget, cp.PolicyName, cp.DefaultCPUSet); err != nil {
		return CPUManager{}, err
	}
	entries := 0
	uids := slices.Sorted(maps.Keys(cp.Entries))
	for _, uid := range uids {
		cs := cp.Entries[uid]
		field := "entries[" + topology.Quote(uid) + "]"
		if len(cs) > MaxContainers {
			return CPUManager{}, fmt.Errorf("%s: %d containers, more than %d", field, len(cs), MaxContainers)
		}
		if entries += len(cs); entries > MaxEntries {
			return CPUManager{}, fmt.Errorf("%s: more than %d containers in all", field, MaxEntries)
		}
		if err := checkName(field, uid); err != nil {
			return CPUManager{}, err
		}
		for _, name := range slices.Sorted(maps.Keys(cs)) {
			if err := charge(budget, cs[name], field+"["+topology.Quote(name)+"]", name); err != nil {
				return CPUManager{}, err
			}
		}
	}
	out := CPUManager{Version: 2, Policy: cp.PolicyName, Default: mustParse(cp.DefaultCPUSet),
		Assignments: make(map[string]map[string]cpuset.CPUSet, len(uids))}
	for _, uid := range uids {
		out.Assignments[uid] = make(map[string]cpuset.CPUSet, len(cp.Entries[uid]))
		for name, list := range cp.Entries[uid] {
			out.Assignments[uid][name] = mustParse(list)
		}
	}
	return out, nil
}

func checkName(field, name string) error {
	if name == "" || len(name) > maxNameLen {
		return fmt.Errorf("%s: the key must be 1 to %d bytes", field, maxNameLen)
	}
	return nil
}
