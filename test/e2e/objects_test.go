package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/locus-project/locus/internal/kubetest"
)

// runnable makes a seed's pod spec run on this node and changes nothing else of
// it (annotations, labels, resources, volumes stay): every container runs the
// workload image with args instead of its own image, which no registry here
// serves; the pod shares the node's network, as the seeds' Services have no
// kube-proxy here to reach a pod's own address (the tolerations keep it there
// through a kubelet restart); container ports go, as on the host network they
// would be host ports that collide between the seeds' pods.
func (n *e2eNode) runnable(spec *corev1.PodSpec, args ...string) {
	for i := range spec.Containers {
		c := &spec.Containers[i]
		c.Image, c.ImagePullPolicy = n.image, corev1.PullNever
		c.Command, c.Args, c.Env, c.Ports = []string{"/workload"}, args, nil, nil
	}
	spec.HostNetwork = true
	spec.Tolerations = append(spec.Tolerations,
		corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists},
		corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists})
}

// seed reads a manifest of the seeds: its Pods and Deployments made runnable
// (args for their containers), its ConfigMaps as they are; Services are left
// out (no kube-proxy serves them). Everything is created in ns.
type seedObjects struct {
	Pods        []*corev1.Pod
	Deployments []*appsv1.Deployment
}

func (n *e2eNode) applySeed(t *testing.T, ns, path string, args ...string) seedObjects {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(n.repo, path))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kubetest.DecodeYAML(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	ctx := ctxT(t)
	var out seedObjects
	for _, o := range objs {
		switch o.GetKind() {
		case "ConfigMap":
			var cm corev1.ConfigMap
			fromUnstructured(t, o.Object, &cm)
			if _, err := n.cp.Client.CoreV1().ConfigMaps(ns).Create(ctx, &cm, metav1.CreateOptions{}); err != nil {
				t.Fatalf("%s: create ConfigMap %s: %v", path, cm.Name, err)
			}
		case "Pod":
			var p corev1.Pod
			fromUnstructured(t, o.Object, &p)
			n.runnable(&p.Spec, args...)
			created, err := n.cp.Client.CoreV1().Pods(ns).Create(ctx, &p, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("%s: create Pod %s: %v", path, p.Name, err)
			}
			out.Pods = append(out.Pods, created)
		case "Deployment":
			var d appsv1.Deployment
			fromUnstructured(t, o.Object, &d)
			n.runnable(&d.Spec.Template.Spec, args...)
			created, err := n.cp.Client.AppsV1().Deployments(ns).Create(ctx, &d, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("%s: create Deployment %s: %v", path, d.Name, err)
			}
			out.Deployments = append(out.Deployments, created)
		case "Service":
		default:
			t.Fatalf("%s: unexpected %s %s", path, o.GetKind(), o.GetName())
		}
	}
	return out
}

func fromUnstructured(t testing.TB, m map[string]any, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, into); err != nil {
		t.Fatal(err)
	}
}

// events lists the events on one object whose reason is reason.
func (n *e2eNode) events(t testing.TB, ns, kind, name, reason string) []corev1.Event {
	t.Helper()
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name, "reason": reason}.AsSelector().String()
	l, err := n.cp.Client.CoreV1().Events(ns).List(ctxT(t), metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatalf("list events: %v", err)
	}
	return l.Items
}

// waitEvent waits for an event on the object with that type and reason whose
// message contains every one of msg, and returns it.
func (n *e2eNode) waitEvent(t testing.TB, ns, kind, name, typ, reason string, msg ...string) corev1.Event {
	t.Helper()
	var found corev1.Event
	kubetest.WaitFor(t, fmt.Sprintf("%s event %s on %s %s/%s containing %q", typ, reason, kind, ns, name, msg),
		fileTimeout, func(context.Context) (bool, error) {
			for _, e := range n.events(t, ns, kind, name, reason) {
				if e.Type == typ && containsAll(e.Message, msg) {
					found = e
					return true, nil
				}
			}
			return false, nil
		})
	return found
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// metrics scrapes the agent's /metrics: every sample by its name with labels,
// as the text format writes them.
func (n *e2eNode) metrics(t testing.TB) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + n.agentMetrics + "/metrics")
	if err != nil {
		t.Fatalf("scrape the agent: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}
