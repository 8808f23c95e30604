package kubetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KwokNodeAnnotation marks the nodes a Kwok started here manages; CreateFakeNode sets it.
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

// Kwok is a running kwok, which plays the kubelet of fake nodes: it keeps the nodes
// annotated kwok.x-k8s.io/node=fake Ready (with a lease heartbeat) and moves the
// pods bound to them to Running.
type Kwok struct {
	proc *process
}

// StartKwok runs kwok against the control plane until the test ends. Only one should
// run at a time: two would fight over the same nodes.
func (cp *ControlPlane) StartKwok(t testing.TB) *Kwok {
	t.Helper()
	home := filepath.Join(cp.Dir, "kwok-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	args := []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=fake",
	}
	// A HOME of its own, so that no ~/.kwok/kwok.yaml of the user's changes its stages.
	p, err := startProcess("kwok", cp.Binaries.Kwok, args, []string{"HOME=" + home},
		filepath.Join(cp.Dir, fmt.Sprintf("kwok-%d.log", time.Now().UnixNano())))
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	k := &Kwok{proc: p}
	t.Cleanup(func() { p.stop(10 * time.Second) })
	return k
}

// Running reports whether kwok is still running, and if not, the end of its log.
func (k *Kwok) Running() (bool, string) {
	select {
	case <-k.proc.done:
		return false, k.proc.logTail(30)
	default:
		return true, ""
	}
}

// CreateFakeNode creates a node for kwok to manage, with the given capacity (also
// its allocatable) and the labels and taint-free spec kwok's examples use. kwok
// fills in its status, including the Ready condition.
func (cp *ControlPlane) CreateFakeNode(t testing.TB, name string, capacity corev1.ResourceList) *corev1.Node {
	t.Helper()
	created, err := cp.createFakeNode(callContext(t), name, capacity)
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	return created
}

// CreateFakeNodes creates n fake nodes named prefix-0 .. prefix-(n-1), several at a
// time, and returns their names; for scale tests with a Kwok running.
func (cp *ControlPlane) CreateFakeNodes(t testing.TB, prefix string, n int, capacity corev1.ResourceList) []string {
	t.Helper()
	names := make([]string, n)
	errs := make([]error, n)
	const workers = 16
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				names[i] = fmt.Sprintf("%s-%d", prefix, i)
				// A deadline per node, not for all of them: thousands of
				// creations on a loaded machine take as long as they take.
				ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
				_, errs[i] = cp.createFakeNode(ctx, names[i], capacity)
				cancel()
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	return names
}

func (cp *ControlPlane) createFakeNode(ctx context.Context, name string, capacity corev1.ResourceList) (*corev1.Node, error) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{KwokNodeAnnotation: "fake"},
			Labels: map[string]string{
				corev1.LabelHostname: name, corev1.LabelOSStable: "linux", "type": "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity.DeepCopy(), Allocatable: capacity.DeepCopy()},
	}
	created, err := cp.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create fake node %s: %w", name, err)
	}
	return created, nil
}

// WaitNodeReady waits until node name reports condition Ready=True.
func (cp *ControlPlane) WaitNodeReady(t testing.TB, name string, timeout time.Duration) *corev1.Node {
	t.Helper()
	var ready *corev1.Node
	WaitFor(t, "node "+name+" to be Ready", timeout, func(ctx context.Context) (bool, error) {
		n, err := cp.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		} else if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready = n
				return true, nil
			}
		}
		return false, nil
	})
	return ready
}
