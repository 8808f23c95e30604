package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"time"

	"github.com/locus-project/locus/pkg/topology"
)

// StatusFile is the name of the status snapshot under the state directory.
const StatusFile = "status.json"

// Status is what the agent last decided and found, for `locus status`,
// /status and humans.
type Status struct {
	Time        time.Time        `json:"time"`
	Config      string           `json:"config"`
	ConfigError string           `json:"configError,omitempty"`
	Node        NodeStatus       `json:"node"`
	Workloads   []WorkloadStatus `json:"workloads"`
}

// NodeStatus summarises the machine and the pools.
type NodeStatus struct {
	CgroupVersion string   `json:"cgroupVersion"`
	Topology      string   `json:"topology"`
	CPUs          string   `json:"cpus"`
	Reserved      string   `json:"reserved"`
	Exclusive     string   `json:"exclusivePool"`
	Shared        string   `json:"sharedPool"`
	BE            string   `json:"bePool"`
	Unsupported   []string `json:"unsupportedKnobs,omitempty"`
	Problems      []string `json:"problems,omitempty"`
}

// WorkloadStatus is one workload as it stands.
type WorkloadStatus struct {
	Name      string        `json:"name"`
	Source    Source        `json:"source"`
	Cgroup    string        `json:"cgroup"`
	QOSClass  string        `json:"qosClass,omitempty"`
	Pool      string        `json:"pool"`
	CPUs      string        `json:"cpus"`
	Mems      string        `json:"mems"`
	NUMANodes []int         `json:"numaNodes"`
	MemoryQOS MemQoSStatus  `json:"memoryQOS"`
	PIDs      []int         `json:"pids"`
	Process   *ProcessState `json:"process,omitempty"`
	Problems  []string      `json:"problems,omitempty"`
	// MemoryLocality is the last memory locality run, while it applies.
	MemoryLocality *LocalityStatus `json:"memoryLocality,omitempty"`
}

// MemQoSStatus is the memory QoS decision and the files as read back.
type MemQoSStatus struct {
	Enabled bool   `json:"enabled"`
	Reason  string `json:"reason"`
	// Values maps each memory QoS file that exists to its current text.
	Values map[string]string `json:"values,omitempty"`
}

// ProcessState is the process the agent started for a command workload.
type ProcessState struct {
	PID       int    `json:"pid,omitempty"`
	StartTime uint64 `json:"startTime,omitempty"`
	State     string `json:"state"` // running, restarting, not started
	Restarts  int    `json:"restarts"`
}

// saveStatus publishes a reconcile's status: /status always, the metrics and
// status.json only when something besides the time changed, so that a
// resync at rest writes nothing. The file's time is thus when the status
// last changed.
func (a *Agent) saveStatus(st Status) error {
	a.setStatus(st)
	bare := st
	bare.Time = time.Time{}
	if a.lastSaved != nil && reflect.DeepEqual(bare, *a.lastSaved) {
		return nil
	}
	a.metrics.setWorkloads(st.Workloads)
	if err := writeStatus(a.opts.StateDir, st); err != nil {
		return err
	}
	a.lastSaved = &bare
	return nil
}

// writeStatus replaces status.json atomically (a temp file renamed over it),
// so readers see the old status or the new one. Unlike the checkpoint it is
// not fsynced: it is derived from the state and written again by the first
// reconcile after a restart, so a power cut may lose it but costs nothing.
func writeStatus(dir string, s Status) error {
	raw, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+StatusFile+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	_, err = tmp.Write(append(raw, '\n'))
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, StatusFile))
}

// ReadStatus reads the status an agent wrote to stateDir.
func ReadStatus(stateDir string) (Status, error) {
	raw, err := os.ReadFile(filepath.Join(stateDir, StatusFile))
	if err != nil {
		return Status{}, err
	}
	var s Status
	if err := json.Unmarshal(raw, &s); err != nil {
		return Status{}, fmt.Errorf("%s: %w", filepath.Join(stateDir, StatusFile), err)
	}
	return s, nil
}

// topologySummary is a one-line description such as
// "1 socket, 1 NUMA node, 2 cores, 2 CPUs".
func topologySummary(t *topology.Topology) string {
	sockets, cores := map[int]bool{}, map[int]bool{}
	for _, c := range t.CPUs {
		sockets[c.Socket], cores[c.Core] = true, true
	}
	return fmt.Sprintf("%s, %s, %s, %s", plural(len(sockets), "socket"), plural(len(t.Nodes), "NUMA node"),
		plural(len(cores), "core"), plural(len(t.CPUs), "CPU"))
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
