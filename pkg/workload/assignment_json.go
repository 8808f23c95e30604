package workload

import (
	"encoding/json"
	"fmt"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
)

type assignmentJSON struct {
	CPUs         string          `json:"cpus"`
	Policy       cpualloc.Policy `json:"policy"`
	RequestMilli int64           `json:"requestMilli,omitempty"`
	Decided      string          `json:"decided,omitempty"`
}

// MarshalJSON writes the CPU set in Linux list format.
func (a Assignment) MarshalJSON() ([]byte, error) {
	return json.Marshal(assignmentJSON{a.CPUs.String(), a.Policy, a.RequestMilli, a.Decided.String()})
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
	return nil
}
