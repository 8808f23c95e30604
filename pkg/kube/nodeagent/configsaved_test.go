package nodeagent_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/nodeagent"
	"github.com/locus-project/locus/pkg/sloconfig"
)

// An agent restarted while ack-slo-config is malformed starts from the last
// good configuration it saved, so memory QoS stays as it was; with none
// saved it leaves the memory files alone until a good one arrives. Before,
// it restored every pod's files (memory.low 536870912 -> 0).
func TestRestartWithMalformedConfigMap(t *testing.T) {
	for _, lost := range []bool{false, true} {
		name := "saved"
		if lost {
			name = "none saved"
		}
		t.Run(name, func(t *testing.T) {
			n := configNode(t, cgroup.V1, true, lsConfig(true, 50))
			pod := n.create(webPod("web"))
			cg := n.kubelet.ContainerCgroup(pod, "web")
			half := strconv.FormatInt(gib/2, 10)
			r := n.start()
			n.waitFile(cg, "memory.low", half)
			saved := filepath.Join(n.stateDir, nodeagent.SavedConfigFile)
			raw, err := os.ReadFile(saved)
			if err != nil || !strings.Contains(string(raw), `\"lowLimitPercent\": 50`) {
				t.Fatalf("saved configuration: %s, %v", raw, err)
			}
			if err := r.stop(); err != nil {
				t.Fatal(err)
			}
			if lost {
				if err := os.Remove(saved); err != nil {
					t.Fatal(err)
				}
			}

			setConfigMap(t, n.resQoS, sloconfig.ConfigKeyResourceQoS, `{"clusterStrategy": {"lsClass": `)
			n.start()
			want := "the last good configuration stays in force"
			if lost {
				want = "memory QoS files are left as they are"
			}
			waitEvent(t, "kube-system", "ConfigMap", n.resQoS, corev1.EventTypeWarning, "ConfigInvalid", want)
			waitUntil(t, "status to show the config error", func() bool { return n.status().ConfigError != "" })
			// Several resyncs with the malformed value in force.
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if got := n.kubelet.File(cg, "memory.low"); got != half {
					t.Fatalf("memory.low = %s after a restart with a malformed ConfigMap, want %s kept", got, half)
				}
			}
			setConfigMap(t, n.resQoS, sloconfig.ConfigKeyResourceQoS, lsConfig(true, 25))
			n.waitFile(cg, "memory.low", strconv.FormatInt(gib/4, 10))
			waitUntil(t, "the config error to clear", func() bool { return n.status().ConfigError == "" })
		})
	}
}
