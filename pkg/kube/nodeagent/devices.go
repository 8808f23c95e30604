package nodeagent

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/locus-project/locus/pkg/podresources"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/workload"
)

// deviceReader reads, once a reconcile, which devices each container holds
// and what the node's plugins offer, from the kubelet's PodResources API.
// When the socket is missing, slow or answers what cannot be read, the
// reconcile goes on without device data and the status says why.
type deviceReader struct {
	client podresources.Client
	now    func() time.Time
	// Used by the reconcile loop only.
	held        map[string][]workload.ReportedDevice // by namespace/name
	allocatable []podresources.Device
	inUse       []podresources.Device
	told        string // the problem last logged
	offered     offered

	mu     sync.Mutex
	status status.Devices
}

// What the node's plugins offer changes only when a plugin registers or
// goes, so GetAllocatableResources is asked again only when its last
// answer has served allocatableEvery reconciles or is allocatableMaxAge
// old, when List names a resource it did not, or after a failed call: a
// plugin gone stays counted at most that long.
const (
	allocatableEvery  = 30
	allocatableMaxAge = 60 * time.Second
)

// offered is the last GetAllocatableResources answer and how long it has
// served.
type offered struct {
	devices   []podresources.Device
	resources map[string]bool // nil: nothing read, or the last call failed
	at        time.Time
	served    int // reconciles
}

func (o *offered) stale(pods []podresources.Pod, now time.Time) bool {
	if o.resources == nil || o.served >= allocatableEvery || now.Sub(o.at) >= allocatableMaxAge || now.Before(o.at) {
		return true
	}
	for _, p := range pods {
		for _, c := range p.Containers {
			for _, d := range c.Devices {
				if !o.resources[d.Resource] {
					return true
				}
			}
		}
	}
	return false
}

func (o *offered) set(devs []podresources.Device, now time.Time) {
	*o = offered{devices: devs, resources: map[string]bool{}, at: now}
	for _, d := range devs {
		o.resources[d.Resource] = true
	}
}

func newDeviceReader(socket string, now func() time.Time) *deviceReader {
	return &deviceReader{client: podresources.Client{Socket: socket}, now: now,
		status: status.Devices{Source: socket, Problem: "not read yet"}}
}

// read asks the kubelet; it returns the problem, "" when all went well,
// and keeps no device data after a failure.
func (r *deviceReader) read(ctx context.Context) string {
	r.held, r.allocatable, r.inUse = nil, nil, nil
	st := status.Devices{Source: r.client.Socket}
	pods, err := r.client.List(ctx)
	if now := r.now(); err == nil && r.offered.stale(pods, now) {
		var devs []podresources.Device
		if devs, err = r.client.Allocatable(ctx); err == nil {
			r.offered.set(devs, now)
		}
	}
	if err != nil {
		r.offered = offered{}
		st.Problem = err.Error() + "; pods are placed as if they held no device-plugin device"
		r.setStatus(st)
		return st.Problem
	}
	r.offered.served++
	r.held = map[string][]workload.ReportedDevice{}
	for _, p := range pods {
		key := p.Namespace + "/" + p.Name
		for _, c := range p.Containers {
			st.Containers++
			for _, d := range c.Devices {
				r.inUse = append(r.inUse, d)
				for _, id := range d.IDs {
					st.Held++
					r.held[key] = append(r.held[key], workload.ReportedDevice{Resource: d.Resource, ID: id, Nodes: d.Nodes})
				}
			}
		}
	}
	r.allocatable = r.offered.devices
	for _, d := range r.allocatable {
		st.Allocatable += len(d.IDs)
		if len(d.Nodes) > 0 {
			st.WithTopology += len(d.IDs)
		}
	}
	r.setStatus(st)
	return ""
}

func (r *deviceReader) setStatus(st status.Devices) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = st
}

// setHeld fills w's devices from what the kubelet said pod holds, read by
// pkg/workload; a list it refuses is a problem of the pod, which is then
// placed as if it held none.
func (r *deviceReader) setHeld(pod *corev1.Pod, w *workload.Workload) []workload.Problem {
	reported := r.held[pod.Namespace+"/"+pod.Name]
	w.HeldDevices = nil
	if len(reported) == 0 {
		return nil
	}
	held, err := workload.HeldDevices("podResources "+pod.Namespace+"/"+pod.Name, reported)
	if err != nil {
		return []workload.Problem{{Workload: w.Name, Reason: workload.ReasonInvalidDevices,
			Message: err.Error() + "; its CPUs are placed without its devices"}}
	}
	w.HeldDevices = held
	return nil
}

// DeviceStatus implements source.DeviceReporter.
func (s *Source) DeviceStatus() status.Devices {
	if s.devices == nil {
		return status.Devices{}
	}
	s.devices.mu.Lock()
	defer s.devices.mu.Unlock()
	return s.devices.status
}

// readDevices reads the kubelet's answer for this reconcile; a problem is
// logged when it starts or changes, and its end too.
func (s *Source) readDevices() {
	if s.devices == nil {
		return
	}
	problem := s.devices.read(context.Background())
	switch {
	case problem != "" && problem != s.devices.told:
		s.log.Warn("no device data from the kubelet's PodResources API", "problem", problem)
	case problem == "" && s.devices.told != "":
		s.log.Info("device data read from the kubelet's PodResources API again", "socket", s.devices.client.Socket)
	}
	s.devices.told = problem
}
