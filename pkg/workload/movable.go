package workload

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
)

// ReasonInvalidMovable is the problem of a locus.io/movable annotation that
// is neither "true" nor "false": the workload is then not movable.
const ReasonInvalidMovable = "InvalidMovable"

// MovableOf reads the locus.io/movable annotation: absent is false, and only
// "true" and "false", exactly, are values; anything else is an error naming
// the annotation and the value, since a workload moved by mistake stalls.
func MovableOf(annotations map[string]string) (bool, error) {
	raw, ok := annotations[AnnotationMovable]
	if !ok {
		return false, nil
	}
	switch raw {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("annotation %s: %s is not \"true\" or \"false\"", AnnotationMovable, topology.Quote(raw))
}

// SetMovable fills Movable from the annotations, MovableInvalid with why
// they cannot be read (then it is not movable), and returns that error.
func (w *Workload) SetMovable(annotations map[string]string) error {
	m, err := MovableOf(annotations)
	w.Movable, w.MovableInvalid = m, ""
	if err != nil {
		w.MovableInvalid = err.Error()
	}
	return err
}

// maxDevices bounds the device resources kept of a pod: one is enough to
// keep it in place, the rest only name it.
const maxDevices = 8

// PodDevices are the device plugin resources the pod's containers ask for
// (any domain-qualified resource, nvidia.com/gpu, outside kubernetes.io's
// and hugepages), sorted, at most maxDevices. A device is bound to the
// NUMA node it hangs off: a pod holding one does not move.
func PodDevices(pod *corev1.Pod) []string {
	var out []string
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		for _, list := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
			for name, q := range list {
				n := string(name)
				if q.Sign() > 0 && strings.Contains(n, "/") && !strings.HasPrefix(n, "kubernetes.io/") &&
					!strings.HasPrefix(n, corev1.ResourceHugePagesPrefix) && !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
		}
	}
	slices.Sort(out)
	return out[:min(len(out), maxDevices)]
}

// MayMove says whether w may be moved to other CPUs (and its memory to
// their nodes) so that another workload fits, and if not, why. Only a
// workload that opted in may, and never one whose CPUs or memory cannot
// follow or are not Locus's to move: huge pages (reserved per node),
// devices (bound to their node), CPUs the kubelet's CPU manager pinned
// (pinnedByKubelet, from what pkg/kubelet read), CPUs the scheduler chose
// (applied again at every reconcile), static-burst CPUs (shared), or a
// workload on its way out.
func MayMove(w Workload, pinnedByKubelet bool) (bool, string) {
	switch {
	case w.MovableInvalid != "":
		return false, w.MovableInvalid
	case !w.Movable:
		return false, "not opted in (annotation " + AnnotationMovable + ": \"true\", or movable: true in a HostConfig)"
	case !w.CPU.Exclusive || w.CPU.CPUs <= 0:
		return false, "holds no CPUs of its own"
	case w.CPU.Policy == cpualloc.StaticBurst:
		return false, "its static-burst CPUs are shared"
	case w.Terminating:
		return false, "it is terminating"
	case w.CPU.Memory.HugePages2Mi > 0 || w.CPU.Memory.HugePages1Gi > 0:
		return false, "it holds huge pages, which cannot follow its CPUs"
	case len(w.DeviceResources) > 0 || len(w.Devices) > 0:
		return false, "it holds devices bound to their NUMA node (" + strings.Join(append(slices.Clip(w.DeviceResources), w.Devices...), ", ") + ")"
	case pinnedByKubelet:
		return false, "the kubelet's CPU manager pinned its CPUs"
	case !w.CPU.Decided.IsEmpty():
		return false, "the scheduler chose its CPUs (" + AnnotationResourceStatus + ")"
	}
	return true, ""
}
