package nri

import (
	"context"
	"fmt"
	"time"

	"github.com/containerd/nri/pkg/api"
)

// decideTimeout bounds one decision, well inside the runtime's request
// timeout (2 s by default), so that a slow agent fails open instead of
// getting the plugin disconnected.
const decideTimeout = time.Second

// events receives the runtime's requests; a type of its own so that the
// Plugin's exported methods are not taken for NRI handlers.
type events struct{ p *Plugin }

func (e *events) Configure(_ context.Context, _, runtime, version string) (api.EventMask, error) {
	e.p.connected(runtime + " " + version)
	return 0, nil // every event events handles
}

// Synchronize takes in every pod and container the runtime has (at each
// connection) and returns updates for those whose values differ.
func (e *events) Synchronize(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	defer e.p.synchronized()
	byID := make(map[string]*api.PodSandbox, len(pods))
	for _, pod := range pods {
		byID[pod.GetId()] = pod
	}
	var reqs []Request
	for _, c := range ctrs {
		pod, ok := byID[c.GetPodSandboxId()]
		if !ok || c.GetState() != api.ContainerState_CONTAINER_RUNNING {
			continue
		}
		reqs = append(reqs, Request{Pod: podOf(pod), Container: containerOf(c)})
	}
	if len(reqs) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, decideTimeout)
	defer cancel()
	var out []*api.ContainerUpdate
	for i, d := range e.p.h.Answer(ctx, reqs) {
		if d.Err != nil || !differs(reqs[i].Container.Current, d.Values) {
			continue
		}
		out = append(out, update(reqs[i].Container.ID, d.Values))
	}
	return out, nil
}

// CreateContainer returns the container's values as an adjustment of its
// OCI spec: it starts with them.
func (e *events) CreateContainer(ctx context.Context, pod *api.PodSandbox, c *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	req := Request{Pod: podOf(pod), Container: containerOf(c)}
	d := e.decideOne(ctx, req)
	if d.Err != nil {
		blocked := e.p.opts.FailClosed && d.Exclusive
		e.p.h.Unpinned(req.Pod, req.Container, d.Err, blocked)
		if blocked {
			return nil, nil, fmt.Errorf("locus: no CPUs decided for container %s of pod %s/%s: %w", req.Container.Name, req.Pod.Namespace, req.Pod.Name, d.Err)
		}
		return nil, nil, nil
	}
	return adjustment(d.Values), nil, nil
}

// UpdateContainer keeps Locus's values when the kubelet updates a
// container's resources (a resize, the CPU manager's reconcile).
func (e *events) UpdateContainer(ctx context.Context, pod *api.PodSandbox, c *api.Container, _ *api.LinuxResources) ([]*api.ContainerUpdate, error) {
	d := e.decideOne(ctx, Request{Pod: podOf(pod), Container: containerOf(c)})
	if d.Err != nil || d.Values.IsZero() {
		return nil, nil
	}
	return []*api.ContainerUpdate{update(c.GetId(), d.Values)}, nil
}

func (e *events) StopContainer(_ context.Context, pod *api.PodSandbox, c *api.Container) ([]*api.ContainerUpdate, error) {
	e.p.h.Gone(podOf(pod), containerOf(c))
	return nil, nil
}

func (e *events) RemoveContainer(_ context.Context, pod *api.PodSandbox, c *api.Container) error {
	e.p.h.Gone(podOf(pod), containerOf(c))
	return nil
}

func (e *events) StopPodSandbox(_ context.Context, pod *api.PodSandbox) error {
	e.p.h.Gone(podOf(pod), Container{})
	return nil
}

func (e *events) decideOne(ctx context.Context, req Request) Answer {
	ctx, cancel := context.WithTimeout(ctx, decideTimeout)
	defer cancel()
	ds := e.p.h.Answer(ctx, []Request{req})
	if len(ds) != 1 {
		return Answer{Err: ErrNoDecision}
	}
	return ds[0]
}
