package plan

import (
	"encoding/json"
	"fmt"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpuset"
)

type assignmentJSON struct {
	CPUs         string          `json:"cpus"`
	Policy       cpualloc.Policy `json:"policy"`
	RequestMilli int64           `json:"requestMilli,omitempty"`
}

// MarshalJSON writes the CPU set in Linux list format.
func (a Assignment) MarshalJSON() ([]byte, error) {
	return json.Marshal(assignmentJSON{a.CPUs.String(), a.Policy, a.RequestMilli})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (a *Assignment) UnmarshalJSON(b []byte) error {
	var j assignmentJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	cpus, err := cpuset.Parse(j.CPUs)
	if err != nil {
		return fmt.Errorf("assignment cpus %q: %w", j.CPUs, err)
	}
	*a = Assignment{CPUs: cpus, Policy: j.Policy, RequestMilli: j.RequestMilli}
	return nil
}
