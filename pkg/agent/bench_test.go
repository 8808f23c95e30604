package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/source"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// manyWorkloads is a config of n workloads under bench.slice on the 192-CPU
// fixture, the first half bound to CPUs of their own, as in bench/agent.
func manyWorkloads(n int, memQoS bool) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nreservedCPUs: \"0,96\"\n"+
		"resourceQOSConfig: {clusterStrategy: {lsClass: {memoryQOS: {enable: %[1]t, lowLimitPercent: 100, throttlingPercent: 80}},"+
		" beClass: {memoryQOS: {enable: %[1]t, throttlingPercent: 80}}}}\nworkloads:\n", memQoS)
	for i := 0; i < n; i++ {
		class := "LS"
		if i >= n/2 && i%2 == 1 {
			class = "BE"
		}
		fmt.Fprintf(&sb, "- name: w%03d\n  cgroup: bench.slice/w%03d\n  qosClass: %s\n", i, i, class)
		if i < n/2 {
			sb.WriteString("  resources: {requests: {cpu: 500m, memory: 64Mi}, limits: {cpu: \"1\", memory: 128Mi}}\n" +
				"  annotations: {cpuset-scheduler: \"true\", cpu-policy: spread-by-pcpus}\n")
		} else {
			sb.WriteString("  resources: {requests: {memory: 64Mi}, limits: {memory: 128Mi}}\n")
		}
	}
	return sb.String()
}

func benchHarness(b *testing.B, n int) *harness {
	tree := newCgroupTree(b, cgroup.V2, true, "0-191")
	for i := 0; i < n; i++ {
		tree.mkcg(fmt.Sprintf("bench.slice/w%03d", i))
	}
	return newHarness(b, tree, manyWorkloads(n, false), func(o *Options) { o.SysfsRoot = sysfs(b, fixture.Intel2S96C) })
}

// BenchmarkReconcileChange times a reconcile that turns memory QoS on or off
// for 200 workloads.
func BenchmarkReconcileChange(b *testing.B) {
	h := benchHarness(b, 200)
	h.reconcile()
	on := false
	defer reportCPU(b)()
	for b.Loop() {
		on = !on
		b.StopTimer()
		h.writeConfig(manyWorkloads(200, on))
		b.StartTimer()
		if res := h.a.Reconcile(); len(res.Errors) > 0 || res.Writes == 0 {
			b.Fatalf("reconcile: %d writes, errors %v", res.Writes, res.Errors)
		}
	}
}

// BenchmarkReconcileAtRest times a resync with nothing to change.
func BenchmarkReconcileAtRest(b *testing.B) {
	h := benchHarness(b, 200)
	h.reconcile()
	defer reportCPU(b)()
	for b.Loop() {
		if res := h.a.Reconcile(); len(res.Errors) > 0 || res.Writes != 0 {
			b.Fatalf("reconcile at rest: %d writes, errors %v", res.Writes, res.Errors)
		}
	}
}

// reportCPU reports the process's CPU time (user and system) per op, which
// unlike wall time does not depend on what else the machine runs.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op") }
}

func cpuTime() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// thirdPinned is n pods laid out as in a burst: every third pinned to a CPU
// of its own, the others on the shared pool.
func thirdPinned(n int) []source.Workload {
	pods := make([]source.Workload, n)
	for i := range pods {
		cpus := 0
		if i%3 == 0 {
			cpus = 1
		}
		pods[i] = pod(fmt.Sprintf("p%03d", i), cpus)
	}
	return pods
}

// BenchmarkReconcilePoolChange times the reconcile that follows a pinned
// pod's arrival or departure among 300 pods (a third pinned, the rest on
// the shared pool): the pool shrinks or grows, so every shared container's
// cpuset.cpus is rewritten in that reconcile, as in most waves of the
// Kubernetes-mode churn. Run it with TMPDIR on a tmpfs: on a disk
// filesystem each truncating write's close flushes the file, which
// cgroupfs never does.
func BenchmarkReconcilePoolChange(b *testing.B) {
	pods := thirdPinned(300)
	node := newNRINodeOn(b, fixture.Intel2S96C, "0-191", cgroup.V2, NRIOptions{}, pods...)
	extra := pod("extra", 2)
	node.tree.mkcg(extra.Plan.Cgroup)
	node.tree.mkcg(extra.Plan.Containers[0].Cgroup)
	reconcile := func(with bool) Result {
		node.src.mu.Lock()
		node.src.snap.Workloads = pods
		if with {
			node.src.snap.Workloads = append(slices.Clip(pods), extra)
		}
		node.src.mu.Unlock()
		var res Result
		node.a.call(context.Background(), func() { res = node.a.Reconcile() })
		if len(res.Errors) > 0 {
			b.Fatalf("reconcile: %v", res.Errors)
		}
		return res
	}
	for i := range 4 { // the loop's own first reconcile may take the first change
		reconcile(i%2 == 0)
	}
	with := false
	defer reportCPU(b)()
	for b.Loop() {
		with = !with
		if res := reconcile(with); res.Writes < 200 {
			b.Fatalf("%d files written: the pool was not rewritten", res.Writes)
		}
	}
}
