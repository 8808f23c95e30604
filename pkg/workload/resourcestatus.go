package workload

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
)

// ResourceStatus is a parsed resource-status annotation.
type ResourceStatus struct {
	CPUs      cpuset.CPUSet
	NUMANodes []int // nil when not given
	Policy    cpualloc.Policy
}

type resourceStatusJSON struct {
	CPUSet    *string         `json:"cpuset"`
	NUMANodes []int           `json:"numaNodes"`
	Policy    cpualloc.Policy `json:"policy"`
}

// ParseResourceStatus reads the annotation's value. Errors name the field.
func ParseResourceStatus(raw string) (ResourceStatus, error) {
	var j resourceStatusJSON
	if err := decodeOne(raw, &j, "a JSON object"); err != nil {
		return ResourceStatus{}, err
	}
	if j.CPUSet == nil || *j.CPUSet == "" {
		return ResourceStatus{}, fmt.Errorf("cpuset: missing or empty")
	}
	cpus, err := topology.ParseCPUList(*j.CPUSet)
	if err != nil {
		return ResourceStatus{}, fmt.Errorf("cpuset: %v", err)
	}
	if cpus.IsEmpty() { // blanks only: the check above saw text
		return ResourceStatus{}, fmt.Errorf("cpuset: missing or empty")
	}
	if len(j.NUMANodes) > topology.MaxNodeID+1 {
		return ResourceStatus{}, fmt.Errorf("numaNodes: %d nodes, more than the %d a machine can have", len(j.NUMANodes), topology.MaxNodeID+1)
	}
	for i, n := range j.NUMANodes {
		if n < 0 || n > topology.MaxNodeID {
			return ResourceStatus{}, fmt.Errorf("numaNodes[%d]: %d is not a node id (0-%d)", i, n, topology.MaxNodeID)
		}
	}
	p, err := ParsePolicy(string(j.Policy))
	if err != nil {
		return ResourceStatus{}, fmt.Errorf("policy: %v", err)
	}
	return ResourceStatus{CPUs: cpus, NUMANodes: j.NUMANodes, Policy: p}, nil
}

// Format writes the annotation's value, for the scheduler and for tests.
func (s ResourceStatus) Format() string {
	cs := s.CPUs.String()
	raw, _ := json.Marshal(resourceStatusJSON{CPUSet: &cs, NUMANodes: s.NUMANodes, Policy: s.Policy})
	return string(raw)
}

// decodeOne reads raw as exactly one JSON value into v; what names the
// value expected, in the error when raw is not one.
func decodeOne(raw string, v any, what string) error {
	dec := json.NewDecoder(strings.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not %s: %v", what, err)
	}
	if dec.More() {
		return fmt.Errorf("text after the JSON object")
	}
	return nil
}
