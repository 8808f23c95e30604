package podplan

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/locus-project/locus/pkg/kube/podcgroup"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Memo remembers each pod's mapping, so that a reconcile maps again only the
// pods that changed: FromPod of every pod of a busy node at every reconcile
// is most of the time the source takes. The mapping depends on the pod, the
// cgroup driver, the topology and which cgroups exist, and on nothing else.
// So an entry is used only for the same pod version (UID and
// resourceVersion; a pod without a resourceVersion is mapped every time),
// the same driver and topology (the agent replaces its Topology when the
// machine's changes), and only while every existence question the mapping
// asked gets the answer it got then: a container's cgroup appearing before
// its pod's status changes maps the pod anew; so does a new key file
// (Env.Trust, compared by its Keys). The questions are asked
// again each time (a reconcile answers them once for all its readers).
//
// A Memo is used by one goroutine at a time.
type Memo struct {
	entries map[string]*memoEntry // by pod UID
	round   uint64
}

type memoEntry struct {
	version string
	driver  podcgroup.Driver
	topo    *topology.Topology
	trust   workload.Trust
	asked   []existence // in the order asked
	w       Workload
	err     error
	used    uint64 // the round it was last used in
}

// existence is one question the mapping asked of Env.Exists, and its answer.
type existence struct {
	rel    string
	exists bool
}

// FromPod is FromPod(pod, env), reused while nothing it depends on changed.
// The workload returned is the caller's own: its slices are copies.
func (m *Memo) FromPod(pod *corev1.Pod, env Env) (Workload, error) {
	if pod.ResourceVersion == "" {
		return FromPod(pod, env)
	}
	if m.entries == nil {
		m.entries = map[string]*memoEntry{}
	}
	uid := string(pod.UID)
	if e := m.entries[uid]; e != nil && e.version == pod.ResourceVersion && e.driver == env.Driver &&
		e.topo == env.Topology && e.trust == env.Trust && e.holds(env.Exists) {
		e.used = m.round
		return e.w.clone(), e.err
	}
	e := &memoEntry{version: pod.ResourceVersion, driver: env.Driver, topo: env.Topology, trust: env.Trust, used: m.round}
	exists := env.Exists
	env.Exists = func(rel string) bool {
		ok := exists(rel)
		e.asked = append(e.asked, existence{rel, ok})
		return ok
	}
	e.w, e.err = FromPod(pod, env)
	m.entries[uid] = e
	return e.w.clone(), e.err
}

// holds says whether every question gets the answer it got.
func (e *memoEntry) holds(exists func(string) bool) bool {
	for _, q := range e.asked {
		if exists(q.rel) != q.exists {
			return false
		}
	}
	return true
}

// Sweep forgets the pods not mapped since the last Sweep: those gone from
// the node. Call it once per pass over the node's pods.
func (m *Memo) Sweep() {
	for uid, e := range m.entries {
		if e.used != m.round {
			delete(m.entries, uid)
		}
	}
	m.round++
}

// Len is how many pods are remembered.
func (m *Memo) Len() int { return len(m.entries) }

// clone copies the slices a caller may change in place.
func (w Workload) clone() Workload {
	w.Plan.Containers = slices.Clone(w.Plan.Containers)
	w.Plan.Unlisted = slices.Clone(w.Plan.Unlisted)
	w.Problems = slices.Clone(w.Problems)
	return w
}
