package agent

import (
	"sort"

	"github.com/locus-project/locus/pkg/status"
)

// The status types live in pkg/status; these names keep the agent's own
// code and its callers reading as before.
type (
	Status         = status.Status
	NodeStatus     = status.NodeStatus
	WorkloadStatus = status.WorkloadStatus
	MemQoSStatus   = status.MemQoSStatus
	CPUQoSStatus   = status.CPUQoSStatus
	ProcessState   = status.ProcessState
	Source         = status.Source
)

// StatusFile is the name of the status snapshot under the state directory.
const StatusFile = status.File

// ReadStatus reads the status an agent wrote to stateDir.
func ReadStatus(stateDir string) (Status, error) { return status.Read(stateDir) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
