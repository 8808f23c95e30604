// Package nritest runs the runtime side of NRI for tests: the NRI module's
// own pkg/adaptation, which containerd embeds, listening on a socket in a
// temporary directory. Plugins under test connect to it as to containerd.
package nritest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/adaptation"
	"github.com/containerd/nri/pkg/api"
)

// Runtime is the runtime side. Its synchronization offers Pods and
// Existing and records the updates the plugins return.
type Runtime struct {
	*adaptation.Adaptation
	Socket string

	mu       sync.Mutex
	pods     []*api.PodSandbox
	existing []*api.Container
	updates  []*api.ContainerUpdate
	// syncs counts the synchronizations of connected plugins; the first
	// call is Start's own, of the pre-installed plugins (none here).
	syncs   int
	started bool
	plugins int // registered, as the runtime counts them
}

// RecordPluginInvocation and the rest are the runtime's metrics, kept for
// UpdatePluginCount: it tells when a plugin is registered, after its
// synchronization.
func (rt *Runtime) RecordPluginInvocation(string, string, error)      {}
func (rt *Runtime) RecordPluginLatency(string, string, time.Duration) {}
func (rt *Runtime) RecordPluginAdjustments(string, string, *adaptation.ContainerAdjustment, int, int) {
}
func (rt *Runtime) UpdatePluginCount(n int) {
	rt.mu.Lock()
	rt.plugins = n
	rt.mu.Unlock()
}

// WaitRegistered waits until n plugins are registered (at most 10 s).
func (rt *Runtime) WaitRegistered(t testing.TB, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		rt.mu.Lock()
		got := rt.plugins
		rt.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d plugins registered after 10s, want %d", got, n)
		}
	}
}

// SocketDir is a temporary directory short enough for a unix socket path
// (108 bytes; t.TempDir may be longer), removed when the test ends.
func SocketDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", "nri")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// New makes a runtime listening on socket once started; pods and existing
// are what it has when a plugin connects.
func New(t testing.TB, socket string, pods []*api.PodSandbox, existing []*api.Container) *Runtime {
	t.Helper()
	rt := &Runtime{Socket: socket, pods: pods, existing: existing}
	sync := func(ctx context.Context, cb adaptation.SyncCB) error {
		rt.mu.Lock()
		pods, ctrs, first := rt.pods, rt.existing, !rt.started
		rt.started = true
		rt.mu.Unlock()
		us, err := cb(ctx, pods, ctrs)
		if first {
			return err
		}
		rt.mu.Lock()
		rt.updates = append(rt.updates, us...)
		rt.syncs++
		rt.mu.Unlock()
		return err
	}
	noUpdate := func(context.Context, []*api.ContainerUpdate) ([]*api.ContainerUpdate, error) { return nil, nil }
	dir := filepath.Dir(socket)
	a, err := adaptation.New("containerd", "v2.4.2", sync, noUpdate, adaptation.WithSocketPath(socket),
		adaptation.WithPluginPath(filepath.Join(dir, "plugins")), adaptation.WithPluginConfigPath(filepath.Join(dir, "conf")),
		adaptation.WithMetrics(rt))
	if err != nil {
		t.Fatal(err)
	}
	rt.Adaptation = a
	return rt
}

// Start listens until the test ends.
func (rt *Runtime) Start(t testing.TB) {
	t.Helper()
	if err := rt.Adaptation.Start(); err != nil {
		t.Fatal(err)
	}

	t.Cleanup(rt.Stop)
}

// Updates returns the updates the synchronizations returned so far, and
// how many plugins were synchronized.
func (rt *Runtime) Updates() ([]*api.ContainerUpdate, int) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return append([]*api.ContainerUpdate(nil), rt.updates...), rt.syncs
}

// Create asks the plugins about a container being created, as containerd
// does.
func (rt *Runtime) Create(pod *api.PodSandbox, c *api.Container) (*api.CreateContainerResponse, error) {
	return rt.CreateContainer(context.Background(), &api.CreateContainerRequest{Pod: pod, Container: c})
}

// CPUs is the cpuset.cpus of a creation's adjustment ("" when none).
func CPUs(r *api.CreateContainerResponse) string {
	return r.GetAdjust().GetLinux().GetResources().GetCpu().GetCpus()
}
