package sample

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/view"
)

// MinInterval is the shortest window rates are measured over: callers
// closer together than this (two browsers, a browser and locus top) get the
// last rates instead of noise from a few milliseconds.
const MinInterval = 500 * time.Millisecond

// Sampler fills snapshots with what the host uses. Utilisation is a rate,
// so it is measured between two calls: the first call has none.
type Sampler struct {
	procRoot, sysfsRoot string
	h                   *cgroup.Hierarchy // nil: no per-workload figures
	pageSize            uint64
	now                 func() time.Time

	mu       sync.Mutex
	last     *reading // what the rates are measured against
	busy     map[int]float64
	cpuUsage map[string]float64 // by cgroup, in CPUs
}

type reading struct {
	at   time.Time
	cpus map[int]procfs.CPUTimes
	cg   map[string]time.Duration
}

// New reads /proc/stat under procRoot, node memory under sysfsRoot and
// workload cgroups through h (nil for none).
func New(procRoot, sysfsRoot string, h *cgroup.Hierarchy) *Sampler {
	if procRoot == "" {
		procRoot = "/proc"
	}
	if sysfsRoot == "" {
		sysfsRoot = "/sys"
	}
	return &Sampler{procRoot: procRoot, sysfsRoot: sysfsRoot, h: h, pageSize: uint64(os.Getpagesize()), now: time.Now}
}

// Fill sets the snapshot's CPU utilisation, node memory and, for each
// workload with a cgroup, its CPU usage and memory per node. What cannot be
// read stays unknown: a fixture machine has CPUs /proc/stat lacks, a
// workload may have no cgroup yet.
func (s *Sampler) Fill(snap *view.Snapshot) {
	cur := reading{at: s.now(), cg: map[string]time.Duration{}}
	cur.cpus, _ = procfs.New(s.procRoot).CPUTimes()
	for _, w := range snap.Workloads {
		if s.h == nil || w.Cgroup == "" {
			continue
		}
		if u, err := s.h.CPUUsage(w.Cgroup); err == nil {
			cur.cg[w.Cgroup] = u
		}
	}
	busy, usage := s.rates(cur)
	if snap.Topology != nil {
		snap.CPUBusy = map[int]float64{}
		var nodes []int
		for _, c := range snap.Topology.CPUs {
			if b, ok := busy[c.ID]; ok {
				snap.CPUBusy[c.ID] = b
			}
		}
		for _, n := range snap.Topology.Nodes {
			nodes = append(nodes, n.ID)
		}
		if mem, err := locality.ReadNodeMemory(s.sysfsRoot, nodes); err == nil {
			snap.NodeMemory = map[int]view.NodeMemory{}
			for id, m := range mem {
				// A pool that cannot be read now shows as discovered.
				huge, _ := topology.ReadNodeHugePages(s.sysfsRoot, id)
				snap.NodeMemory[id] = view.NodeMemory{Total: m.Total, Free: m.Free, HugePages: huge}
			}
		}
	}
	for i := range snap.Workloads {
		w := &snap.Workloads[i]
		if u, ok := usage[w.Cgroup]; ok && w.Cgroup != "" {
			w.CPUUsage = &u
		}
		if s.h != nil && w.Cgroup != "" {
			w.MemoryByNode = s.memoryByNode(w.Cgroup)
		}
	}
}

// rates measures utilisation against the last reading once MinInterval has
// passed since it, and otherwise returns the rates measured last.
func (s *Sampler) rates(cur reading) (map[int]float64, map[string]float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last != nil && cur.at.Sub(s.last.at) < MinInterval {
		return s.busy, s.cpuUsage
	}
	busy, usage := map[int]float64{}, map[string]float64{}
	if prev := s.last; prev != nil {
		for id, t := range cur.cpus {
			p, ok := prev.cpus[id]
			if ok && t.Total > p.Total && t.Busy >= p.Busy {
				busy[id] = min(float64(t.Busy-p.Busy)/float64(t.Total-p.Total), 1)
			}
		}
		wall := cur.at.Sub(prev.at).Seconds()
		for cg, u := range cur.cg {
			if p, ok := prev.cg[cg]; ok && u >= p && wall > 0 {
				usage[cg] = (u - p).Seconds() / wall
			}
		}
	}
	s.last, s.busy, s.cpuUsage = &cur, busy, usage
	return busy, usage
}

// memoryByNode reads the cgroup's memory.numa_stat; nil when it has none.
func (s *Sampler) memoryByNode(rel string) map[int]uint64 {
	v1 := s.h.Version() == cgroup.V1
	ctrl := cgroup.Controller("")
	if v1 {
		ctrl = cgroup.Memory
	}
	dir, err := s.h.Dir(ctrl, rel)
	if err != nil {
		return nil
	}
	raw, err := os.ReadFile(filepath.Join(dir, "memory.numa_stat"))
	if err != nil {
		return nil
	}
	m, err := parseNumaStat(string(raw), v1, s.pageSize)
	if err != nil {
		return nil
	}
	return m
}
