package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locus-project/locus/internal/kubetest"
)

// killRounds and killBurst size the kill campaign of the agent on the node:
// rounds of killBurst pods created at once, the agent killed in each.
const (
	killRounds = 3
	killBurst  = 12
)

// The agent killed with SIGKILL in the middle of a burst of pods, in rounds:
// a pinned pod runs throughout (its CPU off the others'), each round creates
// killBurst pods (LS with memory QoS, BE, plain) and kills the agent at a
// random point 0.5–4 s after the burst starts, while it is deciding and
// writing for them. In chart mode the kubelet restarts the container, as it
// would on a node; in host mode the test starts it again. After each round
// every pod is managed (its cpuset off the pinned CPU, an LS pod's soft limit
// = its request, a locus_workload_cpus series), the pinned pod kept its CPU,
// and the agent neither found its state corrupt nor lost its originals (no
// OriginalsCorrupt, OriginalsLost or CheckpointRebuilt event, no file set
// aside). Then every pod goes and no state about them remains.
func TestAgentKilledMidBurst(t *testing.T) {
	n := need(t)
	n.sloConfig(t)
	ns := n.namespace(t, "kill")
	pinnedPod, pinned := n.pinnedPod(t, ns, "pinned")
	pinnedDir := n.containerCgroup(t, pinnedPod, "w", "cpuset")
	c := &churn{n: n, ns: ns, pinned: pinned}
	since := time.Now()
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("kill points from seed %d", seed)

	var all []string
	for round := 1; round <= killRounds; round++ {
		names := make([]string, killBurst)
		for i := range names {
			names[i] = fmt.Sprintf("k%d-%02d", round, i)
		}
		after := 500*time.Millisecond + time.Duration(rng.Int64N(int64(3500*time.Millisecond)))
		t0 := time.Now()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.create(t, names)
		}()
		time.Sleep(after)
		n.killAgent(t)
		wg.Wait()
		all = append(all, names...)
		c.waitManaged(t, all, 5*time.Minute)
		checkAllowed(t, pinnedDir, pinned.String())
		t.Logf("round %d: agent killed %s into a burst of %d; all %d pods managed %s after the burst began",
			round, after.Round(10*time.Millisecond), killBurst, len(all), time.Since(t0).Round(100*time.Millisecond))
	}
	n.checkStateSound(t, since)

	n.deleteAll(t, ns)
	kubetest.WaitFor(t, "no state of "+ns+" in the agent", fileTimeout, func(context.Context) (bool, error) {
		for name, content := range n.agentState(t) {
			if strings.Contains(content, ns+"/") {
				return false, &stateError{name, content}
			}
		}
		return true, nil
	})
}

// killAgent kills the agent with SIGKILL and waits until it serves again:
// in chart mode restarted by the kubelet (its container's restart count up
// by one, ready), in host mode started again by hack/e2e.sh.
func (n *e2eNode) killAgent(t *testing.T) {
	t.Helper()
	pid := n.pid(t, "agent")
	var restarts int32
	if n.mode == "chart" {
		restarts = n.agentPod(t).Status.ContainerStatuses[0].RestartCount
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 the agent (pid %d): %v", pid, err)
	}
	if n.mode != "chart" {
		kubetest.WaitFor(t, "the killed agent to be gone", 30*time.Second, func(context.Context) (bool, error) {
			return syscall.Kill(pid, 0) != nil, nil
		})
		n.e2e(t, "start", "agent")
		return
	}
	// The kubelet's back-off before a restart: at most 2 s on the test's node
	// (hack/e2e-lib.sh), 10 s, 20 s, 40 s ... on a default kubelet.
	kubetest.WaitFor(t, "the agent's container restarted and ready", 3*time.Minute, func(ctx context.Context) (bool, error) {
		p := n.agentPod(t)
		if len(p.Status.ContainerStatuses) == 0 {
			return false, fmt.Errorf("no container status")
		}
		s := p.Status.ContainerStatuses[0]
		if s.RestartCount <= restarts || !s.Ready {
			return false, fmt.Errorf("restarts %d, ready %v", s.RestartCount, s.Ready)
		}
		return true, nil
	})
	// Ready says the container runs, not that the agent serves yet.
	kubetest.WaitFor(t, "the restarted agent to serve", time.Minute, func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.agentMetrics+"/healthz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return true, nil
	})
}

// checkStateSound fails when the agent, since the given time, found its
// checkpoint or its originals damaged: an event saying so, or a file set
// aside beside them.
func (n *e2eNode) checkStateSound(t *testing.T, since time.Time) {
	t.Helper()
	bad := map[string]bool{"OriginalsCorrupt": true, "OriginalsLost": true, "CheckpointRebuilt": true}
	for _, line := range strings.Split(readFile(t, filepath.Join(n.dir, "agent", "events.jsonl")), "\n") {
		var e agentEvent
		if json.Unmarshal([]byte(line), &e) == nil && !e.Time.Before(since) && bad[e.Reason] {
			t.Errorf("the agent found its state damaged: %s %s: %s", e.Type, e.Reason, e.Message)
		}
	}
	entries, err := os.ReadDir(filepath.Join(n.dir, "agent"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".corrupt") {
			if fi, err := e.Info(); err == nil && !fi.ModTime().Before(since) {
				t.Errorf("the agent set a state file aside: %s", e.Name())
			}
		}
	}
}
