// Package deviceplugintest is a device plugin for tests: it serves a few
// fake devices, each with the NUMA nodes a test gives it, over the
// kubelet's device plugin API v1beta1, registers with a kubelet (the real
// one of the e2e node, or FakeKubelet), and answers Allocate with nothing
// to mount, so that a pod requesting the resource starts and the kubelet
// reports the device it got through PodResources.
package deviceplugintest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// Device is one fake device and the NUMA nodes it hangs off (none: no
// topology is reported).
type Device struct {
	ID    string
	Nodes []int64
}

// Plugin serves Devices under ResourceName.
type Plugin struct {
	ResourceName string
	Devices      []Device
	// Dir is the kubelet's device-plugins directory, where the plugin's
	// socket goes and the kubelet's registration socket is
	// (pluginapi.KubeletSocket's base name).
	Dir string

	endpoint string
	server   *grpc.Server
	mu       sync.Mutex
	alloc    [][]string // the device ids of each Allocate, in order
	stop     chan struct{}
}

// Start serves the plugin's socket in Dir and registers it with the
// kubelet there; Stop ends it.
func (p *Plugin) Start(ctx context.Context) error {
	p.endpoint = fmt.Sprintf("locus-test-%d.sock", os.Getpid())
	sock := filepath.Join(p.Dir, p.endpoint)
	_ = os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("device plugin socket: %w", err)
	}
	p.stop = make(chan struct{})
	p.server = grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(p.server, p)
	go func() { _ = p.server.Serve(l) }()
	if err := p.register(ctx); err != nil {
		p.Stop()
		return err
	}
	return nil
}

func (p *Plugin) register(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	kubelet := filepath.Join(p.Dir, filepath.Base(pluginapi.KubeletSocket))
	conn, err := grpc.NewClient("unix://"+kubelet, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("kubelet registration socket %s: %w", kubelet, err)
	}
	defer conn.Close()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version: pluginapi.Version, Endpoint: p.endpoint, ResourceName: p.ResourceName,
		Options: &pluginapi.DevicePluginOptions{}}, grpc.WaitForReady(true))
	if err != nil {
		return fmt.Errorf("register %s with the kubelet at %s: %w", p.ResourceName, kubelet, err)
	}
	return nil
}

// Stop stops serving and removes the plugin's socket.
func (p *Plugin) Stop() {
	if p.server == nil {
		return
	}
	close(p.stop)
	p.server.Stop()
	_ = os.Remove(filepath.Join(p.Dir, p.endpoint))
	p.server = nil
}

// Allocated is the device ids of every Allocate answered, in order.
func (p *Plugin) Allocated() [][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]string(nil), p.alloc...)
}

// GetDevicePluginOptions implements the API: no pre-start, no preference.
func (p *Plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{}, nil
}

// ListAndWatch sends the devices once, then holds the stream until the
// plugin stops: the fake devices never change.
func (p *Plugin) ListAndWatch(_ *pluginapi.Empty, s pluginapi.DevicePlugin_ListAndWatchServer) error {
	resp := &pluginapi.ListAndWatchResponse{}
	for _, d := range p.Devices {
		dev := &pluginapi.Device{ID: d.ID, Health: pluginapi.Healthy}
		if len(d.Nodes) > 0 {
			dev.Topology = &pluginapi.TopologyInfo{}
			for _, n := range d.Nodes {
				dev.Topology.Nodes = append(dev.Topology.Nodes, &pluginapi.NUMANode{ID: n})
			}
		}
		resp.Devices = append(resp.Devices, dev)
	}
	if err := s.Send(resp); err != nil {
		return err
	}
	select {
	case <-p.stop:
	case <-s.Context().Done():
	}
	return nil
}

// GetPreferredAllocation implements the API: no preference.
func (p *Plugin) GetPreferredAllocation(context.Context, *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	return &pluginapi.PreferredAllocationResponse{}, nil
}

// Allocate answers each container's request with an environment variable
// naming its devices, and records the ids.
func (p *Plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range req.ContainerRequests {
		ids := append([]string(nil), c.DevicesIDs...)
		p.alloc = append(p.alloc, ids)
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{
			Envs: map[string]string{"LOCUS_TEST_DEVICES": fmt.Sprint(ids)}})
	}
	return resp, nil
}

// PreStartContainer implements the API: nothing to do.
func (p *Plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}
