package podresources

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// SocketPath is where the kubelet serves the API under its root directory.
func SocketPath(kubeletDir string) string {
	return filepath.Join(kubeletDir, "pod-resources", "kubelet.sock")
}

// DefaultTimeout bounds one call, connection included: the kubelet answers
// in milliseconds, and the reconcile loop must not wait on a stuck one.
const DefaultTimeout = 2 * time.Second

// Client calls the kubelet's PodResources API on one socket. Each call
// connects, asks and closes: a kubelet restarted between two reconciles
// is simply found again.
type Client struct {
	Socket  string
	Timeout time.Duration // per call; 0 is DefaultTimeout
}

// ErrNoSocket is in the error of a call when no socket is at Socket.
var ErrNoSocket = errors.New("no socket")

// List is the pods whose containers hold devices (FromList).
func (c Client) List(ctx context.Context) ([]Pod, error) {
	var resp *v1.ListPodResourcesResponse
	err := c.call(ctx, "List", func(ctx context.Context, cl v1.PodResourcesListerClient) (err error) {
		resp, err = cl.List(ctx, &v1.ListPodResourcesRequest{})
		return err
	})
	if err != nil {
		return nil, err
	}
	pods, err := FromList(resp)
	if err != nil {
		return nil, fmt.Errorf("%s: List: %w", c.Socket, err)
	}
	return pods, nil
}

// Allocatable is every device the node's plugins offer (FromAllocatable).
func (c Client) Allocatable(ctx context.Context) ([]Device, error) {
	var resp *v1.AllocatableResourcesResponse
	err := c.call(ctx, "GetAllocatableResources", func(ctx context.Context, cl v1.PodResourcesListerClient) (err error) {
		resp, err = cl.GetAllocatableResources(ctx, &v1.AllocatableResourcesRequest{})
		return err
	})
	if err != nil {
		return nil, err
	}
	devs, err := FromAllocatable(resp)
	if err != nil {
		return nil, fmt.Errorf("%s: GetAllocatableResources: %w", c.Socket, err)
	}
	return devs, nil
}

func (c Client) call(ctx context.Context, method string, do func(context.Context, v1.PodResourcesListerClient) error) error {
	if fi, err := os.Stat(c.Socket); err != nil || fi.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("%s: %w (is the kubelet's PodResources API on, and its pod-resources directory mounted?)", c.Socket, ErrNoSocket)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+c.Socket,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes)))
	if err != nil {
		return fmt.Errorf("%s: %w", c.Socket, err)
	}
	defer conn.Close()
	if err := do(ctx, v1.NewPodResourcesListerClient(conn)); err != nil {
		return fmt.Errorf("%s: %s: %w", c.Socket, method, err)
	}
	return nil
}
