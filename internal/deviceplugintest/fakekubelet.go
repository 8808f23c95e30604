package deviceplugintest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// FakeKubelet is the kubelet's registration service on Dir's kubelet.sock:
// it records each registration, as the real one starts its watch.
type FakeKubelet struct {
	pluginapi.UnimplementedRegistrationServer
	Registered chan *pluginapi.RegisterRequest
}

// StartFakeKubelet serves a FakeKubelet in dir until t ends.
func StartFakeKubelet(t testing.TB, dir string) *FakeKubelet {
	t.Helper()
	sock := filepath.Join(dir, filepath.Base(pluginapi.KubeletSocket))
	_ = os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	k := &FakeKubelet{Registered: make(chan *pluginapi.RegisterRequest, 4)}
	s := grpc.NewServer()
	pluginapi.RegisterRegistrationServer(s, k)
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return k
}

// Register implements the registration service.
func (k *FakeKubelet) Register(_ context.Context, req *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	k.Registered <- req
	return &pluginapi.Empty{}, nil
}
