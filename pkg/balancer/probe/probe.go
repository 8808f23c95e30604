// Package probe reads what the NUMA balancer decides on: CPU time per CPU
// (/proc/stat), free memory per node (sysfs), and per cgroup its CPU time,
// memory by node and task count. It is the balancer's I/O shell; Window
// turns two readings into the pure core's Input.
package probe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/balancer"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/topology"
)

// Reader reads the machine through configurable roots.
type Reader struct {
	ProcRoot  string            // "" is /proc
	SysfsRoot string            // "" is /sys
	H         *cgroup.Hierarchy // nil: no cgroup is read
}

// CPUStat reads /proc/stat.
func (r Reader) CPUStat() (map[int]balancer.CPUTimes, error) {
	return procfs.New(r.ProcRoot).CPUTimes()
}

// NodeMemory reads the size and free memory of the nodes now.
func (r Reader) NodeMemory(nodes []int) (map[int]balancer.NodeMemory, error) {
	m, err := locality.ReadNodeMemory(r.SysfsRoot, nodes)
	if err != nil {
		return nil, err
	}
	out := make(map[int]balancer.NodeMemory, len(m))
	for n, v := range m {
		out[n] = balancer.NodeMemory{Total: v.Total, Free: v.Free}
	}
	return out, nil
}

// GroupSample is one cgroup's counters at one instant.
type GroupSample struct {
	CPU     time.Duration  // CPU time used since the cgroup was made
	Mem     map[int]uint64 // resident bytes by node (anonymous and shared)
	Threads int            // tasks in its subtree; 0 when unknown
	CPUs    cpuset.CPUSet  // its cpuset.cpus; empty when it sets none
}

// Group reads one cgroup (relative to the cgroup root). Its CPU time and
// memory are required; the task count and cpuset are best effort.
func (r Reader) Group(rel string) (GroupSample, error) {
	if r.H == nil {
		return GroupSample{}, errors.New("no cgroup hierarchy to read")
	}
	var s GroupSample
	var err error
	if s.CPU, err = r.H.CPUUsage(rel); err != nil {
		return s, err
	}
	v1 := r.H.Version() == cgroup.V1
	text, err := r.read(cgroup.Memory, rel, "memory.numa_stat")
	if err != nil {
		return s, err
	}
	if s.Mem, err = groupMemory(text, v1, uint64(os.Getpagesize())); err != nil {
		return s, fmt.Errorf("cgroup %s: %w", rel, err)
	}
	if t, err := r.read("pids", rel, "pids.current"); err == nil {
		s.Threads, _ = strconv.Atoi(t)
	} else if tids, err := r.H.Threads(rel); err == nil {
		s.Threads = len(tids)
	}
	if c, err := r.H.ReadKnob(rel, cgroup.CPUSetCPUs); err == nil {
		s.CPUs, _ = topology.ParseCPUList(c)
	}
	return s, nil
}

// read reads a file of a cgroup that is no knob Locus writes.
func (r Reader) read(ctrl cgroup.Controller, rel, name string) (string, error) {
	dir, err := r.H.Dir(ctrl, rel)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("cgroup %s: %s: %w", rel, name, err)
	}
	return strings.TrimSpace(string(b)), err
}

// Sample is one reading of everything the balancer measures.
type Sample struct {
	At     time.Time
	CPUs   map[int]balancer.CPUTimes
	Groups map[string]GroupSample // by group name
}

// Window turns two samples into the balancer's measurements: partition
// busy time, and for every group in both samples its CPU use over the
// window (in CPUs), its memory and tasks as last read, and the cpuset it
// ran with: the one read at the end of the window, since cpusets change
// right after a sample is taken (that is when the balancer decides).
// Groups missing from either sample are left out: they have no window yet.
// It is pure.
func Window(parts []balancer.Partition, before, after Sample) ([]balancer.Partition, []balancer.Group) {
	out := append([]balancer.Partition(nil), parts...)
	balancer.SetBusy(out, before.CPUs, after.CPUs)
	secs := after.At.Sub(before.At).Seconds()
	var groups []balancer.Group
	for name, a := range after.Groups {
		b, ok := before.Groups[name]
		if !ok || secs <= 0 {
			continue
		}
		cpu := max(float64(a.CPU-b.CPU)/float64(time.Second)/secs, 0)
		groups = append(groups, balancer.Group{Name: name, CPU: cpu, Mem: a.Mem, Threads: a.Threads, Current: a.CPUs})
	}
	return out, groups
}

// groupMemory is a cgroup's memory.numa_stat in bytes per node: the
// anonymous and shared memory on v2 ("anon", "shmem", in bytes), the
// anonymous memory of the subtree on v1 ("hierarchical_anon", else
// "anon", in pages of pageSize). Page cache is left out: it is not the
// group's to move.
func groupMemory(text string, v1 bool, pageSize uint64) (map[int]uint64, error) {
	if v1 {
		return cgroup.ParseNumaStat(text, []string{cgroup.Hierarchical(text, "anon")}, pageSize)
	}
	return cgroup.ParseNumaStat(text, []string{"anon", "shmem"}, 1)
}
