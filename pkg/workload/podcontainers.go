package workload

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/quantity"
	"github.com/locus-project/locus/pkg/topology"
)

const (
	// AnnotationCPUScope says who shares a pinned pod's CPUs: "pod" (the
	// default) lets every container run on all of them; "container" gives
	// each container CPUs of its own out of the pod's set, as many as its
	// integer limits.cpu, as the kubelet's static CPU manager does
	// (cpuset.Partition).
	AnnotationCPUScope = "locus.io/cpu-scope"
	// AnnotationContainerCPUSets is the scheduler's partition of a
	// container-scope pod's CPUs, written beside its decision:
	//
	//	locus.io/container-cpusets: '{"app": "0-1", "log": "2"}'
	//
	// The agent computes the partition itself and warns where it differs.
	AnnotationContainerCPUSets = "locus.io/container-cpusets"
)

// The CPU scopes of AnnotationCPUScope.
const (
	ScopePod       = "pod"
	ScopeContainer = "container"
)

// CPUScopeOf reads the cpu-scope annotation, in any case and with blanks
// around: true for "container", false for "pod" or none. The error names
// the annotation and the value.
func CPUScopeOf(annotations map[string]string) (container bool, err error) {
	raw, ok := annotations[AnnotationCPUScope]
	switch v := strings.ToLower(strings.TrimSpace(raw)); {
	case !ok || v == ScopePod:
		return false, nil
	case v == ScopeContainer:
		return true, nil
	}
	return false, fmt.Errorf("annotation %s: %s is not one of %s, %s", AnnotationCPUScope, topology.Quote(raw), ScopePod, ScopeContainer)
}

// maxCPULimit is the largest CPU limit a container may ask to be pinned to.
var maxCPULimit = *resource.NewQuantity(topology.MaxCPUID+1, resource.DecimalSI)

// podLimitCPUs is the pod's CPU count as Kubernetes counts its effective
// limit (k8s.io/component-helpers/resource PodLimits, the sidecar KEP's
// rule): the larger of the app containers and sidecars together, and of
// each init container with the sidecars declared before it. It returns
// each container's count too, in spec order (init containers first). Every
// app container must have an integer limits.cpu, and every init container
// or sidecar that has one. With actuated, an app
// container or sidecar resized in place (InPlacePodVerticalScaling) counts
// the limit in force, reported in its status, instead of its spec's. An
// init container or sidecar without a CPU limit counts 0 (and cannot have
// CPUs of its own in the container scope).
func podLimitCPUs(pod *corev1.Pod, actuated bool) (int, []cpualloc.ContainerCPUs, error) {
	cs := make([]cpualloc.ContainerCPUs, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	sidecars, initMax := int64(0), int64(0)
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		// One without a CPU limit counts nothing, as before init
		// containers counted: it runs on the pod's set. Many pods have a
		// small init container no one gave a limit.
		if _, has := c.Resources.Limits[corev1.ResourceCPU]; !has {
			kind := cpualloc.Init
			if sidecar {
				kind = cpualloc.Sidecar
			}
			cs = append(cs, cpualloc.ContainerCPUs{Name: c.Name, Kind: kind})
			continue
		}
		n, err := containerLimitCPUs(fmt.Sprintf("spec.initContainers[%d] (%s)", i, c.Name), "status.initContainerStatuses",
			c, pod.Status.InitContainerStatuses, actuated && sidecar)
		if err != nil {
			return 0, nil, err
		}
		kind := cpualloc.Init
		if sidecar {
			kind, sidecars = cpualloc.Sidecar, sidecars+n
			initMax = max(initMax, sidecars)
		} else {
			initMax = max(initMax, n+sidecars)
		}
		cs = append(cs, cpualloc.ContainerCPUs{Name: c.Name, Kind: kind, CPUs: int(n)})
	}
	apps := int64(0)
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		n, err := containerLimitCPUs(fmt.Sprintf("spec.containers[%d] (%s)", i, c.Name), "status.containerStatuses",
			c, pod.Status.ContainerStatuses, actuated)
		if err != nil {
			return 0, nil, err
		}
		apps += n
		cs = append(cs, cpualloc.ContainerCPUs{Name: c.Name, Kind: cpualloc.App, CPUs: int(n)})
	}
	total := max(apps+sidecars, initMax)
	if total < 1 {
		return 0, nil, fmt.Errorf("the pod's limits add up to %d", total)
	}
	return int(total), cs, nil
}

// containerLimitCPUs reads one container's whole CPU limit; with actuated,
// the one its status reports, where it reports one.
func containerLimitCPUs(field, statusField string, c *corev1.Container, statuses []corev1.ContainerStatus, actuated bool) (int64, error) {
	lim, ok := c.Resources.Limits[corev1.ResourceCPU]
	for j, st := range statuses {
		if actuated && st.Name == c.Name && st.Resources != nil {
			if q, has := st.Resources.Limits[corev1.ResourceCPU]; has {
				field, lim, ok = fmt.Sprintf("%s[%d] (%s)", statusField, j, c.Name), q, true
			}
		}
	}
	switch {
	case !ok:
		return 0, fmt.Errorf("%s has none", field)
	case !quantity.Bounded(&lim) || lim.Sign() < 0 || lim.Cmp(maxCPULimit) > 0:
		// Checked before MilliValue, which wraps ("1E" reads as 0).
		return 0, fmt.Errorf("%s has %s, more CPUs than Linux can number", field, lim.String())
	case lim.MilliValue()%1000 != 0:
		return 0, fmt.Errorf("%s has %s", field, lim.String())
	}
	return lim.MilliValue() / 1000, nil
}

// maxContainerCPUSets bounds the container-cpusets annotation before it is
// read: a name is at most 63 characters and a CPU list of a real pod a few
// dozen, for at most a few dozen containers.
const maxContainerCPUSets = 64 << 10

