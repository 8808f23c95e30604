package podresources_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/locus-project/locus/internal/podresourcestest"
	"github.com/locus-project/locus/pkg/podresources"
)

func TestListAndAllocatableOverARealSocket(t *testing.T) {
	dir := podresourcestest.TempDir(t)
	srv := podresourcestest.Start(t, dir)
	srv.Set(&v1.ListPodResourcesResponse{PodResources: []*v1.PodResources{
		podresourcestest.Pod("default", "gpu", "main", podresourcestest.Group("example.com/gpu", []string{"gpu-1"}, 1)),
		{Namespace: "default", Name: "plain", Containers: []*v1.ContainerResources{{Name: "c", CpuIds: []int64{1}}}},
	}}, &v1.AllocatableResourcesResponse{Devices: []*v1.ContainerDevices{
		podresourcestest.Group("example.com/gpu", []string{"gpu-0"}, 0),
		podresourcestest.Group("example.com/gpu", []string{"gpu-1"}, 1, 1),
		podresourcestest.Group("example.com/nic", []string{"nic-0"}),
	}})
	c := podresources.Client{Socket: podresourcestest.Socket(dir)}
	pods, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []podresources.Pod{{Namespace: "default", Name: "gpu", Containers: []podresources.Container{
		{Name: "main", Devices: []podresources.Device{{Resource: "example.com/gpu", IDs: []string{"gpu-1"}, Nodes: []int{1}}}}}}}
	if !reflect.DeepEqual(pods, want) {
		t.Errorf("List = %+v, want %+v (a pod holding no device left out)", pods, want)
	}
	devs, err := c.Allocatable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantDevs := []podresources.Device{{Resource: "example.com/gpu", IDs: []string{"gpu-0"}, Nodes: []int{0}},
		{Resource: "example.com/gpu", IDs: []string{"gpu-1"}, Nodes: []int{1}}, {Resource: "example.com/nic", IDs: []string{"nic-0"}}}
	if !reflect.DeepEqual(devs, wantDevs) {
		t.Errorf("Allocatable = %+v, want %+v", devs, wantDevs)
	}
}

func TestMissingSocketSaysSo(t *testing.T) {
	dir := podresourcestest.TempDir(t)
	c := podresources.Client{Socket: podresourcestest.Socket(dir)}
	_, err := c.List(context.Background())
	if !errors.Is(err, podresources.ErrNoSocket) || !strings.Contains(err.Error(), c.Socket) {
		t.Fatalf("List without a socket: %v, want ErrNoSocket naming %s", err, c.Socket)
	}
}

func TestSlowServerMeetsTheDeadline(t *testing.T) {
	dir := podresourcestest.TempDir(t)
	srv := podresourcestest.Start(t, dir)
	srv.Delay(time.Minute)
	c := podresources.Client{Socket: podresourcestest.Socket(dir), Timeout: 200 * time.Millisecond}
	start := time.Now()
	_, err := c.List(context.Background())
	if err == nil || !strings.Contains(err.Error(), "DeadlineExceeded") {
		t.Fatalf("List on a server that never answers: %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("List took %v past a 200ms deadline", d)
	}
}

// A socket that answers with bytes that are not gRPC at all.
func TestGarbageAnswerIsAnError(t *testing.T) {
	dir := podresourcestest.TempDir(t)
	l := podresourcestest.Listen(t, podresourcestest.Socket(dir))
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func(conn net.Conn) {
				defer conn.Close()
				_, _ = conn.Write([]byte(strings.Repeat("garbage\x00\xff", 4096)))
			}(conn)
		}
	}()
	c := podresources.Client{Socket: podresourcestest.Socket(dir), Timeout: time.Second}
	if _, err := c.List(context.Background()); err == nil || !strings.Contains(err.Error(), c.Socket) {
		t.Fatalf("List on a garbage answer: %v, want an error naming the socket", err)
	}
}

func TestTooManyDevicesIsRefusedNamingTheField(t *testing.T) {
	dir := podresourcestest.TempDir(t)
	srv := podresourcestest.Start(t, dir)
	ids := make([]string, podresources.MaxIDs+1)
	for i := range ids {
		ids[i] = fmt.Sprintf("dev-%d", i)
	}
	srv.Set(&v1.ListPodResourcesResponse{PodResources: []*v1.PodResources{
		podresourcestest.Pod("default", "greedy", "main", podresourcestest.Group("example.com/gpu", ids, 0))}},
		&v1.AllocatableResourcesResponse{})
	c := podresources.Client{Socket: podresourcestest.Socket(dir)}
	_, err := c.List(context.Background())
	if err == nil || !strings.Contains(err.Error(), "podResources[0].containers[0].devices[0].deviceIds: 257 ids") {
		t.Fatalf("List of %d ids: %v, want the field named", len(ids), err)
	}
	// The server, and the next answer, are unaffected.
	srv.Set(&v1.ListPodResourcesResponse{}, &v1.AllocatableResourcesResponse{})
	if pods, err := c.List(context.Background()); err != nil || len(pods) != 0 {
		t.Fatalf("List after a refused answer = %v, %v", pods, err)
	}
}

// An answer over MaxMessageBytes is refused by gRPC before it is decoded.
func TestOversizedAnswerIsRefusedBeforeDecoding(t *testing.T) {
	dir := podresourcestest.TempDir(t)
	srv := podresourcestest.Start(t, dir)
	big := strings.Repeat("x", podresources.MaxMessageBytes)
	srv.Set(&v1.ListPodResourcesResponse{PodResources: []*v1.PodResources{
		podresourcestest.Pod("default", big, "main")}}, &v1.AllocatableResourcesResponse{})
	// Time to marshal and send 4 MiB on a loaded machine: the refusal, not
	// the deadline, must end the call.
	c := podresources.Client{Socket: podresourcestest.Socket(dir), Timeout: 30 * time.Second}
	if _, err := c.List(context.Background()); err == nil || !strings.Contains(err.Error(), "ResourceExhausted") {
		t.Fatalf("List of a %d-byte answer: %v, want ResourceExhausted", len(big), err)
	}
}
