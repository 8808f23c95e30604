package nodeagent

import corev1 "k8s.io/api/core/v1"

// lastApplied is kubectl apply's copy of the whole object, often the
// largest annotation a pod carries; the agent never reads it.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// slimPod drops, in place, what the agent never reads from a cached pod, so
// that the informer's store holds each pod at a fraction of its size for as
// long as the pod lives on the node. Kept: the metadata but managed fields
// and kubectl's copy, every container's name, resources, resize and restart
// policy, the pod's node, overhead, resource claims, phase, QoS class and
// container statuses. Dropped: volumes, scheduling constraints, the
// containers' environment, commands, mounts and probes, and the conditions,
// none of which reaches a decision.
func slimPod(pod *corev1.Pod) {
	pod.ManagedFields = nil
	delete(pod.Annotations, lastApplied)
	s := &pod.Spec
	s.Volumes, s.Tolerations, s.Affinity, s.TopologySpreadConstraints = nil, nil, nil, nil
	s.ReadinessGates, s.HostAliases, s.ImagePullSecrets, s.DNSConfig = nil, nil, nil, nil
	slimContainers(s.InitContainers)
	slimContainers(s.Containers)
	for i := range s.EphemeralContainers {
		c := &s.EphemeralContainers[i].EphemeralContainerCommon
		c.Env, c.EnvFrom, c.VolumeMounts, c.VolumeDevices = nil, nil, nil, nil
		c.Command, c.Args, c.Ports = nil, nil, nil
		c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Lifecycle = nil, nil, nil, nil
	}
	pod.Status.Conditions = nil
	for _, sts := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for i := range sts {
			sts[i].LastTerminationState = corev1.ContainerState{}
			sts[i].VolumeMounts = nil
		}
	}
}

func slimContainers(cs []corev1.Container) {
	for i := range cs {
		c := &cs[i]
		c.Env, c.EnvFrom, c.VolumeMounts, c.VolumeDevices = nil, nil, nil, nil
		c.Command, c.Args, c.Ports = nil, nil, nil
		c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Lifecycle = nil, nil, nil, nil
	}
}
