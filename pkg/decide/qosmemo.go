package decide

import (
	"maps"
	"reflect"
	"strconv"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/workload"
)

// qosStep is a workload's QoS files as Compute decides them: its memory
// limit, memory QoS, CPU QoS and CPU Burst buffer, with the status lines
// they give. They read the workload, the containers the kubelet pinned of
// it and the node's QoS configuration (qosNode), and nothing of the CPUs'
// allocation, so a workload whose CPUs moved keeps them.
type qosStep struct {
	// What the step was decided from: the workload and its pinned
	// containers.
	w      workload.Workload
	pinned map[string]cpuset.CPUSet

	ops      []cgroupfile.Op
	restores []cgroupfile.Target
	problems []workload.Problem
	shown    WorkloadState // only the fields the step fills (show)
}

// qosNode is what of the node every workload's qosStep reads.
type qosNode struct {
	memQoS      memqos.Config
	namespaces  memqos.NamespaceConfig
	memOptions  memqos.Options
	cpuQoS      cpuqos.Config
	cpuKernel   cpuqos.Kernel
	burst       cpuburst.NodeConfig
	burstKernel bool
}

func qosNodeOf(in Input) qosNode {
	return qosNode{memQoS: in.MemQoS, namespaces: in.Namespaces, memOptions: in.MemQoSOptions, cpuQoS: in.CPUQoS,
		cpuKernel: in.CPUKernel, burst: in.CPUBurst, burstKernel: in.BurstKernel}
}

// qosMemo is the steps of the last decision, by workload name, and the
// node they were decided on. It is never changed once made: a decision
// builds its own from the last one's, so that deciding twice on the same
// memory gives the same result.
type qosMemo struct {
	node   qosNode
	byName map[string]*qosStep
}

// qosSteps decides the QoS steps of one decision, reusing the last
// decision's (last, which may be nil) for each workload whose step reads
// the same as then.
type qosSteps struct {
	in   Input
	last *qosMemo
	next *qosMemo
}

func newQoSSteps(in Input, last *qosMemo, n int) *qosSteps {
	node := qosNodeOf(in)
	if last != nil && !reflect.DeepEqual(last.node, node) {
		last = nil // the node's QoS configuration changed: every step again
	}
	return &qosSteps{in: in, last: last, next: &qosMemo{node: node, byName: make(map[string]*qosStep, n)}}
}

// of is w's step, the last decision's when it was decided from the same
// workload and pinned containers. w points into the decision's input, so
// that comparing it copies no workload (through reflect, a copy was a
// third of a decision's bytes).
func (s *qosSteps) of(w *workload.Workload, pinned map[string]cpuset.CPUSet) *qosStep {
	if s.last != nil {
		if q := s.last.byName[w.Name]; q != nil && sameForQoS(q, w, pinned) {
			s.next.byName[w.Name] = q
			return q
		}
	}
	q := decideQoS(s.in, *w, pinned)
	s.next.byName[w.Name] = q
	return q
}

// sameForQoS says whether q was decided from w and pinned.
func sameForQoS(q *qosStep, w *workload.Workload, pinned map[string]cpuset.CPUSet) bool {
	return maps.EqualFunc(q.pinned, pinned, cpuset.CPUSet.Equals) && reflect.DeepEqual(&q.w, w)
}

// decideQoS is w's step decided afresh.
func decideQoS(in Input, w workload.Workload, pinned map[string]cpuset.CPUSet) *qosStep {
	var d Desired
	var st WorkloadState
	if w.OwnsMemoryLimit && w.MemoryLimit > 0 {
		d.Ops = append(d.Ops, cgroupfile.Op{Cgroup: w.Cgroup, Knob: cgroupfile.MemoryLimit, Value: strconv.FormatInt(w.MemoryLimit, 10)})
	} else if w.OwnsMemoryLimit {
		d.Restores = append(d.Restores, cgroupfile.Target{Cgroup: w.Cgroup, Knob: cgroupfile.MemoryLimit})
	}
	dec, err := memQoS(in, w)
	if err != nil {
		d.Problems = append(d.Problems, workload.Problem{Workload: w.Name, Reason: "InvalidMemoryQOS", Message: err.Error()})
	} else {
		st.MemQoS, st.MemQoSOn, st.MemQoSWhy = dec, dec.Enabled, dec.Reason
		n, r := len(d.Ops), len(d.Restores)
		d.Ops, d.Restores = memOps(w, dec, d.Ops, d.Restores)
		ops, restores := notPinned(w, pinned, d.Ops[n:], d.Restores[r:])
		d.Ops, d.Restores = append(d.Ops[:n], ops...), append(d.Restores[:r], restores...)
	}
	// Called by name, not from a list of functions: through a function
	// value st escaped, one heap copy of it per workload.
	ops, restores, probs := cpuOps(in, w, &st)
	d.appendOwn(&w, pinned, ops, restores, probs)
	ops, restores, probs = burstOps(in, w, &st)
	d.appendOwn(&w, pinned, ops, restores, probs)
	return &qosStep{w: w, pinned: pinned, ops: d.Ops, restores: d.Restores, problems: d.Problems, shown: st}
}

// show fills the status lines of the step into st.
func (q *qosStep) show(st *WorkloadState) {
	from := &q.shown
	st.MemQoS, st.MemQoSOn, st.MemQoSWhy = from.MemQoS, from.MemQoSOn, from.MemQoSWhy
	st.CPUQoSWhy, st.CoreIsolation, st.CoreIsolationWhy = from.CPUQoSWhy, from.CoreIsolation, from.CoreIsolationWhy
	st.CPUBurstWhy = from.CPUBurstWhy
}
