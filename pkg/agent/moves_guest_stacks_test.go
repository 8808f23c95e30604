package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// stacks says where a running agent is: the kernel stacks of every task
// of the guest in uninterruptible sleep (the agent's in a cgroup write) and
// of the kernel's workers busy with a work item (which it may wait on), then, on SIGQUIT, its goroutines in
// Locus's code. For a test that timed out.
func (g *guestAgent) stacks() string {
	var b strings.Builder
	tasks, _ := filepath.Glob("/proc/[0-9]*/task/[0-9]*")
	for _, task := range tasks {
		stat, _ := os.ReadFile(filepath.Join(task, "stat"))
		_, after, _ := strings.Cut(string(stat), ") ")
		stack, _ := os.ReadFile(filepath.Join(task, "stack"))
		// A kernel worker busy with a work item (the cpuset's memory
		// migration) may run or sleep interruptibly: show it too.
		if strings.HasPrefix(after, "D") || strings.Contains(string(stack), "process_one_work") {
			comm, _ := os.ReadFile(filepath.Join(task, "comm"))
			fmt.Fprintf(&b, "\ntask %s (%s) in %.1s:\n%s", strings.TrimPrefix(task, "/proc/"), strings.TrimSpace(string(comm)), after, stack)
		}
	}
	logFile := filepath.Join(filepath.Dir(g.cfg), "agent.log")
	before, _ := os.ReadFile(logFile)
	_ = g.cmd.Process.Signal(syscall.SIGQUIT)
	waitAtMost(g.exited, 10*time.Second)
	after, _ := os.ReadFile(logFile)
	for _, gr := range strings.Split(string(after[min(len(before), len(after)):]), "\n\n") {
		if strings.Contains(gr, "locus/pkg/") && b.Len() < 12000 {
			b.WriteString("\n" + gr + "\n")
		}
	}
	return b.String()
}

// waitAtMost waits for the agent to exit, but no longer than d, and says
// whether it did: a process stuck in the kernel does not die of SIGKILL
// until it returns, and the test must still end and say why.
func waitAtMost(exited <-chan struct{}, d time.Duration) bool {
	select {
	case <-exited:
		return true
	case <-time.After(d):
		return false
	}
}
