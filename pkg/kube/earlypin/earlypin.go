// Package earlypin gives a container cgroup seen appearing under a pod's
// cgroup the cpuset the last decision fixed for the pod's containers at
// once, between two reconciles, instead of at the end of the next one.
//
// It decides nothing: the cpuset is the decision's own (decide.Desired's
// Unlisted, the same value its Ops write into the containers the pod's
// status does not list yet), written as the decision's ops
// (decide.PodCPUSet.Ops), and a pod the decision leaves no entry for
// (container scope, pinned by the kubelet, terminating, no CPUs) is left to
// the reconcile. The directory is the one the cgroup watch (pkg/cgwatch)
// reports under a pod directory resolved through the agent's cgroup
// hierarchy, and only a name read as a runtime's container directory
// (podcgroup.ContainerDir) is written. It writes nothing itself: the
// agent's executor carries the ops out (execute.Early, a Writer). The
// reconcile the directory's appearance wakes follows as before.
// A pod is decided as soon as it is bound (workload.Workload.Awaited),
// mostly before the kubelet makes its cgroup: Awaits has the watch take in
// such a pod's directory the moment it appears (cgwatch.Options.Adopt), and
// Follow names the pods new to it for the same (a directory that appeared
// while the decision was made), so that the sandbox and the first
// containers are seen as they are made, not at the next reconcile's look.
// The same cpusets, found by the pod's UID (PodCPUSet), answer the NRI
// plugin for a container whose creation the loop did not decide in time.
//
// The writes keep originals in the agent's own store: without them, the
// reconcile that later lists the container would take Locus's value for
// the original, and undoing Locus (the chart's uninstall) would leave the
// container pinned. A container's original cpuset is its pod's original,
// the value a runtime gives a container of a pod no one pins: a decided
// pod's cgroup is marked so (Writer.Mark, durably, once, when the pod is
// first decided), and the containers' originals reach the disk with the
// store's next save, not before each write. A save of the whole originals
// file per container came after the container's first instruction under a
// burst of pods; a crash before the save loses nothing the mark does not
// give back.
package earlypin

import (
	"log/slog"
	"path"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/kube/podcgroup"
)

// MaxPending bounds the containers remembered that appeared in a pod
// directory watched before its pod was decided.
const MaxPending = 1024

// Writer carries out the early writes (the agent's executor: execute.Early,
// source.EarlyWriter): it resolves the pods' directories, marks the pods'
// cgroups (an error: none of them is written early) and writes one
// container's ops.
type Writer interface {
	Hierarchy() *cgroup.Hierarchy
	Mark(pods []string) error
	Apply(ops []cgroupfile.Op) error
}

// Pinner has the pods' decided cpusets written into their new containers.
// Its methods may be called from any goroutine.
type Pinner struct {
	log *slog.Logger

	mu     sync.Mutex
	w      Writer
	h      *cgroup.Hierarchy // w's
	driver podcgroup.Driver
	pods   map[string]pod // by the pod cgroup's directory
	// dirs is each pod cgroup's directory as h resolved it at the last
	// Follow: a directory is a function of the cgroup's path alone, so a
	// pod decided again is not resolved again (one lstat and its path's
	// bytes per pod and reconcile: 2 % of the agent's CPU and 2.7 % of the
	// bytes it allocated under a 300-pod churn). The writes resolve their
	// files themselves.
	dirs   map[string]string
	sets   map[string]decide.PodCPUSet // the last decision's, by pod cgroup
	marked map[string]bool             // pod cgroups marked ChildrenFromParent
	// pending are the containers seen in a directory not decided yet, by
	// directory: its pod was listed but its decision is not out yet.
	pending  map[string][]string
	npending int
	written  int
	settling atomic.Int32 // goroutines waiting for a cgroup to settle
}

type pod struct {
	cgroup string // relative to the hierarchy's root
	set    decide.PodCPUSet
}

// New returns a Pinner that knows no pod yet.
func New(log *slog.Logger) *Pinner {
	if log == nil {
		log = slog.Default()
	}
	return &Pinner{log: log, pods: map[string]pod{}, pending: map[string][]string{}}
}

