// Package podresourcestest serves the kubelet's PodResources API on a unix
// socket in a temporary directory, answering what a test sets, for the
// client (pkg/podresources) and the agent that reads it.
package podresourcestest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// Server answers List and GetAllocatableResources with what was last Set.
type Server struct {
	v1.UnimplementedPodResourcesListerServer
	mu          sync.Mutex
	list        *v1.ListPodResourcesResponse
	allocatable *v1.AllocatableResourcesResponse
	delay       time.Duration
	calls       map[string]int // by method
}

// Socket is where Start serves, under dir: <dir>/pod-resources/kubelet.sock
// as under the kubelet's root directory.
func Socket(dir string) string { return filepath.Join(dir, "pod-resources", "kubelet.sock") }

// TempDir is a directory short enough for a unix socket path (108 bytes),
// removed when t ends.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "podres")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Start serves a new Server at Socket(dir) until t ends.
func Start(t testing.TB, dir string) *Server {
	t.Helper()
	s := &Server{list: &v1.ListPodResourcesResponse{}, allocatable: &v1.AllocatableResourcesResponse{}, calls: map[string]int{}}
	l := Listen(t, Socket(dir))
	g := grpc.NewServer()
	v1.RegisterPodResourcesListerServer(g, s)
	go func() { _ = g.Serve(l) }()
	t.Cleanup(g.Stop)
	return s
}

// Listen listens on a unix socket at path, its directory made, until t ends.
func Listen(t testing.TB, path string) net.Listener {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// Set is what the next calls answer.
func (s *Server) Set(list *v1.ListPodResourcesResponse, allocatable *v1.AllocatableResourcesResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list, s.allocatable = list, allocatable
}

// Delay makes every call wait d (or until the caller gives up) first.
func (s *Server) Delay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Calls is how many calls of method ("List", "GetAllocatableResources")
// were answered or started.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// wait waits the delay; a caller that gives up first gets no answer (a
// server answering as its deadline passes could beat the caller's own
// timer, and a slow kubelet's answer would then look timely).
func (s *Server) wait(ctx context.Context, method string) error {
	s.mu.Lock()
	s.calls[method]++
	d := s.delay
	s.mu.Unlock()
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// List implements the API.
func (s *Server) List(ctx context.Context, _ *v1.ListPodResourcesRequest) (*v1.ListPodResourcesResponse, error) {
	if err := s.wait(ctx, "List"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.list, nil
}

// GetAllocatableResources implements the API.
func (s *Server) GetAllocatableResources(ctx context.Context, _ *v1.AllocatableResourcesRequest) (*v1.AllocatableResourcesResponse, error) {
	if err := s.wait(ctx, "GetAllocatableResources"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allocatable, nil
}

// Group is one device group: resource, ids, and the NUMA nodes reported
// (none: no topology).
func Group(resource string, ids []string, nodes ...int64) *v1.ContainerDevices {
	d := &v1.ContainerDevices{ResourceName: resource, DeviceIds: ids}
	if len(nodes) > 0 {
		d.Topology = &v1.TopologyInfo{}
		for _, n := range nodes {
			d.Topology.Nodes = append(d.Topology.Nodes, &v1.NUMANode{ID: n})
		}
	}
	return d
}

// Pod is one pod whose container holds groups.
func Pod(namespace, name, container string, groups ...*v1.ContainerDevices) *v1.PodResources {
	return &v1.PodResources{Namespace: namespace, Name: name,
		Containers: []*v1.ContainerResources{{Name: container, Devices: groups}}}
}
