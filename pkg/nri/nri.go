// Package nri is Locus's NRI plugin: it registers with the container
// runtime's NRI socket (containerd ≥ 1.7, CRI-O ≥ 1.26) so that a container
// is created with the cpuset and memory QoS values Locus decided, instead of
// getting them from the reconcile loop after it has started. It decides
// nothing itself: every value comes from a Handler (LoopHandler, on the
// agent's loop), which asks the one decision core; this package speaks the
// protocol, keeps the connection, turns a decision into the values a
// container's spec carries, and says which path the node is on.
package nri

import (
	"context"
	"errors"
)

// DefaultSocket is where containerd and CRI-O listen for NRI plugins.
const DefaultSocket = "/var/run/nri/nri.sock"

// Pod is a pod sandbox as the runtime describes it. Its labels and
// annotations are the pod's own (the scheduler's decision among them); they
// are read by pkg/workload only.
type Pod struct {
	ID, UID, Namespace, Name string
	Labels, Annotations      map[string]string
}

// Container is one container of a pod, with the values the runtime has for
// it now (empty: unset).
type Container struct {
	ID, PodID, Name string
	Current         Values
}

// Values are the cgroup values of one container that the OCI spec can carry:
// cpuset.cpus and cpuset.mems, on cgroup v2 the unified memory.min, low and
// high, on v1 the soft limit (the memory reservation). A zero field is left
// as the runtime has it.
type Values struct {
	CPUs, Mems string
	Unified    map[string]string
	// Reservation is memory.soft_limit_in_bytes on v1; 0: unset.
	Reservation int64
}

// IsZero says whether the values set nothing.
func (v Values) IsZero() bool {
	return v.CPUs == "" && v.Mems == "" && len(v.Unified) == 0 && v.Reservation == 0
}

// Request asks the decision for one container.
type Request struct {
	Pod       Pod
	Container Container
}

// Answer is the handler's answer for one request.
type Answer struct {
	Values Values
	// Err says why there are no values; the container then starts without
	// them (fail open) unless it asks for exclusive CPUs and the plugin
	// fails closed.
	Err error
	// Exclusive: the pod asks for CPUs of its own.
	Exclusive bool
}

// Handler is the agent's side: the one decision, reached from the runtime.
type Handler interface {
	// Answer returns the values of each container, in order, from the same
	// decision the reconcile loop makes, recorded (the CPUs assigned are
	// saved) before it returns. It must answer before ctx ends.
	Answer(ctx context.Context, reqs []Request) []Answer
	// Unpinned is told when a container is created without its values:
	// blocked says the creation was refused (fail closed), else it starts
	// and the reconcile loop applies them later.
	Unpinned(pod Pod, ctr Container, err error, blocked bool)
	// Gone is told when a container is stopped or removed, or a pod's
	// sandbox stopped (ctr.ID empty): its CPUs may be freed at once.
	Gone(pod Pod, ctr Container)
}

// ErrNoDecision is what a handler says when it cannot decide in time.
var ErrNoDecision = errors.New("no decision in time")

// ErrUnknownPod is in the error of a request whose pod the agent's source
// does not list (yet).
var ErrUnknownPod = errors.New("not known to the agent yet")
