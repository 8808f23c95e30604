package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/pkg/kube/nrt"
)

// capAgent is the agent's effective capability set as the chart gives it:
// CAP_SYS_PTRACE (19) and CAP_SYS_NICE (23), as /proc/PID/status shows it.
const capAgent = "0000000000880000"

// The agent runs on the real node as the chart installs it by default: not
// privileged, its process holding exactly CAP_SYS_NICE and CAP_SYS_PTRACE,
// no new privileges, a read-only root filesystem; /status and /ui are
// served on its pod's loopback only, /metrics and /healthz on the pod's IP;
// the locus commands that read the agent work in its pod (kubectl exec);
// it publishes its node's report through the admission policy. Every other
// scenario runs with the same agent.
func TestAgentLeastPrivilegeOnTheNode(t *testing.T) {
	n := need(t)
	if n.mode != "chart" {
		t.Skip("Locus runs as host processes (LOCUS_E2E_MODE=host): the chart's security context is not in force")
	}
	pod := n.agentPod(t)
	if sc := pod.Spec.Containers[0].SecurityContext; sc == nil || sc.Privileged == nil || *sc.Privileged {
		t.Fatalf("the agent's pod is privileged: %+v", sc)
	}
	pid := n.pid(t, "agent")
	if got := procStatus(t, pid, "CapEff"); got != capAgent {
		t.Errorf("agent process %d: CapEff %s, want %s (SYS_NICE and SYS_PTRACE)", pid, got, capAgent)
	}
	if got := procStatus(t, pid, "NoNewPrivs"); got != "1" {
		t.Errorf("agent process %d: NoNewPrivs %s, want 1", pid, got)
	}
	root := ""
	for _, line := range strings.Split(readFile(t, fmt.Sprintf("/proc/%d/mountinfo", pid)), "\n") {
		if f := strings.Fields(line); len(f) > 5 && f[4] == "/" {
			root = f[5]
		}
	}
	if !strings.HasPrefix(root, "ro,") && root != "ro" {
		t.Errorf("agent process %d: its root is mounted %q, want read-only", pid, root)
	}

	port := n.agentMetrics[strings.LastIndex(n.agentMetrics, ":")+1:]
	onIP := pod.Status.PodIP + ":" + port
	for _, tc := range []struct {
		addr, path string
		served     bool
	}{
		{onIP, "/metrics", true}, {onIP, "/healthz", true},
		{onIP, "/status", false}, {onIP, "/ui", false}, {onIP, "/ui/snapshot.json", false},
		{n.agentMetrics, "/status", true}, {n.agentMetrics, "/ui/snapshot.json", true},
	} {
		code := httpCode(t, "http://"+tc.addr+tc.path)
		if served := code == http.StatusOK; served != tc.served {
			t.Errorf("GET %s%s: %d, want served %v", tc.addr, tc.path, code, tc.served)
		}
	}

	cmds := [][]string{{"locus", "status"}, {"locus", "top", "--once"}}
	if _, err := os.Stat(filepath.Join(n.dir, "agent", "events.jsonl")); err == nil {
		cmds = append(cmds, []string{"locus", "events"}) // it says so when there is none yet
	}
	for _, cmd := range cmds {
		args := append([]string{"-n", n.locusNS, "exec", pod.Name, "-c", "agent", "--"}, cmd...)
		kubectl := n.cp.Kubectl(args...)
		kubectl.Env = append(kubectl.Env, "HOME="+t.TempDir()) // its cache, not beside the test's sources
		out, err := kubectl.CombinedOutput()
		if err != nil {
			t.Errorf("kubectl exec %s: %v\n%s", strings.Join(cmd, " "), err, out)
		} else if cmd[1] == "top" && strings.Contains(string(out), "no agent at") {
			t.Errorf("locus top in the agent's pod does not reach the agent:\n%s", out)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.cp.Dynamic.Resource(nrt.GVR).Get(ctx, n.name, metav1.GetOptions{}); err != nil {
		t.Errorf("the agent's NodeResourceTopology %s: %v", n.name, err)
	}
}

func httpCode(t *testing.T, url string) int {
	t.Helper()
	client := http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
