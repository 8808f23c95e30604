package kubelet

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/internal/fuzzseed"
)

// cpuCheckpoint writes a v2 CPU checkpoint with a checksum of 0 (taken
// unchecked, as the kubelet takes it): pods of up to MaxContainers
// containers, each with the list of entry(i).
func cpuCheckpoint(def string, containers int, entry func(i int) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"policyName":"static","defaultCpuSet":%q,"entries":{`, def)
	for i := 0; i < containers; i++ {
		switch {
		case i == 0:
			b.WriteString(`"pod0":{`)
		case i%MaxContainers == 0:
			fmt.Fprintf(&b, `},"pod%d":{`, i/MaxContainers)
		default:
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"c%d":%q`, i%MaxContainers, entry(i))
	}
	if containers > 0 {
		b.WriteString("}")
	}
	b.WriteString(`},"checksum":0}`)
	return b.String()
}

// TestCheckpointBudget: the 24 KB cpu_manager_state that kept 423 MiB
// (1,500 containers of "0-8191" under a checksum of 0) is refused, having
// kept nothing, naming the entry over budget; a checkpoint at the budget
// (MaxCheckpointCPUs CPUs in all, or MaxEntries containers) is read and
// measured; one CPU or one container more is refused.
func TestCheckpointBudget(t *testing.T) {
	all := func(int) string { return "0-8191" }
	hostile := cpuCheckpoint("0", 1500, all)
	var err error
	fuzzseed.CheckKept(t, fmt.Sprintf("%d bytes of %d lists of 0-8191", len(hostile), 1500), 1<<20, time.Second, func() any {
		c, e := ParseCPUManager([]byte(hostile))
		err = e
		return c
	})
	if err == nil || !strings.Contains(err.Error(), `entries["pod0"]["c100"]: 8192 CPUs: more than the 8191 left of the budget`) {
		t.Fatalf("the hostile checkpoint: %v", err)
	}

	// The default set and three init containers' sets on every CPU.
	atCap := cpuCheckpoint("0-8191", 3, all)
	fuzzseed.CheckKept(t, fmt.Sprintf("%d CPUs in all", MaxCheckpointCPUs), 2<<20, time.Second, func() any {
		c, e := ParseCPUManager([]byte(atCap))
		err = e
		return c
	})
	if err != nil {
		t.Fatalf("at the CPU budget: %v", err)
	}
	if _, err := ParseCPUManager([]byte(cpuCheckpoint("0-8191", 4, func(i int) string { return []string{"0-8191", "0-8191", "0-8191", "0"}[i] }))); err == nil ||
		!strings.Contains(err.Error(), "more than the 0 left") {
		t.Fatalf("one CPU over the budget: %v", err)
	}

	// Empty lists: the CPU budget does not stop them.
	none := func(int) string { return "" }
	many := cpuCheckpoint("0-7", MaxEntries, none)
	fuzzseed.CheckKept(t, fmt.Sprintf("%d containers (%d bytes)", MaxEntries, len(many)), 12<<20, 3*time.Second, func() any {
		c, e := ParseCPUManager([]byte(many))
		err = e
		return c
	})
	if err != nil {
		t.Fatalf("at the container budget: %v", err)
	}
	if _, err := ParseCPUManager([]byte(cpuCheckpoint("0-7", MaxEntries+1, none))); err == nil || !strings.Contains(err.Error(), "containers in all") {
		t.Fatalf("one container over: %v", err)
	}
}
