package workload

import (
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
)

type assignmentJSON struct {
	CPUs         string          `json:"cpus"`
	Policy       cpualloc.Policy `json:"policy"`
	RequestMilli int64           `json:"requestMilli,omitempty"`
	Decided      string          `json:"decided,omitempty"`
	// MemNodes is absent in a checkpoint written before memory was
	// accounted: the CPUs' nodes then.
	MemNodes string      `json:"memNodes,omitempty"`
	Memory   *memoryJSON `json:"memory,omitempty"`
	// MemHeld's keys are node ids, read here so that a bad one's error
	// stays short.
	MemHeld map[string]memoryJSON `json:"memHeld,omitempty"`
	// Near is absent for a workload placed without devices.
	Near string `json:"near,omitempty"`
}

type memoryJSON struct {
	Bytes        uint64 `json:"bytes,omitempty"`
	HugePages2Mi uint64 `json:"hugepages2Mi,omitempty"`
	HugePages1Gi uint64 `json:"hugepages1Gi,omitempty"`
}

// MarshalJSON writes the CPU set in Linux list format.
func (a Assignment) MarshalJSON() ([]byte, error) {
	j := assignmentJSON{CPUs: a.CPUs.String(), Policy: a.Policy, RequestMilli: a.RequestMilli, Decided: a.Decided.String()}
	if len(a.MemNodes) > 0 {
		j.MemNodes = cpuset.New(a.MemNodes...).String()
	}
	if len(a.Near) > 0 {
		j.Near = cpuset.New(a.Near...).String()
	}
	if !a.Memory.IsZero() {
		j.Memory = &memoryJSON{a.Memory.Bytes, a.Memory.HugePages2Mi, a.Memory.HugePages1Gi}
	}
	for id, m := range a.MemHeld {
		if j.MemHeld == nil {
			j.MemHeld = map[string]memoryJSON{}
		}
		j.MemHeld[strconv.Itoa(id)] = memoryJSON{m.Bytes, m.HugePages2Mi, m.HugePages1Gi}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (a *Assignment) UnmarshalJSON(b []byte) error {
	var j assignmentJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	cpus, err := topology.ParseCPUList(j.CPUs)
	if err != nil {
		return fmt.Errorf("assignment cpus: %w", err)
	}
	*a = Assignment{CPUs: cpus, Policy: j.Policy, RequestMilli: j.RequestMilli}
	if j.Decided != "" {
		if a.Decided, err = topology.ParseCPUList(j.Decided); err != nil {
			return fmt.Errorf("assignment decided: %w", err)
		}
	}
	if j.MemNodes != "" {
		nodes, err := topology.ParseNodeList(j.MemNodes)
		if err != nil {
			return fmt.Errorf("assignment memNodes: %w", err)
		}
		a.MemNodes = nodes
	}
	if j.Near != "" {
		if a.Near, err = topology.ParseNodeList(j.Near); err != nil {
			return fmt.Errorf("assignment near: %w", err)
		}
	}
	if m := j.Memory; m != nil {
		if a.Memory, err = m.memory("memory"); err != nil {
			return err
		}
	}
	if len(j.MemHeld) > topology.MaxNodeID+1 {
		return fmt.Errorf("assignment memHeld: %d nodes, more than %d", len(j.MemHeld), topology.MaxNodeID+1)
	}
	for key, m := range j.MemHeld {
		id, err := strconv.Atoi(key)
		if err != nil || id < 0 || id > topology.MaxNodeID {
			return fmt.Errorf("assignment memHeld: node %s is not an id from 0 to %d", topology.Quote(key), topology.MaxNodeID)
		}
		if a.MemHeld == nil {
			a.MemHeld = map[int]cpualloc.Memory{}
		}
		if a.MemHeld[id], err = m.memory(fmt.Sprintf("memHeld[%d]", id)); err != nil {
			return err
		}
	}
	return nil
}

// memory is the amounts, each within MaxMemoryBytes.
func (m memoryJSON) memory(field string) (cpualloc.Memory, error) {
	if m.Bytes > MaxMemoryBytes || m.HugePages2Mi > MaxMemoryBytes || m.HugePages1Gi > MaxMemoryBytes {
		return cpualloc.Memory{}, fmt.Errorf("assignment %s: %+v: more than %d bytes of a kind", field, m, MaxMemoryBytes)
	}
	return cpualloc.Memory{Bytes: m.Bytes, HugePages2Mi: m.HugePages2Mi, HugePages1Gi: m.HugePages1Gi}, nil
}
