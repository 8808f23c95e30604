package integration

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/nodeagent"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/kube/podcgroup"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// machine is every test node: two NUMA nodes of four two-thread cores.
// Node 0 has CPUs 0-3 and 8-11, node 1 4-7 and 12-15; c and c^8 are
// siblings. reserved (core 0) is the kubelet's --reserved-cpus, given to
// the agent too: 14 CPUs are left, 3 whole cores on NUMA node 0 and 4 on 1.
var (
	machine = fixture.Shape{Name: "2s-4c-ht", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1, CoresPerSocket: 4,
		ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 << 30}
	reserved = cpuset.New(0, 8)
)

func numaOf(cpu int) int { return (cpu % 8) / 4 }

// cluster is a test's nodes: kwok keeps them Ready and runs their pods;
// with agents, a Locus agent per node manages its pods on a fake cgroup
// tree and publishes its NodeResourceTopology.
type cluster struct {
	t     *testing.T
	ns    string // the test's namespace; nodes are named after it
	nodes map[string]*testNode
}

type testNode struct {
	name  string
	root  string // the fake cgroup root (v2, cgroupfs driver)
	sysfs string
	state string
	log   string
}

// newCluster makes n kwok nodes (16 CPUs, labelled policy=intel7 as the
// seed's nginx asks) and, with agents, a node agent for each. Everything
// is removed when the test ends.
func newCluster(t *testing.T, n int, agents bool) *cluster {
	t.Helper()
	setup(t)
	cp.StartKwok(t)
	c := &cluster{t: t, ns: namespace(t, "sched"), nodes: map[string]*testNode{}}
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"),
		corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")}
	for i := range n {
		name := fmt.Sprintf("%s-%d", c.ns, i)
		cp.CreateFakeNode(t, name, capacity)
		c.label(name, "policy", "intel7")
		t.Cleanup(func() { c.deleteNode(name) })
		cp.WaitNodeReady(t, name, 30*time.Second)
		c.nodes[name] = &testNode{name: name}
	}
	if agents {
		c.runCgroups()
		for _, nd := range c.nodes {
			c.startAgent(nd)
		}
		// Every node's report is out before a test creates pods: pods
		// placed while only some nodes can take them pile onto those,
		// and a test's expectations of spreading then fail by timing.
		for name := range c.nodes {
			kubetest.WaitFor(t, "the agent's report of "+name, 30*time.Second, func(ctx context.Context) (bool, error) {
				_, err := cp.Dynamic.Resource(nrt.GVR).Get(ctx, name, metav1.GetOptions{})
				return err == nil, err
			})
		}
	}
	return c
}

func (c *cluster) label(node, k, v string) {
	c.t.Helper()
	patch := fmt.Sprintf(`{"metadata": {"labels": {%q: %q}}}`, k, v)
	if _, err := cp.Client.CoreV1().Nodes().Patch(callCtx(c.t), node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		c.t.Fatal(err)
	}
}

// deleteNode removes a node and its report, so that later tests' pods do
// not land on it.
func (c *cluster) deleteNode(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = cp.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	_ = cp.Dynamic.Resource(nrt.GVR).Delete(ctx, name, metav1.DeleteOptions{})
}

// namespace creates a namespace whose pods are deleted when the test ends,
// so that no pod left pending is scheduled in a later test.
func namespace(t *testing.T, prefix string) string {
	ns := cp.CreateNamespace(t, prefix)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		zero := int64(0)
		err := cp.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		if err != nil {
			t.Errorf("deleting the pods of %s: %v", ns, err)
		}
	})
	return ns
}

// names are the nodes' names.
func (c *cluster) names() []string {
	var out []string
	for n := range c.nodes {
		out = append(out, n)
	}
	return out
}

