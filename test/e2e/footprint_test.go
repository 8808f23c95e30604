package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// footprint is what the agent costs the node: its CPU time and memory.
type footprint struct {
	cpu     time.Duration // CPU time used so far
	rssKiB  int           // the process's VmRSS
	cgKiB   int           // chart mode: the pod cgroup's memory.usage_in_bytes (page cache included)
	cgRSSKi int           // chart mode: its memory.stat total_rss (anonymous memory)
}

// agentFootprint reads it from the agent pod's own cgroup in chart mode (what the
// kubelet and a limit see), and from /proc for the host process.
func (n *e2eNode) agentFootprint(t testing.TB) footprint {
	t.Helper()
	pid := n.pid(t, "agent")
	f := hostFootprint(t, pid)
	if n.mode != "chart" {
		return f
	}
	pod := n.agentPod(t)
	ns, _ := strconv.ParseInt(readFile(t, filepath.Join(n.podCgroup(t, pod, "cpuacct"), "cpuacct.usage")), 10, 64)
	f.cpu = time.Duration(ns)
	mem := n.podCgroup(t, pod, "memory")
	usage, _ := strconv.Atoi(readFile(t, filepath.Join(mem, "memory.usage_in_bytes")))
	f.cgKiB = usage >> 10
	for _, line := range strings.Split(readFile(t, filepath.Join(mem, "memory.stat")), "\n") {
		if v, ok := strings.CutPrefix(line, "total_rss "); ok {
			b, _ := strconv.Atoi(v)
			f.cgRSSKi = b >> 10
		}
	}
	return f
}

// hostFootprint is a process's: its utime+stime and VmRSS.
func hostFootprint(t testing.TB, pid int) footprint {
	t.Helper()
	var f footprint
	kb, err := strconv.Atoi(strings.Fields(procStatus(t, pid, "VmRSS"))[0])
	if err != nil {
		t.Fatal(err)
	}
	f.rssKiB = kb
	stat := strings.Fields(readFile(t, fmt.Sprintf("/proc/%d/stat", pid)))
	utime, _ := strconv.Atoi(stat[13])
	stime, _ := strconv.Atoi(stat[14])
	f.cpu = time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ is 100
	return f
}

func (f footprint) String() string {
	s := fmt.Sprintf("RSS %.1f MiB", float64(f.rssKiB)/1024)
	if f.cgKiB > 0 {
		s += fmt.Sprintf(", pod cgroup memory %.1f MiB (rss %.1f MiB)", float64(f.cgKiB)/1024, float64(f.cgRSSKi)/1024)
	}
	return s
}

// The agent at rest, no pod of the tests on the node: its CPU use over 20 s and its
// memory, logged for docs/benchmarks.md. It fails only if the agent is not idle
// (over 5 % of a CPU with nothing to do).
func TestAgentFootprintAtRest(t *testing.T) {
	n := need(t)
	const window = 20 * time.Second
	before := n.agentFootprint(t)
	time.Sleep(window)
	after := n.agentFootprint(t)
	share := float64(after.cpu-before.cpu) / float64(window)
	t.Logf("agent at rest (%s): %.2f %% of a CPU; %s", n.mode, 100*share, after)
	if share > 0.05 {
		t.Errorf("the agent used %.1f %% of a CPU at rest", 100*share)
	}
}
