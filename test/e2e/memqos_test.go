package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/locus-project/locus/internal/kubetest"
)

// memcgDefaultSoftLimit is memory.soft_limit_in_bytes of a new memory cgroup on
// a 4 KiB-page kernel: "no soft limit".
const memcgDefaultSoftLimit = "9223372036854771712"

// The seed's ack-slo-config, memory QoS on for the LS and BE classes, for the
// duration of one test.
func (n *e2eNode) sloConfig(t *testing.T) { n.sloConfigFrom(t, "ack-slo-config.yaml") }

// sloConfigFrom applies a seed's ack-slo-config from internal/kubetest/testdata
// for the duration of one test, and waits until the agent has it in force:
// the test before deleted it, and a pod created before the agent saw it
// again would be answered at creation (NRI) without it.
func (n *e2eNode) sloConfigFrom(t *testing.T, file string) {
	t.Helper()
	var rv string
	for _, o := range n.cp.ApplyFile(t, filepath.Join(n.repo, "internal/kubetest/testdata", file)) {
		if o.GetKind() == "ConfigMap" && o.GetName() == "ack-slo-config" {
			rv = o.GetResourceVersion()
		}
	}
	t.Cleanup(func() {
		_ = n.cp.Client.CoreV1().ConfigMaps("kube-system").Delete(context.Background(), "ack-slo-config", metav1.DeleteOptions{})
	})
	n.waitConfigInForce(t, "ack-slo-config", rv)
}

// waitConfigInForce waits until the agent's saved configuration (its state
// directory's cluster-config.json, pkg/kube/nodeagent.SavedConfigFile) has
// version rv of the ConfigMap for each of its keys the agent watches.
func (n *e2eNode) waitConfigInForce(t *testing.T, configMap, rv string) {
	t.Helper()
	path := filepath.Join(n.dir, "agent", "cluster-config.json")
	kubetest.WaitFor(t, "the agent to have "+configMap+" version "+rv+" in force", fileTimeout, func(context.Context) (bool, error) {
		raw, err := os.ReadFile(path)
		if err != nil {
			return false, err
		}
		var saved struct {
			Values map[string]struct{ ResourceVersion string } `json:"values"`
		}
		if err := json.Unmarshal(raw, &saved); err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
		found := false
		for key, v := range saved.Values {
			if strings.HasPrefix(key, configMap+"/") {
				if v.ResourceVersion != rv {
					return false, fmt.Errorf("%s: %s at version %s", path, key, v.ResourceVersion)
				}
				found = true
			}
		}
		return found, nil
	})
}

