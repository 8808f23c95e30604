package nri

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/workload"
)

// Match is a batch of requests paired with the workloads the decision
// takes: each request's container has a cgroup name in the decision.
type Match struct {
	out  []Answer
	keys []string
}

// MatchWorkloads pairs each request with its pod's workload among ws (by
// UID, see workloadOf; a pod's Cgroup is its pod cgroup) and names its
// container's cgroup. A container not yet running has no cgroup: it is
// added to its pod's workload (whose Containers then no longer share an
// array with another slice) under a name below the pod's that is only a
// key into the decision, never written. A request of a pod not among ws
// gets its Err now.
func MatchWorkloads(reqs []Request, ws []*workload.Workload) *Match {
	m := &Match{out: make([]Answer, len(reqs)), keys: make([]string, len(reqs))}
	byName, byUID := map[string]int{}, map[string]int{}
	for i := range ws {
		byName[ws[i].Name] = i
		if ws[i].UID != "" {
			byUID[ws[i].UID] = i
		}
	}
	for i, q := range reqs {
		name := q.Pod.Namespace + "/" + q.Pod.Name
		j, ok := workloadOf(q.Pod, ws, byName, byUID)
		if !ok {
			m.out[i] = Answer{Exclusive: workload.AsksForCPUs(q.Pod.Labels, q.Pod.Annotations),
				Err: fmt.Errorf("pod %s is %w (its cgroup, or the pod from the API server)", name, ErrUnknownPod)}
			continue
		}
		w := ws[j]
		m.out[i].Exclusive = w.CPU.Exclusive
		for _, c := range w.Containers {
			if c.Name == q.Container.Name {
				m.keys[i] = c.Cgroup
			}
		}
		if m.keys[i] == "" {
			m.keys[i] = fmt.Sprintf("%s/locus-nri-%d", w.Cgroup, i)
			w.Containers = append(slices.Clip(w.Containers), workload.Container{Name: q.Container.Name, Cgroup: m.keys[i]})
		}
	}
	return m
}

// workloadOf finds the index in ws of pod's workload: the one of its UID. A
// pod deleted and created again under the same name is another pod, so a
// workload of that name with another UID (the old pod, still listed) is not
// its own: its container must not get the old pod's cgroup or CPUs. Only
// where the runtime or the source gives no UID is the name enough.
func workloadOf(pod Pod, ws []*workload.Workload, byName, byUID map[string]int) (int, bool) {
	if j, ok := byUID[pod.UID]; ok && pod.UID != "" {
		return j, true
	}
	j, ok := byName[pod.Namespace+"/"+pod.Name]
	if !ok || (pod.UID != "" && ws[j].UID != "") {
		return 0, false
	}
	return j, true
}

// Failed answers the requests when the decision could not be made: each
// gets err unless it has an error of its own.
func (m *Match) Failed(err error) []Answer {
	for i := range m.out {
		if m.out[i].Err == nil {
			m.out[i].Err = err
		}
	}
	return m.out
}

// Answers gives each request the values the decision's ops give
// their containers' cgroups, on a hierarchy of version v.
func (m *Match) Answers(ops []cgroup.Op, v cgroup.Version) []Answer {
	values := ValuesOf(ops, v)
	for i := range m.out {
		if m.out[i].Err == nil {
			m.out[i].Values = values[m.keys[i]]
		}
	}
	return m.out
}

// ValuesOf gives the values of each cgroup that the OCI spec carries: the
// cpuset, and on v2 memory.min, low and high, on v1 the soft limit. The
// others (the wmark files) are the reconcile loop's.
func ValuesOf(ops []cgroup.Op, v cgroup.Version) map[string]Values {
	out := map[string]Values{}
	for _, op := range ops {
		x := out[op.Cgroup]
		switch op.Knob {
		case cgroup.CPUSetCPUs:
			x.CPUs = op.Value
		case cgroup.CPUSetMems:
			x.Mems = op.Value
		case cgroup.MemoryMin, cgroup.MemoryLow, cgroup.MemoryHigh:
			if v == cgroup.V2 {
				if x.Unified == nil {
					x.Unified = map[string]string{}
				}
				x.Unified[string(op.Knob)] = op.Value
			}
		case cgroup.MemorySoftLimit:
			if n, err := strconv.ParseInt(op.Value, 10, 64); err == nil && v == cgroup.V1 && n > 0 {
				x.Reservation = n
			}
		}
		out[op.Cgroup] = x
	}
	return out
}
