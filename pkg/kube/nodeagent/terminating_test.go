package nodeagent_test

import (
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
)

// A pod being deleted goes quietly: the kubelet stops its containers and
// removes their cgroups while the pod still says Running, and the agent
// posts no warning and logs no error about it. Its CPUs stay its own (the
// shared pool still leaves them out) until its pod cgroup is gone; then
// they are released.
func TestTerminatingPodGoesQuietly(t *testing.T) {
	n := newNode(t, cgroup.V1, false)
	bound, shared := n.create(boundPod("leaving")), n.create(webPod("staying"))
	n.start()
	boundCg, sharedCg := n.kubelet.ContainerCgroup(bound, "web"), n.kubelet.ContainerCgroup(shared, "web")
	n.waitFileMatch(boundCg, "cpuset.cpus", "2 CPUs", func(s string) bool { c, err := cpuset.Parse(s); return err == nil && c.Size() == 2 })
	held := n.checkpoint().Assignments[n.ns+"/leaving"].CPUs
	pool := n.waitFileMatch(sharedCg, "cpuset.cpus", "without "+held.String(), func(s string) bool {
		c, err := cpuset.Parse(s)
		return err == nil && c.Size() > 0 && c.Intersection(held).IsEmpty()
	})

	// A graceful deletion: nothing confirms it (no kubelet), so the pod
	// stays, terminating, with its status saying Running.
	grace := int64(300)
	if err := cp.Client.CoreV1().Pods(n.ns).Delete(callCtx(t), bound.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"cpuset", "cpu", "memory"} {
		if err := os.RemoveAll(n.kubelet.dir(c, boundCg)); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "the agent to see the pod terminating", func() bool {
		w, ok := findWorkload(n.status(), n.ns+"/leaving")
		return ok && strings.HasPrefix(w.MemoryQOS.Reason, "terminating")
	})
	if got := n.checkpoint().Assignments[n.ns+"/leaving"].CPUs; !got.Equals(held) {
		t.Fatalf("the terminating pod holds %s, had %s", got, held)
	}
	if got := n.kubelet.File(sharedCg, "cpuset.cpus"); got != pool {
		t.Fatalf("the shared pool went from %s to %s while the pod terminates", pool, got)
	}

	n.kubelet.Remove(bound)
	waitEvent(t, n.ns, "Pod", "leaving", corev1.EventTypeNormal, "CPUsReleased")
	n.waitFileMatch(sharedCg, "cpuset.cpus", "with "+held.String(), func(s string) bool {
		c, err := cpuset.Parse(s)
		return err == nil && held.IsSubsetOf(c)
	})
	if c := n.checkpoint(); len(c.Workloads) != 1 || len(c.Assignments) != 0 {
		t.Errorf("checkpoint after the pod left: %+v", c)
	}
	for _, e := range events(t, n.ns, "Pod", "leaving") {
		if e.Type == corev1.EventTypeWarning {
			t.Errorf("warning on the terminating pod: %s: %s", e.Reason, e.Message)
		}
	}
	log, err := os.ReadFile(n.logFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(log), "\n") {
		if (strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR")) && strings.Contains(line, "leaving") {
			t.Errorf("agent log: %s", line)
		}
	}
}
