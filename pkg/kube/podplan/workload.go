// Package podplan turns a pod bound to this node into the agent's view of a
// workload (workload.Workload): its cgroups, what it asks of the CPU allocator or
// what the scheduler decided for it, its QoS class and its memory QoS inputs.
// The pod's text (annotations, labels, resources) is read by pkg/workload;
// this package finds its cgroups. It is pure; whether a cgroup exists is
// asked through Env.
package podplan

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/locus-project/locus/pkg/kube/podcgroup"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Env is what the mapping needs from the machine.
type Env struct {
	Driver   podcgroup.Driver
	Exists   func(rel string) bool // does this cgroup exist (relative to the root)
	Topology *topology.Topology
	// Trust is the node's name and the scheduler's keys, under whose
	// signature alone a pod's resource-status is applied.
	Trust workload.Trust
}

// Workload is a pod as the agent manages it.
type Workload struct {
	Plan workload.Workload
	// Class is the QoS class shown in status: the koordinator class label
	// (upper case) or, without one, the Kubernetes QoS class.
	Class    string
	Problems []workload.Problem
}

// ReasonContainerCgroupNotFound is the problem of a container whose status
// says running but whose cgroup does not exist.
const ReasonContainerCgroupNotFound = "ContainerCgroupNotFound"

// ErrNoCgroup says the pod's cgroup does not exist (yet): the kubelet has
// not set the pod up, or has torn it down. The pod is left alone meanwhile.
var ErrNoCgroup = errors.New("the pod's cgroup does not exist")

// Name is how the agent names a pod's workload: namespace/name.
func Name(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

// Awaitable says whether a pod without a cgroup is one the kubelet is
// about to set up: bound, pending, not being deleted. Such a pod is mapped
// (workload.Workload.Awaited) so that its decision is out before its
// containers' cgroups appear; any other pod without a cgroup is
// ErrNoCgroup.
func Awaitable(pod *corev1.Pod) bool {
	return pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil &&
		(pod.Status.Phase == corev1.PodPending || pod.Status.Phase == "")
}

// FromPod maps a pod. It fails only when the pod has no usable cgroup (an
// invalid UID or QoS class, or ErrNoCgroup); everything else that is wrong
// with the pod (a fractional CPU limit, a malformed annotation, a container
// ID that is not one) becomes a problem on a workload that still runs, with
// what could be derived.
//
// A pod being deleted (deletionTimestamp set) is terminating: the kubelet
// stops its containers and removes their cgroups while its status may still
// say Running. It keeps its CPU need, so the CPUs it holds stay its own
// until it is gone, but it lists no container and has no problem: nothing
// is written for it any more, and nothing about it is worth a warning.
func FromPod(pod *corev1.Pod, env Env) (Workload, error) {
	kube := workload.KubeQoS(pod)
	podCg, err := podcgroup.PodCgroup(env.Driver, string(kube), string(pod.UID))
	if err != nil {
		return Workload{}, err
	}
	awaited := !env.Exists(podCg)
	if awaited && !Awaitable(pod) {
		return Workload{}, fmt.Errorf("%w: %s", ErrNoCgroup, podCg)
	}
	name := Name(pod)
	w := Workload{Plan: workload.Workload{Name: name, UID: string(pod.UID), Cgroup: podCg, Awaited: awaited}}
	problem := func(reason, format string, args ...any) {
		w.Problems = append(w.Problems, workload.Problem{Workload: name, Reason: reason, Message: fmt.Sprintf(format, args...)})
	}
	w.Plan.Terminating = pod.DeletionTimestamp != nil
	if !w.Plan.Terminating && !awaited {
		w.Plan.Containers = containerCgroups(pod, env, podCg, problem)
	}
	w.Plan.CPU = workload.PodCPUNeed(pod, env.Topology, env.Trust, problem)
	w.Plan.SetMemQoS(workload.PodMemQoS(pod))
	w.Plan.SetMemoryLocality(pod.Annotations)
	qos := workload.PodQoS(pod)
	w.Class = qos.Status()
	w.Plan.BE, w.Plan.QoS = qos.BE(), qos
	w.Plan.SetCPUQoS(qos, pod.Labels, pod.Annotations)
	w.Plan.SetCPUBurst(pod.Annotations)
	if err := w.Plan.SetMovable(pod.Annotations); err != nil {
		problem(workload.ReasonInvalidMovable, "%v; it is not moved", err)
	}
	w.Plan.DeviceResources = workload.PodDevices(pod)
	limits := workload.PodCPULimits(pod)
	for i := range w.Plan.Containers {
		w.Plan.Containers[i].CPULimitMilli = limits[w.Plan.Containers[i].Name]
	}
	if w.Plan.Terminating {
		w.Problems = nil // said while it ran, if at all
	}
	return w, nil
}

// containerCgroups finds the cgroup of every running container whose ID the
// kubelet reported: the init container running now and the sidecars
// (restartable init containers), then the app containers. Containers not
// running have no cgroup and are skipped until they do; a bad ID or a
// missing cgroup is a problem.
func containerCgroups(pod *corev1.Pod, env Env, podCg string, problem func(string, string, ...any)) []workload.Container {
	var out []workload.Container
	for _, l := range []struct {
		field    string
		statuses []corev1.ContainerStatus
	}{{"status.initContainerStatuses", pod.Status.InitContainerStatuses}, {"status.containerStatuses", pod.Status.ContainerStatuses}} {
		for i, st := range l.statuses {
			if c, ok := containerCgroup(env, podCg, fmt.Sprintf("%s[%d]", l.field, i), st, problem); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// containerCgroup finds one running container's cgroup.
func containerCgroup(env Env, podCg, field string, st corev1.ContainerStatus, problem func(string, string, ...any)) (workload.Container, bool) {
	if st.State.Running == nil || st.ContainerID == "" {
		return workload.Container{}, false
	}
	id, err := podcgroup.ParseContainerID(st.ContainerID)
	if err != nil {
		problem("InvalidContainerID", "%s (container %q): %v; its cgroup is left alone", field, st.Name, err)
		return workload.Container{}, false
	}
	cands, err := podcgroup.ContainerCandidates(env.Driver, podCg, id)
	if err != nil {
		problem("InvalidContainerID", "%s (container %q): %v", field, st.Name, err)
		return workload.Container{}, false
	}
	found := ""
	for _, c := range cands {
		if env.Exists(c) {
			found = c
			break
		}
	}
	if found == "" {
		// The pod's cgroup was found with this driver, so the driver is
		// right: the container has most likely just exited and its
		// status lags (the source reports this only if it lasts).
		problem(ReasonContainerCgroupNotFound, "container %q is running but none of %s exists (it exited and the kubelet has not said so yet, or the runtime names its cgroups unlike containerd, CRI-O and Docker)", st.Name, strings.Join(cands, ", "))
		return workload.Container{}, false
	}
	return workload.Container{Name: st.Name, Cgroup: found}, true
}