// Scenario 2: the seed's memory QoS manifests, an LS redis-like pod and a BE
// stress pod, both with koordinator.sh/memoryQOS policy auto, applied
// unchanged. policy auto is the seed's recommended profile: no memory.min,
// memory.low or memory.high (their percentages are 0), wmark_ratio 95 and
// wmark_min_adj −25 (LS) / 50 (BE). This kernel is upstream cgroup v1: of the
// seed's files it has none (memory.min/low/high and the wmark files are
// Alibaba Cloud Linux extensions on v1), so the agent says on the Node which
// files the kernel lacks and writes nothing. The pod then asks for protection
// on top of auto (lowLimitPercent 100): the agent (run with
// --memory-v1-soft-limit) writes the one v1 approximation it has,
// memory.soft_limit_in_bytes = memory.low, on the pod and its container;
// policy none puts the values the container was created with back.
func TestMemoryQoSSeedManifests(t *testing.T) {
	n := need(t)
	n.sloConfig(t)
	ns := n.namespace(t, "memqos")
	start := time.Now()
	redis := n.applySeed(t, ns, "pkg/kube/nodeagent/testdata/redis-demo.yaml", "-mem", "32Mi").Pods[0]
	stress := n.applySeed(t, ns, "pkg/kube/nodeagent/testdata/stress-demo.yaml", "-mem", "32Mi").Pods[0]
	redis = n.waitRunning(t, ns, redis.Name)
	stress = n.waitRunning(t, ns, stress.Name)
	if redis.Status.QOSClass != corev1.PodQOSBurstable || stress.Status.QOSClass != corev1.PodQOSBestEffort {
		t.Fatalf("QoS classes %s, %s; want Burstable, BestEffort as the seed's resources say",
			redis.Status.QOSClass, stress.Status.QOSClass)
	}
	container := n.containerCgroup(t, redis, "redis", "memory")
	pod := filepath.Dir(container)

	// The recommended profile needs the wmark files only: one Warning on the
	// Node for each, and nothing else is written.
	for _, knob := range []string{"memory.wmark_ratio", "memory.wmark_min_adj"} {
		n.waitEvent(t, "default", "Node", n.name, corev1.EventTypeWarning, "KnobUnsupported", knob+" is not supported by this kernel")
	}
	m := n.metrics(t)
	for _, knob := range []string{"memory.wmark_ratio", "memory.wmark_min_adj"} {
		if _, err := readFileErr(filepath.Join(container, knob)); err == nil {
			t.Errorf("%s exists in the container's cgroup: the kernel has it, yet the agent said it lacks it", knob)
		}
		if got := m[`locus_unsupported_knobs{knob="`+knob+`"}`]; got != 1 {
			t.Errorf("locus_unsupported_knobs{knob=%q} = %v, want 1", knob, got)
		}
	}
	for _, dir := range []string{container, pod} {
		if got := readFile(t, filepath.Join(dir, "memory.soft_limit_in_bytes")); got != memcgDefaultSoftLimit {
			t.Errorf("%s memory.soft_limit_in_bytes = %s under policy auto, want the default %s (lowLimitPercent 0)", dir, got, memcgDefaultSoftLimit)
		}
	}
	// The limits are the kubelet's and containerd's, untouched: memsw equal to
	// the limit is containerd's doing on v1.
	for _, f := range []string{"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"} {
		if got := readFile(t, filepath.Join(container, f)); got != "6442450944" {
			t.Errorf("redis %s = %s, want 6442450944 (the limit, 6Gi)", f, got)
		}
	}

	// auto with the request protected: memory.low = the request, 2Gi, on the
	// container and the pod (its total); memory.high (80 % of the limit) is
	// one more file this kernel lacks.
	patch := []byte(`{"metadata":{"annotations":{"koordinator.sh/memoryQOS":"{\"policy\": \"auto\", \"lowLimitPercent\": 100, \"throttlingPercent\": 80}"}}}`)
	if _, err := n.cp.Client.CoreV1().Pods(ns).Patch(ctxT(t), redis.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(container, "memory.soft_limit_in_bytes"), "2147483648")
	waitFile(t, filepath.Join(pod, "memory.soft_limit_in_bytes"), "2147483648")
	n.waitEvent(t, ns, "Pod", redis.Name, corev1.EventTypeNormal, "CgroupUpdated", "redis:memory.soft_limit_in_bytes=2147483648")
	n.waitEvent(t, "default", "Node", n.name, corev1.EventTypeWarning, "KnobUnsupported", "memory.high is not supported by this kernel")
	// BE, no memory request: no protection, nothing to write.
	be := n.containerCgroup(t, stress, "stress", "memory")
	if got := readFile(t, filepath.Join(be, "memory.soft_limit_in_bytes")); got != memcgDefaultSoftLimit {
		t.Errorf("stress memory.soft_limit_in_bytes = %s, want the default %s (a BE pod gets no protection)", got, memcgDefaultSoftLimit)
	}
	t.Logf("memory QoS in place %s after the pods were created", time.Since(start).Round(time.Millisecond))

	// policy none: the values the container was created with, which the pod's
	// sandbox container (never managed) still has.
	sandbox := n.sandboxCgroup(t, redis, "memory")
	if got := readFile(t, filepath.Join(sandbox, "memory.soft_limit_in_bytes")); got != memcgDefaultSoftLimit {
		t.Fatalf("sandbox %s has memory.soft_limit_in_bytes %s, not the kernel default", sandbox, got)
	}
	patch = []byte(`{"metadata":{"annotations":{"koordinator.sh/memoryQOS":"{\"policy\": \"none\"}"}}}`)
	if _, err := n.cp.Client.CoreV1().Pods(ns).Patch(ctxT(t), redis.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(container, "memory.soft_limit_in_bytes"), memcgDefaultSoftLimit)
	waitFile(t, filepath.Join(pod, "memory.soft_limit_in_bytes"), memcgDefaultSoftLimit)
	n.waitEvent(t, ns, "Pod", redis.Name, corev1.EventTypeNormal, "CgroupUpdated", "redis:memory.soft_limit_in_bytes="+memcgDefaultSoftLimit)
}