// Follow takes a decision's cpusets of pods (decide.Desired.Unlisted, by
// pod cgroup), written by w, whose names of container directories are
// those of driver. The containers of a pod not decided before (Listed by
// the snapshot, or seen appearing since) are written now; those of pods
// still not decided are forgotten (the reconcile serves them). It returns
// the directories of the pods it did not know before: one whose directory
// appeared while it was decided has its containers told to Created by the
// caller's watch (cgwatch.Watch.Adopt), not left to the next reconcile.
// Without a writer nothing is written early.
func (p *Pinner) Follow(w Writer, driver podcgroup.Driver, sets map[string]decide.PodCPUSet) (fresh []string) {
	if w == nil {
		return nil
	}
	h := w.Hierarchy()
	marked := p.mark(w, sets)
	p.mu.Lock()
	known := p.dirs
	if p.h != h {
		known = nil // another hierarchy's directories
	}
	p.mu.Unlock()
	pods := make(map[string]pod, len(sets))
	dirs := make(map[string]string, len(sets))
	for cg, set := range sets {
		if !marked[cg] {
			continue
		}
		dir, ok := known[cg]
		if !ok {
			var err error
			if dir, err = h.Dir(cgroup.CPUSet, cg); err != nil {
				continue
			}
		}
		pods[dir], dirs[cg] = pod{cgroup: cg, set: set}, dir
	}
	p.mu.Lock()
	p.w, p.h, p.dirs = w, h, dirs
	for dir := range pods {
		if _, ok := p.pods[dir]; !ok {
			fresh = append(fresh, dir)
		}
	}
	p.pods, p.sets, p.driver, p.marked = pods, sets, driver, marked
	var ops []cgroupfile.Op
	for dir, names := range p.pending {
		if pd, ok := pods[dir]; ok {
			for _, n := range names {
				ops = append(ops, pd.set.Ops(path.Join(pd.cgroup, n))...)
			}
		}
	}
	clear(p.pending)
	p.npending = 0
	p.mu.Unlock()
	p.write(ops)
	return fresh
}

// mark has the pod cgroups of sets marked, those not marked before (by
// this writer) in one update, and returns the pods whose containers may be
// written early. A pod whose mark cannot be saved waits for the reconcile.
func (p *Pinner) mark(w Writer, sets map[string]decide.PodCPUSet) map[string]bool {
	marked := make(map[string]bool, len(sets))
	p.mu.Lock()
	var fresh []string
	for cg := range sets {
		if p.marked[cg] && p.w == w {
			marked[cg] = true
		} else {
			fresh = append(fresh, cg)
		}
	}
	p.mu.Unlock()
	if err := w.Mark(fresh); err != nil {
		p.log.Warn("new containers of these pods wait for the reconcile", "pods", len(fresh), "err", err)
	} else {
		for _, cg := range fresh {
			marked[cg] = true
		}
	}
	return marked
}

// Listed is told the container directories found in dir, a pod's cgroup
// directory, that the pod's status does not list yet (the snapshot's
// Workload.Unlisted, made before the watch saw them): those of a pod not
// decided yet are written as soon as a decision gives its cpuset, ahead of
// the reconcile's other writes. Those of a decided pod are the reconcile's.
func (p *Pinner) Listed(dir string, names []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.pods[dir]; ok {
		return
	}
	for _, n := range names {
		p.remember(dir, n)
	}
}

// remember adds a container of a pod not decided yet, within MaxPending.
// Called with mu held.
func (p *Pinner) remember(dir, name string) {
	if _, ok := podcgroup.ContainerDir(p.driver, name); ok && p.npending < MaxPending && !slices.Contains(p.pending[dir], name) {
		p.pending[dir] = append(p.pending[dir], name)
		p.npending++
	}
}

// Created is told that name was made in dir, a pod's cgroup directory
// watched for its children (cgwatch.Options.Created).
func (p *Pinner) Created(dir, name string) {
	p.mu.Lock()
	if _, ok := podcgroup.ContainerDir(p.driver, name); !ok || p.w == nil {
		p.mu.Unlock()
		return
	}
	pd, ok := p.pods[dir]
	if !ok {
		p.remember(dir, name)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.write(pd.set.Ops(path.Join(pd.cgroup, name)))
}

// Awaits says whether dir is the cgroup directory of a pod the last
// decision gave a cpuset to (cgwatch.Options.Adopt): one decided before the
// kubelet made its cgroup has its containers written as they appear.
func (p *Pinner) Awaits(dir string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.pods[dir]
	return ok
}

// PodCPUSet is the cpuset the last decision gave the containers of the pod
// whose UID is uid (checked here), its pod cgroup placed under root as the
// kubelet places it: the same value a container appearing in the pod's
// directory would be written. A pod the decision left no entry for is not
// found.
func (p *Pinner) PodCPUSet(root podcgroup.Root, uid string) (decide.PodCPUSet, bool) {
	if podcgroup.CheckUID(uid) != nil {
		return decide.PodCPUSet{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, qos := range []string{podcgroup.Guaranteed, podcgroup.Burstable, podcgroup.BestEffort} {
		cg, err := podcgroup.PodCgroup(p.driver, qos, uid)
		if err != nil {
			return decide.PodCPUSet{}, false
		}
		if set, ok := p.sets[root.Path(cg)]; ok {
			return set, true
		}
	}
	return decide.PodCPUSet{}, false
}