// maxContainerName is the longest container name Kubernetes accepts (a
// DNS label).
const maxContainerName = 63

// maxPartsCPUs bounds the CPUs a container-cpusets annotation expands into
// in all, whatever the pod: four times the largest machine, ~1.2 MiB of
// sets. A larger partition is not read (the agent divides the CPUs itself
// anyway); before the bound, 64 KiB of "0-8191" lists kept 1.2 GiB.
const maxPartsCPUs = 4 * (topology.MaxCPUID + 1)

// PartsBudget is what a container-cpusets annotation can name, sized from
// its pod and decision: only the pod's containers, each a part of the
// decided CPUs, and in all what cpualloc.Partition hands out (the app
// containers and sidecars share the set out, each init container takes
// from it again), at most maxPartsCPUs.
type PartsBudget struct {
	Containers map[string]bool
	Decided    cpuset.CPUSet
	total      int
}

// PodPartsBudget is the budget of a pod's container-cpusets annotation
// beside the decision's CPUs.
func PodPartsBudget(pod *corev1.Pod, decided cpuset.CPUSet) PartsBudget {
	b := PartsBudget{Containers: map[string]bool{}, Decided: decided}
	inits := 0
	for _, c := range pod.Spec.InitContainers {
		b.Containers[c.Name] = true
		if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			inits++
		}
	}
	for _, c := range pod.Spec.Containers {
		b.Containers[c.Name] = true
	}
	b.total = min(decided.Size()*(1+min(inits, maxPartsCPUs)), maxPartsCPUs)
	return b
}

// ParseContainerCPUSets reads the container-cpusets annotation: a JSON
// object of container names to Linux CPU lists, within the budget: every
// list is counted before any is expanded. Errors name the container.
func ParseContainerCPUSets(raw string, b PartsBudget) (map[string]cpuset.CPUSet, error) {
	if len(raw) > maxContainerCPUSets {
		return nil, fmt.Errorf("%d bytes, more than the %d a pod's partition takes", len(raw), maxContainerCPUSets)
	}
	var j map[string]string
	if err := decodeOne(raw, &j, "a JSON object of container names to CPU lists"); err != nil {
		return nil, err
	}
	if len(j) > len(b.Containers) {
		return nil, fmt.Errorf("%d containers, but the pod has %d", len(j), len(b.Containers))
	}
	names := make([]string, 0, len(j))
	for name := range j {
		names = append(names, name)
	}
	slices.Sort(names) // the same error for the same text
	budget := topology.NewCPUBudget(b.total, fmt.Sprintf("a partition of the decision's %d CPUs among the pod's containers", b.Decided.Size()))
	for _, name := range names {
		if len(name) > maxContainerName {
			return nil, fmt.Errorf("container %s: a name longer than the %d characters Kubernetes allows", topology.Quote(name), maxContainerName)
		}
		if !b.Containers[name] {
			return nil, fmt.Errorf("container %s: the pod has no container of that name", topology.Quote(name))
		}
		n, err := budget.Charge(j[name])
		if err != nil {
			return nil, fmt.Errorf("container %s: %v", topology.Quote(name), err)
		}
		if n > b.Decided.Size() {
			return nil, fmt.Errorf("container %s: %d CPUs, more than the decision's %d", topology.Quote(name), n, b.Decided.Size())
		}
	}
	out := make(map[string]cpuset.CPUSet, len(j))
	for _, name := range names {
		cpus, err := topology.ParseCPUList(j[name]) // counted above: it parses
		if err != nil {
			return nil, fmt.Errorf("container %s: %v", topology.Quote(name), err)
		}
		if cpus.IsEmpty() {
			return nil, fmt.Errorf("container %s: empty CPU list", topology.Quote(name))
		}
		if !cpus.IsSubsetOf(b.Decided) {
			return nil, fmt.Errorf("container %s: CPUs %s are not the decision's %s", topology.Quote(name), cpus.Difference(b.Decided), b.Decided)
		}
		out[name] = cpus
	}
	return out, nil
}

// FormatContainerCPUSets writes what ParseContainerCPUSets reads, names in
// order (as encoding/json writes a map's keys).
func FormatContainerCPUSets(parts map[string]cpuset.CPUSet) string {
	lists := make(map[string]string, len(parts))
	for n, p := range parts {
		lists[n] = p.String()
	}
	b, _ := json.Marshal(lists) // strings to strings: it cannot fail
	return string(b)
}

// SameContainerCPUSets says whether two partitions give every container
// the same CPUs.
func SameContainerCPUSets(a, b map[string]cpuset.CPUSet) bool {
	if len(a) != len(b) {
		return false
	}
	for n, x := range a {
		if y, ok := b[n]; !ok || !x.Equals(y) {
			return false
		}
	}
	return true
}

// containerScope reads what a container-scope pod's containers ask: nil for
// a pod-scope one (or, after a problem naming the field and value, one
// whose scope cannot be read or whose containers' limits cannot be
// divided among them: its containers share its CPUs).
func containerScope(pod *corev1.Pod, actuated bool, problem func(string, string, ...any)) []cpualloc.ContainerCPUs {
	container, err := CPUScopeOf(pod.Annotations)
	if err != nil {
		problem("InvalidCPUScope", "%v; using %s instead, the default: the containers share the pod's CPUs", err, ScopePod)
		return nil
	}
	if !container {
		return nil
	}
	_, cs, err := podLimitCPUs(pod, actuated)
	if err != nil {
		problem("InvalidCPULimit", "%s %s needs an integer resources.limits.cpu on every container: %v; the containers share the pod's CPUs",
			AnnotationCPUScope, ScopeContainer, err)
		return nil
	}
	return cs
}
