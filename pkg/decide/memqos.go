package decide

import (
	"errors"

	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/workload"
)

// memQoS is a workload's memory QoS decision. Its text was read when it
// arrived (workload.MemQoSOf): text that could not be read is the error,
// and nothing is written for it.
func memQoS(in Input, w workload.Workload) (memqos.Values, error) {
	if w.MemQoSInvalid != "" {
		return memqos.Values{}, errors.New(w.MemQoSInvalid)
	}
	return memqos.Compute(in.MemQoS, in.Namespaces, w.MemQoS, in.MemQoSOptions)
}
