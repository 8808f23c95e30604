package deviceplugintest_test

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/locus-project/locus/internal/deviceplugintest"
	"github.com/locus-project/locus/internal/podresourcestest"
)

// The plugin registers with a kubelet as the real one expects, lists its
// devices with their NUMA nodes, and answers Allocate.
func TestPluginRegistersListsAndAllocates(t *testing.T) {
	dir := podresourcestest.TempDir(t)
	kubelet := deviceplugintest.StartFakeKubelet(t, dir)
	p := &deviceplugintest.Plugin{ResourceName: "example.com/fake", Dir: dir,
		Devices: []deviceplugintest.Device{{ID: "dev-0", Nodes: []int64{0}}, {ID: "dev-1", Nodes: []int64{1}}, {ID: "dev-x"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	var reg *pluginapi.RegisterRequest
	select {
	case reg = <-kubelet.Registered:
	case <-ctx.Done():
		t.Fatal("the plugin never registered")
	}
	if reg.Version != pluginapi.Version || reg.ResourceName != "example.com/fake" || reg.Endpoint == "" {
		t.Fatalf("registration %+v", reg)
	}
	conn, err := grpc.NewClient("unix://"+filepath.Join(dir, reg.Endpoint), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := pluginapi.NewDevicePluginClient(conn)
	stream, err := c.ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int64{}
	for _, d := range list.Devices {
		if d.Health != pluginapi.Healthy {
			t.Errorf("device %s is %s", d.ID, d.Health)
		}
		var nodes []int64
		for _, n := range d.GetTopology().GetNodes() {
			nodes = append(nodes, n.ID)
		}
		got[d.ID] = nodes
	}
	want := map[string][]int64{"dev-0": {0}, "dev-1": {1}, "dev-x": nil}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ListAndWatch devices %v, want %v", got, want)
	}
	resp, err := c.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIDs: []string{"dev-1"}}}})
	if err != nil || len(resp.ContainerResponses) != 1 || resp.ContainerResponses[0].Envs["LOCUS_TEST_DEVICES"] != "[dev-1]" {
		t.Fatalf("Allocate = %+v, %v", resp, err)
	}
	if a := p.Allocated(); !reflect.DeepEqual(a, [][]string{{"dev-1"}}) {
		t.Errorf("Allocated = %v", a)
	}
}

// Without a kubelet to register with, Start fails within its context and
// says where it looked.
func TestPluginWithoutKubeletFails(t *testing.T) {
	dir := podresourcestest.TempDir(t)
	p := &deviceplugintest.Plugin{ResourceName: "example.com/fake", Dir: dir, Devices: []deviceplugintest.Device{{ID: "a"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err := p.Start(ctx)
	if err == nil {
		p.Stop()
		t.Fatal("Start registered with no kubelet")
	}
	if want := filepath.Join(dir, "kubelet.sock"); !strings.Contains(err.Error(), want) {
		t.Errorf("Start: %v, want it to name %s", err, want)
	}
}
