package nodeagent_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/decisiontest"
	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/nodeagent"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

var cp *kubetest.ControlPlane

func TestMain(m *testing.M) { kubetest.Main(m, &cp) }

// machine is the fixture node: two sockets, one NUMA node each, four cores
// with two threads. Node 0 has CPUs 0-3 and 8-11, node 1 4-7 and 12-15.
var machine = fixture.Shape{Name: "2s-4c-ht", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1, CoresPerSocket: 4,
	ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 << 30}

// reserved is core 0 of node 0, as a kubelet's --reserved-cpus would be.
var reserved = cpuset.New(0, 8)

const (
	agentNamespace = "locus-system"
	agentAccount   = "locus-agent"
)

var setupOnce sync.Once

// agentConfig acts as the agent's service account, with the Helm chart's
// RBAC applied: the agent in these tests can do exactly what it can in a
// cluster, no more. The NodeResourceTopology CRD is installed too.
func agentConfig(t *testing.T) *rest.Config {
	t.Helper()
	setupOnce.Do(func() {
		ctx := callCtx(t)
		_, err := cp.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agentNamespace}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		cp.ApplyYAML(t, []byte(helmTemplate(t, "--show-only", "templates/rbac.yaml")))
		cp.InstallNodeResourceTopologyCRD(t)
	})
	return cp.ServiceAccountConfig(t, agentNamespace, agentAccount)
}

// helmTemplate renders the chart with the pinned helm (hack/helm-check.sh
// installs it).
func helmTemplate(t *testing.T, args ...string) string {
	t.Helper()
	bin := os.Getenv("LOCUS_HELM")
	if bin == "" {
		bin = kubetest.RepoPath(t, ".cache/bin/helm")
	}
	home := t.TempDir()
	cmd := exec.Command(bin, append([]string{"template", "locus", kubetest.RepoPath(t, "deploy/helm/locus"), "--namespace", agentNamespace}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm template (install helm with hack/helm-check.sh --install-only, or set LOCUS_HELM): %v\n%s", err, out)
	}
	return string(out)
}

func callCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// node is one fake node: its API object, its cgroups, its sysfs, and the
// agent's state directory.
type node struct {
	t        *testing.T
	name, ns string // the node is named like its test namespace
	kubelet  *fakeKubelet
	sysfs    string
	stateDir string
	logFile  string
	// The ConfigMaps the agent reads, in kube-system.
	resQoS, podQoS string
	// writes records the agent's requests that change something.
	writes requestLog
}

// requestLog records the write requests (not get, list or watch) that
// pass through a client.
type requestLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.Method != http.MethodGet {
			l.mu.Lock()
			l.reqs = append(l.reqs, r.Method+" "+r.URL.Path)
			l.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

// since returns the requests recorded after the first n.
func (l *requestLog) since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.reqs[min(n, len(l.reqs)):]...)
}

func (l *requestLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reqs)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func newNode(t *testing.T, v cgroup.Version, systemd bool) *node {
	t.Helper()
	ns := cp.CreateNamespace(t, "na")
	n := &node{t: t, name: ns, ns: ns, kubelet: newFakeKubelet(t, v, systemd, "0-15", "0-1"),
		stateDir: filepath.Join(t.TempDir(), "state"), logFile: filepath.Join(t.TempDir(), "agent.log"),
		resQoS: nodeagent.DefaultResourceQoSConfigMap, podQoS: nodeagent.DefaultPodQoSConfigMap}
	cp.CreateNode(t, n.name, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("32Gi")})
	n.sysfs = filepath.Join(t.TempDir(), "sys")
	if err := fixture.WriteSysfs(machine, n.sysfs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if log, err := os.ReadFile(n.logFile); err == nil {
				t.Logf("agent log:\n%s", tail(string(log), 60))
			}
		}
	})
	return n
}

func tail(s string, lines int) string {
	parts := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return strings.Join(parts, "\n")
}

// running is an agent started by start.
type running struct {
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// start runs the Kubernetes-mode agent in-process, as the chart's service
// account, until stop or the end of the test.
func (n *node) start(mods ...func(*kubeOptions)) *running {
	n.t.Helper()
	o := nodeagentOptions(n)
	for _, m := range mods {
		m(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- runKube(ctx, o) }()
	n.t.Cleanup(func() {
		if err := r.stop(); err != nil {
			n.t.Errorf("agent: %v", err)
		}
	})
	return r
}

// nodeagentOptions runs the agent on the node as the chart's service
// account, logging to the node's log file.
func nodeagentOptions(n *node) kubeOptions {
	n.t.Helper()
	logf, err := os.OpenFile(n.logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		n.t.Fatal(err)
	}
	n.t.Cleanup(func() { logf.Close() })
	cfg := agentConfig(n.t)
	cfg.Wrap(n.writes.wrap)
	return kubeOptions{
		Agent: agent.Options{StateDir: n.stateDir, SysfsRoot: n.sysfs, CgroupRoot: n.kubelet.root, CgroupVersion: n.kubelet.v,
			Resync: 10 * time.Second, Logger: slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelDebug}))},
		RunOptions: nodeagent.RunOptions{
			Config:         cfg,
			NRTMinInterval: 100 * time.Millisecond,
			Source: nodeagent.SourceOptions{NodeName: n.name, ResourceQoSConfigMap: n.resQoS, PodQoSConfigMap: n.podQoS,
				Reserved: reserved, DecisionKeyFile: writeKeyFile(n.t)},
		},
	}
}