// runCgroups plays the part of the kubelet the agent sees: a pod bound to
// one of the nodes gets its pod cgroup under that node's cgroup root, and
// loses it when the pod is gone. (kwok reports no container IDs, so there
// are no container cgroups: the agent manages the pods, holds their CPUs
// and reports them, and has no container to write.)
func (c *cluster) runCgroups() {
	for _, nd := range c.nodes {
		nd.root = c.t.TempDir()
		for _, d := range []string{"", "kubepods", "kubepods/burstable", "kubepods/besteffort"} {
			mkcg(c.t, filepath.Join(nd.root, d))
		}
		writeFile(c.t, filepath.Join(nd.root, "cpuset.cpus.effective"), "0-15")
		writeFile(c.t, filepath.Join(nd.root, "cpuset.mems.effective"), "0-1")
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := informers.NewSharedInformerFactory(cp.Client, 0)
	inf := f.Core().V1().Pods().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.podCgroup(obj, true) },
		UpdateFunc: func(_, obj any) { c.podCgroup(obj, true) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			c.podCgroup(obj, false)
		},
	})
	if err != nil {
		c.t.Fatal(err)
	}
	f.Start(ctx.Done())
	c.t.Cleanup(func() { cancel(); f.Shutdown() })
}

func (c *cluster) podCgroup(obj any, present bool) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	nd := c.nodes[pod.Spec.NodeName]
	if nd == nil || nd.root == "" || pod.Status.QOSClass == "" {
		return
	}
	tier := "kubepods"
	if pod.Status.QOSClass != corev1.PodQOSGuaranteed {
		tier += "/" + strings.ToLower(string(pod.Status.QOSClass))
	}
	dir := filepath.Join(nd.root, tier, "pod"+string(pod.UID))
	if !present || pod.DeletionTimestamp != nil {
		_ = os.RemoveAll(dir)
		return
	}
	if _, err := os.Stat(dir); err == nil {
		return
	}
	mkcg(c.t, dir)
}

// mkcg creates a cgroup v2 directory with the files the kernel would.
func mkcg(t *testing.T, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Error(err)
		return
	}
	for name, val := range map[string]string{"cgroup.controllers": "cpuset cpu memory", "cgroup.subtree_control": "cpuset cpu memory",
		"cgroup.procs": "", "cpuset.cpus": "", "cpuset.mems": "", "cpu.max": "max 100000", "cpu.weight": "100",
		"memory.min": "0", "memory.low": "0", "memory.high": "max", "memory.max": "max"} {
		writeFile(t, filepath.Join(dir, name), val)
	}
}

func writeFile(t *testing.T, path, val string) {
	if err := os.WriteFile(path, []byte(val+"\n"), 0o644); err != nil {
		t.Error(err)
	}
}

// startAgent runs the node agent in --node-name mode, in-process, as the
// chart's agent service account.
func (c *cluster) startAgent(nd *testNode) {
	c.t.Helper()
	dir := c.t.TempDir()
	nd.sysfs, nd.state, nd.log = filepath.Join(dir, "sys"), filepath.Join(dir, "state"), filepath.Join(dir, "agent.log")
	if err := fixture.WriteSysfs(machine, nd.sysfs); err != nil {
		c.t.Fatal(err)
	}
	logf, err := os.Create(nd.log)
	if err != nil {
		c.t.Fatal(err)
	}
	ao := agent.Options{StateDir: nd.state, SysfsRoot: nd.sysfs, CgroupRoot: nd.root, CgroupVersion: cgroup.V2,
		Resync: 10 * time.Second, Logger: slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	o := nodeagent.RunOptions{
		Config:         cp.ServiceAccountConfig(c.t, chartNamespace, agentSA),
		NRTMinInterval: 100 * time.Millisecond,
		Source: nodeagent.SourceOptions{NodeName: nd.name, Reserved: reserved, CgroupDriver: podcgroup.Cgroupfs,
			DecisionKeyFile: keyFile},
		Logger: ao.Logger, StateDir: ao.StateDir,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- nodeagent.Run(ctx, o, func(src *nodeagent.Source) error { return agent.RunOn(ctx, ao, src) })
	}()
	var once sync.Once
	c.t.Cleanup(func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil && err != context.Canceled {
					c.t.Errorf("agent %s: %v", nd.name, err)
				}
			case <-time.After(30 * time.Second):
				c.t.Errorf("agent %s did not stop", nd.name)
			}
			logf.Close()
			if c.t.Failed() {
				if b, err := os.ReadFile(nd.log); err == nil {
					c.t.Logf("agent %s log (end):\n%s", nd.name, tail(string(b), 25))
				}
			}
		})
	})
}
