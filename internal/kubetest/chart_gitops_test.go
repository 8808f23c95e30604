package kubetest_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// sloConfigMaps are the names of the ack-koordinator ConfigMaps the chart
// renders with set, each with its helm.sh/resource-policy.
func sloConfigMaps(t *testing.T, set ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, cm := range renderKind[corev1.ConfigMap](t, "ConfigMap", set...) {
		if strings.HasPrefix(cm.Name, "ack-slo-") {
			out[cm.Namespace+"/"+cm.Name] = cm.Annotations["helm.sh/resource-policy"]
		}
	}
	return out
}

// `helm template`, what GitOps tools run, sees no cluster: by default it must
// render neither kube-system/ack-slo-config nor ack-slo-pod-config, which a
// cluster running ack-koordinator already has and applying would replace.
// Only an explicit sloConfig.manage renders them, always with the keep
// policy, so that Helm never deletes one.
func TestHelmChartLeavesSLOConfigMapsAloneUnderTemplate(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want int
	}{
		{nil, 0},
		{[]string{"sloConfig.manage=none"}, 0},
		{[]string{"sloConfig.manage=none", "scheduler.enabled=true", "grafana.dashboard.enabled=true"}, 0},
		{[]string{"sloConfig.manage=create"}, 2}, // no cluster to look in: documented as not for GitOps
		{[]string{"sloConfig.manage=adopt"}, 2},
	} {
		got := sloConfigMaps(t, tc.set...)
		if len(got) != tc.want {
			t.Errorf("--set %v: rendered %v, want %d ack-slo ConfigMaps", tc.set, got, tc.want)
		}
		for name, policy := range got {
			if !strings.HasPrefix(name, "kube-system/") || policy != "keep" {
				t.Errorf("--set %v: %s has resource-policy %q, want keep in kube-system", tc.set, name, policy)
			}
		}
	}
}

// images are the agent's, the scheduler's and the uninstall hook's images as
// rendered with set.
func images(t *testing.T, set ...string) (agent, scheduler, hook string) {
	t.Helper()
	set = append([]string{"scheduler.enabled=true"}, set...)
	_, c := agentContainer(t, set...)
	deps := renderKind[appsv1.Deployment](t, "Deployment", set...)
	jobs := renderKind[batchv1.Job](t, "Job", set...)
	if len(deps) != 1 || len(jobs) != 1 {
		t.Fatalf("--set %v: %d Deployments, %d Jobs", set, len(deps), len(jobs))
	}
	return c.Image, deps[0].Spec.Template.Spec.Containers[0].Image, jobs[0].Spec.Template.Spec.Containers[0].Image
}

// Every image is named from image.registry and image.repository, so that a
// private registry is one value; each image may be overridden, or pinned by
// digest.
func TestHelmChartImagesFromOneRegistry(t *testing.T) {
	v := chartAppVersion(t)
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		set                    []string
		agent, scheduler, hook string
	}{
		{nil, "ghcr.io/locus-project/locus:" + v, "ghcr.io/locus-project/locus-scheduler:" + v, ""},
		// The quick start's private-registry path: a repository with its host.
		{[]string{"image.repository=registry.example.com/me/locus"},
			"registry.example.com/me/locus:" + v, "registry.example.com/me/locus-scheduler:" + v, ""},
		{[]string{"image.registry=registry.example.com:5000", "image.tag=0.2.0"},
			"registry.example.com:5000/locus-project/locus:0.2.0", "registry.example.com:5000/locus-project/locus-scheduler:0.2.0", ""},
		{[]string{"image.registry=", "image.repository=locus"}, "locus:" + v, "locus-scheduler:" + v, ""},
		{[]string{"image.registry=localhost:5000", "image.scheduler.repository=tools/kube-scheduler-locus", "image.scheduler.tag=1.33"},
			"localhost:5000/locus-project/locus:" + v, "localhost:5000/tools/kube-scheduler-locus:1.33", ""},
		{[]string{"image.agent.digest=" + digest, "image.scheduler.repository=quay.io/me/sched", "image.scheduler.digest=" + digest},
			"ghcr.io/locus-project/locus@" + digest, "quay.io/me/sched@" + digest, ""},
	} {
		agent, scheduler, hook := images(t, tc.set...)
		if agent != tc.agent || scheduler != tc.scheduler || hook != agent {
			t.Errorf("--set %v:\n agent %s, want %s\n scheduler %s, want %s\n uninstall hook %s, want the agent's", tc.set,
				agent, tc.agent, scheduler, tc.scheduler, hook)
		}
	}
}
