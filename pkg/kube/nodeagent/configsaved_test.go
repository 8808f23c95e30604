package nodeagent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// The saved configuration names the ConfigMap version in force, also when a
// new version carries the same text (a label changed, or the ConfigMap
// deleted and created again before the agent saw the deletion): a test or
// an operator waits for that version before relying on it.
func TestSavedConfigNamesTheVersionInForce(t *testing.T) {
	n := configNode(t, cgroup.V1, true, lsConfig(true, 50))
	n.start()
	savedVersion := func() string {
		var s struct {
			Values map[string]struct{ ResourceVersion string } `json:"values"`
		}
		_ = json.Unmarshal(n.fileBytes(nodeagent.SavedConfigFile), &s)
		return s.Values[n.resQoS+"/"+sloconfig.ConfigKeyResourceQoS].ResourceVersion
	}
	cms := cp.Client.CoreV1().ConfigMaps("kube-system")
	for i := range 2 {
		cm, err := cms.Get(callCtx(t), n.resQoS, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 { // the same text, a new version
			cm.Labels = map[string]string{"touched": strconv.Itoa(i)}
			if cm, err = cms.Update(callCtx(t), cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		waitUntil(t, "the saved configuration to name version "+cm.ResourceVersion, func() bool {
			return savedVersion() == cm.ResourceVersion
		})
	}
}

// An agent stopped while its caches sync stops cleanly: a SIGTERM soon after
// start is a stop, not a failure (TestSavedConfigNamesTheVersionInForce
// stops the agent as soon as its configuration is saved, which can be
// before the node's pods are read).
func TestStoppedWhileSyncingIsClean(t *testing.T) {
	n := configNode(t, cgroup.V1, true, lsConfig(true, 50))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := runKube(ctx, nodeagentOptions(n)); err != nil {
		t.Fatalf("an agent stopped before its caches synced: %v, want a clean stop", err)
	}
}
