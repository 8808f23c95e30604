package topology

import (
	"encoding/json"
	"fmt"

	"github.com/locus-project/locus/pkg/boundedread"
)

// The JSON form is a contract other tools read and write (locus topology -o
// json, locus plan --topology). CPU sets use Linux list format; extra keys are
// ignored so the format can grow.

type topologyJSON struct {
	CPUs     []CPU        `json:"cpus"`
	Nodes    []nodeJSON   `json:"numaNodes"`
	Isolated string       `json:"isolated"`
	Devices  []deviceJSON `json:"devices,omitempty"`
}

type nodeJSON struct {
	ID          int         `json:"id"`
	CPUs        string      `json:"cpus"`
	MemoryTotal uint64      `json:"memoryTotalBytes"`
	MemoryFree  uint64      `json:"memoryFreeBytes"`
	HugePages   []HugePages `json:"hugePages,omitempty"`
	Distances   []int       `json:"distances"`
}

// MarshalJSON writes the topology in its JSON contract form.
func (t Topology) MarshalJSON() ([]byte, error) { return t.JSONHeld(nil) }

// JSONHeld is MarshalJSON with each device's heldBy: the workloads heldBy
// names for its address.
func (t Topology) JSONHeld(heldBy map[string][]string) ([]byte, error) {
	out := topologyJSON{CPUs: t.CPUs, Isolated: t.Isolated.String(), Nodes: make([]nodeJSON, len(t.Nodes)),
		Devices: devicesToJSON(t.Devices, heldBy)}
	if out.CPUs == nil {
		out.CPUs = []CPU{}
	}
	for i, n := range t.Nodes {
		d := n.Distances
		if d == nil {
			d = []int{}
		}
		out.Nodes[i] = nodeJSON{ID: n.ID, CPUs: n.CPUs.String(), MemoryTotal: n.MemoryTotal,
			MemoryFree: n.MemoryFree, HugePages: n.HugePages, Distances: d}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the JSON contract form and validates the result, so a
// decoded topology is always safe to hand to the allocator.
func (t *Topology) UnmarshalJSON(b []byte) error {
	var in topologyJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("topology json: %w", err)
	}
	isolated, err := ParseCPUList(in.Isolated)
	if err != nil {
		return fmt.Errorf("topology json: isolated: %w", err)
	}
	if err := checkCPUFields(in.CPUs); err != nil {
		return fmt.Errorf("topology json: %w", err)
	}
	out := Topology{CPUs: in.CPUs, Isolated: isolated, Nodes: make([]NUMANode, len(in.Nodes))}
	for i, n := range in.Nodes {
		cpus, err := ParseCPUList(n.CPUs)
		if err != nil {
			return fmt.Errorf("topology json: numaNodes[%d].cpus: %w", i, err)
		}
		out.Nodes[i] = NUMANode{ID: n.ID, CPUs: cpus, MemoryTotal: n.MemoryTotal,
			MemoryFree: n.MemoryFree, HugePages: n.HugePages, Distances: n.Distances}
	}
	if err := out.Validate(); err != nil {
		return fmt.Errorf("topology json: %w", err)
	}
	// Devices are read against the machine validated above.
	if out.Devices, err = devicesFromJSON(in.Devices, &out); err != nil {
		return fmt.Errorf("topology json: %w", err)
	}
	if err := out.checkDevices(); err != nil {
		return fmt.Errorf("topology json: %w", err)
	}
	*t = out
	return nil
}

// checkCPUFields rejects ids Validate does not look at but consumers index by.
func checkCPUFields(cpus []CPU) error {
	for i, c := range cpus {
		switch {
		case c.ID < 0:
			return fmt.Errorf("cpus[%d].id: %d is negative", i, c.ID)
		case c.Core < 0:
			return fmt.Errorf("cpus[%d].core: %d is negative", i, c.Core)
		case c.Socket < 0:
			return fmt.Errorf("cpus[%d].socket: %d is negative", i, c.Socket)
		case c.Die < 0:
			return fmt.Errorf("cpus[%d].die: %d is negative", i, c.Die)
		case c.L3 < -1:
			return fmt.Errorf("cpus[%d].l3: %d is below -1 (no L3)", i, c.L3)
		}
	}
	return nil
}

// MaxJSONFileBytes bounds LoadJSONFile: the JSON of a machine with 8192
// CPUs is under 1 MiB.
const MaxJSONFileBytes = 8 << 20

// LoadJSONFile reads a topology saved with `locus topology -o json`. Open and
// read errors are *fs.PathError, a file over MaxJSONFileBytes a
// *boundedread.TooLargeError; a file that is no topology wraps the decoder's
// or the checks' error with the path.
func LoadJSONFile(path string) (*Topology, error) {
	b, err := boundedread.File(path, MaxJSONFileBytes)
	if err != nil {
		return nil, err
	}
	t := &Topology{}
	if err := json.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
