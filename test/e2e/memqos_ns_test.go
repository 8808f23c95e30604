package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/internal/kubetest"
)

// Scenario 2b: the seed's ack-slo-pod-config (enabledNamespaces allow-ns,
// disabledNamespaces block-ns) and its ack-slo-config (memory QoS on for LS
// and BE), both unchanged, with an ordinary Burstable pod (LS by its
// Kubernetes class, no annotation) in allow-ns, in block-ns and in a third
// namespace. The switch in force is told by the agent's status: on by the
// namespace in allow-ns, off by the namespace in block-ns, on by the class
// elsewhere. (On this upstream v1 kernel the class's table defaults write no
// cgroup file, so the files cannot tell the three apart.)
func TestMemoryQoSSeedNamespaces(t *testing.T) {
	n := need(t)
	n.sloConfig(t)
	n.cp.ApplyFile(t, filepath.Join(n.repo, "internal/kubetest/testdata/ack-slo-pod-config.yaml"))
	t.Cleanup(func() {
		_ = n.cp.Client.CoreV1().ConfigMaps("kube-system").Delete(context.Background(), "ack-slo-pod-config", metav1.DeleteOptions{})
	})
	for _, name := range []string{"allow-ns", "block-ns"} { // the seed's names
		if _, err := n.cp.Client.CoreV1().Namespaces().Create(ctxT(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.deleteAll(t, name) })
	}
	other := n.namespace(t, "memqos-ns")
	for _, ns := range []string{"allow-ns", "block-ns", other} {
		p := n.createPod(t, ns, podSpec{name: "web", memory: "64Mi/128Mi", args: []string{"-mem", "32Mi"}})
		n.waitRunning(t, ns, p.Name)
	}
	type switched struct {
		on  bool
		why string
	}
	want := map[string]switched{
		"allow-ns/web": {true, `namespace "allow-ns" is in enabledNamespaces: clusterStrategy.lsClass.memoryQOS parameters`},
		"block-ns/web": {false, `namespace "block-ns" is in disabledNamespaces`},
		other + "/web": {true, "clusterStrategy.lsClass.memoryQOS.enable is true"},
	}
	var last string
	kubetest.WaitFor(t, "the agent's status to show each namespace's switch", fileTimeout, func(context.Context) (bool, error) {
		raw, err := os.ReadFile(filepath.Join(n.dir, "agent", "status.json"))
		if err != nil {
			return false, nil
		}
		var st struct {
			Workloads []struct {
				Name      string
				MemoryQOS struct {
					Enabled bool
					Reason  string
				} `json:"memoryQOS"`
			}
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return false, nil
		}
		var got []string
		ok := 0
		for _, w := range st.Workloads {
			if exp, found := want[w.Name]; found {
				got = append(got, fmt.Sprintf("%s: on %v, %s", w.Name, w.MemoryQOS.Enabled, w.MemoryQOS.Reason))
				if w.MemoryQOS.Enabled == exp.on && strings.Contains(w.MemoryQOS.Reason, exp.why) {
					ok++
				}
			}
		}
		last = strings.Join(got, "; ")
		return ok == len(want), nil
	})
	t.Logf("%s", last)
}
