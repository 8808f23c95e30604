package nri

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"

	"github.com/locus-project/locus/internal/nritest"
)

// table is a handler deciding from a table by container name, recording
// what the plugin told it.
type table struct {
	mu       sync.Mutex
	values   map[string]Answer
	asked    []string
	unpinned []string
	gone     []string
}

func (t *table) Answer(_ context.Context, reqs []Request) []Answer {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Answer, len(reqs))
	for i, r := range reqs {
		t.asked = append(t.asked, r.Container.Name)
		d, ok := t.values[r.Container.Name]
		if !ok {
			d = Answer{Err: errors.New("unknown container")}
		}
		out[i] = d
	}
	return out
}

func (t *table) Unpinned(_ Pod, c Container, err error, blocked bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unpinned = append(t.unpinned, c.Name+":"+map[bool]string{true: "blocked", false: "open"}[blocked])
}

func (t *table) Gone(p Pod, c Container) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.gone = append(t.gone, p.Name+"/"+c.Name)
}

type runtime = nritest.Runtime

func socketDir(t *testing.T) string { return nritest.SocketDir(t) }

func newRuntime(t *testing.T, socket string) *runtime { return nritest.New(t, socket, nil, nil) }

var testPod = &api.PodSandbox{Id: "sandbox1", Uid: "uid1", Namespace: "default", Name: "web",
	Annotations: map[string]string{"cpuset-scheduler": "true"}}

func ctr(name string, cpus string) *api.Container {
	return &api.Container{Id: "id-" + name, PodSandboxId: testPod.Id, Name: name, State: api.ContainerState_CONTAINER_RUNNING,
		Linux: &api.LinuxContainer{Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: cpus}}}}
}

// startPlugin runs the plugin until the test ends, logging into log.
func startPlugin(t *testing.T, h Handler, o Options, log *logBuf) *Plugin {
	t.Helper()
	o.Logger = slog.New(slog.NewTextHandler(log, nil))
	o.MinBackoff, o.MaxBackoff = 20*time.Millisecond, 100*time.Millisecond
	p := New(h, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return p
}

// logBuf is a log that the plugin writes while the test reads it.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(b)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// registered waits until the runtime relays requests to the plugin: a
// probe container gets its adjustment.
func registered(t *testing.T, rt *runtime) {
	t.Helper()
	eventually(t, "the plugin to be registered", func() bool {
		r, err := rt.Create(testPod, ctr("probe", ""))
		return err == nil && nritest.CPUs(r) != ""
	})
}

func probeTable() *table {
	return &table{values: map[string]Answer{"probe": {Values: Values{CPUs: "0"}}}}
}

func timeNowMinus(ms int) time.Time { return time.Now().Add(-time.Duration(ms) * time.Millisecond) }
