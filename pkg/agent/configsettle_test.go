package agent

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/hostsource"
	"github.com/locus-project/locus/pkg/status"
)

const twoCommands = head + `workloads:
- {name: keep, command: [sleep, "600"]}
- {name: tail, command: [sleep, "601"]}
`

// A config written in two steps (a valid prefix, the rest half a second
// later) is acted on only once complete: the workload the prefix lacks is
// never stopped. A removal written at once takes effect after the settle.
func TestHalfWrittenConfigIsNotActedOn(t *testing.T) {
	if inGuest() {
		// Its 0.5 s and 1 s steps assume a native CPU; the guest's is
		// emulated, and nothing here depends on NUMA.
		t.Skip("timing test: runs on the host (make unit)")
	}
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	tree.mkcg("locus.slice/keep", "locus.slice/tail")
	h := newHarness(t, tree, twoCommands, func(o *Options) { o.Resync = time.Hour })
	t.Cleanup(func() { killOwned(h.opts.StateDir) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, func() bool { return len(ownedProcs(h.opts.StateDir, "tail")) == 1 })
	first := ownedProcs(h.opts.StateDir, "tail")[0]

	next := strings.Replace(twoCommands, `reservedCPUs: "0"`, `reservedCPUs: "0-1"`, 1)
	prefix := next[:strings.Index(next, "- {name: tail")]
	if err := os.WriteFile(h.cfgFile, []byte(prefix), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if err := os.WriteFile(h.cfgFile, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
	// The complete document is applied without a resync: the loader asks
	// for a reconcile once it has settled.
	waitFor(t, func() bool {
		st, err := status.Read(h.opts.StateDir)
		return err == nil && st.Node.Reserved == "0-1"
	})
	if got := ownedProcs(h.opts.StateDir, "tail"); len(got) != 1 || got[0].Process != first.Process {
		t.Fatalf("tail runs as %v, want still %v: the half-written file was acted on; events %+v", got, first.Process, h.events())
	}
	for _, e := range h.events() {
		if e.Workload == "tail" && (e.Reason == "WorkloadStopped" || e.Reason == "WorkloadRemoved") {
			t.Errorf("event %s %s: %s", e.Reason, e.Workload, e.Message)
		}
	}

	if err := os.WriteFile(h.cfgFile, []byte(prefix), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(hostsource.DefaultConfigSettle / 2)
	if len(ownedProcs(h.opts.StateDir, "tail")) != 1 {
		t.Fatalf("tail stopped before the config settled (%s)", hostsource.DefaultConfigSettle)
	}
	waitFor(t, func() bool { return len(ownedProcs(h.opts.StateDir, "tail")) == 0 })
}