// writeKeyFile writes the scheduler's test key where the agent's
// --decision-key-file points.
func writeKeyFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "decision-keys")
	if err := os.WriteFile(path, []byte(decisiontest.KeyFile), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubeOptions are the agent's options and those of its Kubernetes mode.
type kubeOptions struct {
	Agent agent.Options
	nodeagent.RunOptions
}

// runKube runs the agent on the Kubernetes source as `locus agent
// --node-name` does.
func runKube(ctx context.Context, o kubeOptions) error {
	k := o.RunOptions
	k.Logger, k.StateDir, k.DryRun, k.Once = o.Agent.Logger, o.Agent.StateDir, o.Agent.DryRun, o.Agent.Once
	return nodeagent.Run(ctx, k, func(src *nodeagent.Source) error { return agent.RunOn(ctx, o.Agent, src) })
}

func (r *running) stop() error {
	r.once.Do(func() {
		r.cancel()
		select {
		case r.err = <-r.done:
		case <-time.After(30 * time.Second):
			r.err = context.DeadlineExceeded
		}
	})
	return r.err
}

// apply applies the manifests of files in the node's namespace (kinds
// limits what is taken; none means everything) and binds and runs their
// pods on the node. It returns the pods by name.
func (n *node) apply(files []string, kinds ...string) map[string]*corev1.Pod {
	n.t.Helper()
	ctx := callCtx(n.t)
	out := map[string]*corev1.Pod{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			n.t.Fatal(err)
		}
		objs, err := kubetest.DecodeYAML(raw)
		if err != nil {
			n.t.Fatalf("%s: %v", f, err)
		}
		for _, o := range objs {
			if len(kinds) > 0 && !slices.Contains(kinds, o.GetKind()) {
				continue
			}
			o.SetNamespace(n.ns)
			doc, _ := json.Marshal(o.Object)
			if _, err := cp.Apply(ctx, doc); err != nil {
				n.t.Fatalf("%s: %v", f, err)
			}
			if o.GetKind() == "Pod" {
				pod, err := cp.Client.CoreV1().Pods(n.ns).Get(ctx, o.GetName(), metav1.GetOptions{})
				if err != nil {
					n.t.Fatal(err)
				}
				out[pod.Name] = n.run(pod)
			}
		}
	}
	return out
}

// create creates, binds and runs a pod.
// create creates the pod, binds it to the node and runs it. A decision
// it carries (locus.io/resource-status) is signed as locus-scheduler signs
// it, with the agent's key, in the Binding.
func (n *node) create(pod *corev1.Pod) *corev1.Pod {
	n.t.Helper()
	pod.Namespace = n.ns
	return n.kubelet.Run(callCtx(n.t), n.bind(cp.CreatePod(n.t, pod)))
}

// bind binds a created pod to the node, signing the decision it carries
// in the Binding as locus-scheduler does.
func (n *node) bind(created *corev1.Pod) *corev1.Pod {
	n.t.Helper()
	if _, decided := created.Annotations[workload.AnnotationResourceStatus]; !decided {
		return cp.BindPod(n.t, created, n.name)
	}
	signed := maps.Clone(created.Annotations)
	decisiontest.Sign(n.t, string(created.UID), n.name, signed)
	ann := map[string]string{workload.AnnotationDecisionSignature: signed[workload.AnnotationDecisionSignature]}
	return cp.BindPodAnnotated(n.t, created, n.name, ann)
}

// createUnsigned creates, binds and runs the pod as it is: a decision it
// carries is its author's, not the scheduler's.
func (n *node) createUnsigned(pod *corev1.Pod) *corev1.Pod {
	n.t.Helper()
	pod.Namespace = n.ns
	return n.run(cp.CreatePod(n.t, pod))
}

func (n *node) run(pod *corev1.Pod) *corev1.Pod {
	n.t.Helper()
	pod = cp.BindPod(n.t, pod, n.name)
	return n.kubelet.Run(callCtx(n.t), pod)
}

// waitFile waits until a cgroup file holds want.
func (n *node) waitFile(rel, file, want string) {
	n.t.Helper()
	kubetest.WaitFor(n.t, file+" of "+rel+" = "+want, 20*time.Second, func(context.Context) (bool, error) {
		return n.kubelet.File(rel, file) == want, nil
	})
}

// waitFileMatch waits until a cgroup file satisfies ok and returns it.
func (n *node) waitFileMatch(rel, file, what string, ok func(string) bool) string {
	n.t.Helper()
	var got string
	kubetest.WaitFor(n.t, file+" of "+rel+" to be "+what, 20*time.Second, func(context.Context) (bool, error) {
		got = n.kubelet.File(rel, file)
		return ok(got), nil
	})
	return got
}
