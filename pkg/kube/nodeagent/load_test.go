package nodeagent_test

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/nodeagent"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// The load run: a 192-CPU node with loadPods pods churned in waves. It takes
// a minute or two, so it runs only with LOCUS_LOAD=1 (bench/kube/run.sh).
const (
	loadPods      = 300
	loadWaves     = 12
	loadWaveEvery = 5 * time.Second
	loadWaveSize  = 30 // pods deleted and as many created per wave
)

// loadNode is newNode on the big fixture machine, its cgroup tree on tmpfs
// like the kernel's in-memory cgroupfs.
func loadNode(t *testing.T) *node {
	t.Helper()
	// t.TempDir follows TMPDIR; everything of the test (cgroups, sysfs,
	// state) then lives on tmpfs and is removed at its end.
	t.Setenv("TMPDIR", "/dev/shm")
	ns := cp.CreateNamespace(t, "load")
	n := &node{t: t, name: ns, ns: ns, kubelet: newFakeKubelet(t, cgroup.V2, true, "0-191", "0-1"),
		stateDir: filepath.Join(t.TempDir(), "state"), logFile: filepath.Join(t.TempDir(), "agent.log"),
		resQoS: nodeagent.DefaultResourceQoSConfigMap, podQoS: nodeagent.DefaultPodQoSConfigMap}
	cp.CreateNode(t, n.name, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("192"), corev1.ResourceMemory: resource.MustParse("768Gi")})
	n.sysfs = filepath.Join(t.TempDir(), "sys")
	if err := fixture.WriteSysfs(fixture.Intel2S96C, n.sysfs); err != nil {
		t.Fatal(err)
	}
	return n
}

// loadPod is the i-th pod of the mix: a fifth bind two CPUs (40% of the
// machine at most), two fifths are LS or BE with memory QoS, the rest plain.
func loadPod(i int) *corev1.Pod {
	p := webPod(fmt.Sprintf("p%04d", i))
	switch i % 5 {
	case 0:
		p.Annotations = map[string]string{"cpuset-scheduler": "true"}
		r := &p.Spec.Containers[0].Resources
		r.Limits[corev1.ResourceCPU] = resource.MustParse("2")
		r.Requests[corev1.ResourceCPU] = resource.MustParse("2")
	case 1:
		p.Annotations = map[string]string{workload.AnnotationMemoryQoS: `{"policy": "auto"}`}
	case 2:
		p.Labels[workload.LabelQoSClass] = "BE"
		p.Annotations = map[string]string{workload.AnnotationMemoryQoS: `{"policy": "auto"}`}
	}
	return p
}

func isBound(p *corev1.Pod) bool { return p.Annotations["cpuset-scheduler"] == "true" }

func TestLoad(t *testing.T) {
	if os.Getenv("LOCUS_LOAD") != "1" {
		t.Skip("the load run takes minutes: LOCUS_LOAD=1 (bench/kube/run.sh)")
	}
	n := loadNode(t)
	metricsAddr := freeAddr(t)
	took := &reconcileTimes{}
	before := sample()
	n.start(func(o *kubeOptions) {
		o.Agent.MetricsAddr = metricsAddr
		o.Agent.Logger = quietLogger(t, n.logFile, took)
	})
	r := churn(t, n, loadAgent{metricsAddr: metricsAddr, took: took, sample: sample,
		profile: func() func() { return cpuProfile(t, os.Getenv("LOCUS_LOAD_CPUPROFILE")) }})
	runtime.GC()
	t.Logf("LOAD %s | process RSS %d MiB (+%d MiB since agent start, peak %d MiB) Go heap in use %d MiB | CPU %.2f s = %.0f%% of a core during churn (test process: agent + API clients + fake kubelet; control plane excluded)",
		r, r.end.rss>>20, (r.end.rss-before.rss)>>20, r.end.hwm>>20, heapInuse()>>20, r.cpu().Seconds(), r.cpuShare())
}

// quietLogger keeps warnings and errors only, in file: debug logging of
// every reconcile would be part of what is measured. The duration of each
// reconcile (the agent's "reconciled" debug line) goes to took, unformatted.
func quietLogger(t *testing.T, file string, took *reconcileTimes) *slog.Logger {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	took.next = slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelWarn})
	if tr := os.Getenv("LOCUS_LOAD_TRACE"); tr != "" {
		g, err := os.Create(tr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		took.trace = slog.NewTextHandler(g, &slog.HandlerOptions{Level: slog.LevelDebug})
	}
	return slog.New(took)
}

// warnings counts the agent's logged warnings by reason, those about a
// pod still running at the end apart ("reason/live"), and logs the first
// lines of those: the agent's log is gone with the test's directory.
func warnings(t *testing.T, file string, live map[string]*corev1.Pod) map[string]int {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.Contains(line, "level=WARN") && !strings.Contains(line, "level=ERROR") {
			continue
		}
		reason := "unspecified"
		if _, r, ok := strings.Cut(line, " reason="); ok {
			reason, _, _ = strings.Cut(r, " ")
		}
		if _, w, ok := strings.Cut(line, " workload="); ok {
			_, name, _ := strings.Cut(strings.Fields(w)[0], "/")
			if live[name] != nil {
				reason += "/live"
				if out[reason] < 3 { // the line itself, so a failure says which write and why
					t.Logf("agent warning about a pod still running: %s", line)
				}
			}
		}
		out[reason]++
	}
	return out
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// bindLatency times each bound pod from its Running status to the moment
// its container's cpuset.cpus holds exactly its CPUs.
type bindLatency struct {
	n       *node
	pending []pendingBind
	done    []time.Duration
}

type pendingBind struct {
	pod   *corev1.Pod
	since time.Time
}

func (b *bindLatency) watch(p *corev1.Pod) { b.pending = append(b.pending, pendingBind{p, time.Now()}) }

// wait polls the pending pods until each is bound.
func (b *bindLatency) wait(t *testing.T, limit time.Duration, during func()) {
	t.Helper()
	deadline := time.Now().Add(limit)
	last := time.Now()
	for len(b.pending) > 0 {
		if during != nil && time.Since(last) >= time.Second {
			during()
			last = time.Now()
		}
		if time.Now().After(deadline) {
			p := b.pending[0].pod
			t.Fatalf("%d pods still not bound after %v, e.g. %s: cpuset.cpus %q", len(b.pending), limit, p.Name,
				b.n.kubelet.File(b.n.kubelet.ContainerCgroup(p, "web"), "cpuset.cpus"))
		}
		b.pending = slices.DeleteFunc(b.pending, func(pb pendingBind) bool {
			cpus, err := cpuset.Parse(b.n.kubelet.File(b.n.kubelet.ContainerCgroup(pb.pod, "web"), "cpuset.cpus"))
			if err != nil || cpus.Size() != 2 {
				return false
			}
			b.done = append(b.done, time.Since(pb.since))
			return true
		})
		time.Sleep(5 * time.Millisecond)
	}
}

func (b *bindLatency) quantile(q float64) time.Duration {
	return quantile(b.done, q).Round(time.Millisecond)
}

// quantile is the q-quantile of ds, the largest for q = 1; zero when empty.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}
