package nodeagent_test

import (
	"fmt"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/locus-project/locus/pkg/cgroup"
)

// A nodeStrategies entry of resource-qos-config applies on the nodes its
// selector picks by the agent's own Node's labels: labelling the node brings
// the entry's lowLimitPercent into force, removing the label the cluster's;
// on cgroup v1 (the fake tree has the Anolis memory.low) and v2.
func TestNodeStrategyFollowsNodeLabels(t *testing.T) {
	for _, tc := range []struct {
		name    string
		v       cgroup.Version
		systemd bool
	}{{"v1 systemd", cgroup.V1, true}, {"v2 cgroupfs", cgroup.V2, false}} {
		t.Run(tc.name, func(t *testing.T) { nodeStrategyFollowsLabels(t, tc.v, tc.systemd) })
	}
}

func nodeStrategyFollowsLabels(t *testing.T, v cgroup.Version, systemd bool) {
	cfg := `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": true, "lowLimitPercent": 1}}},
	  "nodeStrategies": [{"name": "big", "nodeSelector": {"matchLabels": {"locus-test/pool": "big"}},
	    "lsClass": {"memoryQOS": {"lowLimitPercent": 5}}}]}`
	n := configNode(t, v, systemd, cfg)
	pod := n.create(webPod("web"))
	cg := n.kubelet.ContainerCgroup(pod, "web")
	n.start()
	low := func(pct int64) string { return strconv.FormatInt(gib*pct/100, 10) }
	n.waitFile(cg, "memory.low", low(1))

	label := func(value string) {
		t.Helper()
		patch := fmt.Sprintf(`{"metadata": {"labels": {"locus-test/pool": %s}}}`, value)
		if _, err := cp.Client.CoreV1().Nodes().Patch(callCtx(t), n.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	label(`"big"`)
	n.waitFile(cg, "memory.low", low(5))
	label(`"small"`)
	n.waitFile(cg, "memory.low", low(1))
	label(`"big"`)
	n.waitFile(cg, "memory.low", low(5))
	label(`null`)
	n.waitFile(cg, "memory.low", low(1))
}
