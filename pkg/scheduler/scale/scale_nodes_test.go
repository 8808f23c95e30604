package scale

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// shape is every node's machine: 2 sockets of 48 two-thread cores, one
// NUMA node and one L3 each (192 CPUs, the seeds' ecs.ebmc8i.48xlarge);
// reserved is its first core, the kubelet's --reserved-cpus.
var (
	shape    = fixture.Intel2S96C
	machine  = fixture.MustBuild(shape)
	reserved = cpuset.New(0, shape.TotalCores())
)

// makeNodes creates the kwok nodes, waits until kwok has them all Ready,
// and publishes each one's NodeResourceTopology as an idle Locus agent
// would (nothing held). Both schedulers then see the same nodes; only
// locus-scheduler reads the reports. With koord-scheduler as the peer, the
// reports also carry what koordlet would add, and the nodes its labels.
func makeNodes(t *testing.T, n int, peer kind) []string {
	t.Helper()
	koordAnn := map[string]string{}
	if peer == koord {
		var err error
		if koordAnn, err = koordNRTAnnotations(machine); err != nil {
			t.Fatal(err)
		}
	}
	cp.InstallNodeResourceTopologyCRD(t)
	cp.StartKwok(t)
	cpus := resource.MustParse(fmt.Sprint(shape.TotalCores() * shape.ThreadsPerCore))
	capacity := corev1.ResourceList{corev1.ResourceCPU: cpus,
		corev1.ResourceMemory: resource.MustParse("768Gi"), corev1.ResourcePods: resource.MustParse("110")}
	start := time.Now()
	names := cp.CreateFakeNodes(t, "scale", n, capacity)
	waitReady(t, n, 5*time.Minute+time.Duration(n)*60*time.Millisecond)
	t.Logf("%d nodes Ready in %s", n, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	err := parallel(16, len(names), func(ctx context.Context, i int) error {
		o, err := nrt.Build(nrt.Input{Node: names[i], Topology: machine, Reserved: reserved})
		if err != nil {
			return err
		}
		raw, err := json.Marshal(o)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return err
		}
		if len(koordAnn) > 0 {
			ann := u.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			maps.Copy(ann, koordAnn)
			u.SetAnnotations(ann)
		}
		_, err = cp.Dynamic.Resource(nrt.GVR).Create(ctx, u, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("publishing NodeResourceTopology: %v", err)
	}
	t.Logf("%d NodeResourceTopology objects published in %s", n, time.Since(start).Round(time.Millisecond))
	if peer == koord {
		prepareKoord(t, names)
	}
	return names
}

// waitReady waits until n kwok nodes report Ready. It lists every node,
// so it asks at most every n/5 ms (a second at 5000 nodes) rather than
// every 100 ms: a list of 5000 nodes is megabytes the apiserver encodes and
// this process decodes, on the CPUs kwok needs to make them Ready.
func waitReady(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	pause := time.Duration(n) * time.Millisecond / 5
	kubetest.WaitFor(t, fmt.Sprintf("%d nodes Ready", n), timeout, func(ctx context.Context) (bool, error) {
		defer time.Sleep(pause)
		list, err := cp.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, nd := range list.Items {
			for _, c := range nd.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		if ready < n {
			return false, fmt.Errorf("%d of %d Ready", ready, n)
		}
		return true, nil
	})
}

// parallel runs do(0..n-1) on workers goroutines and joins the errors.
// Each call has its own deadline: at 5000 nodes on a loaded machine one
// for all of them ran out before the last thousand.
func parallel(workers, n int, do func(ctx context.Context, i int) error) error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				errs[i] = do(ctx, i)
				cancel()
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}
