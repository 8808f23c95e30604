package nri

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/containerd/nri/pkg/api"

	"github.com/locus-project/locus/pkg/topology"
)

func podOf(p *api.PodSandbox) Pod {
	return Pod{ID: p.GetId(), UID: p.GetUid(), Namespace: p.GetNamespace(), Name: p.GetName(),
		Labels: p.GetLabels(), Annotations: p.GetAnnotations()}
}

func containerOf(c *api.Container) Container {
	out := Container{ID: c.GetId(), PodID: c.GetPodSandboxId(), Name: c.GetName()}
	res := c.GetLinux().GetResources()
	out.Current.CPUs = res.GetCpu().GetCpus()
	out.Current.Mems = res.GetCpu().GetMems()
	out.Current.Unified = res.GetUnified()
	out.Current.Reservation = res.GetMemory().GetReservation().GetValue()
	return out
}

// adjustment sets a created container's values in its OCI spec.
func adjustment(v Values) *api.ContainerAdjustment {
	a := &api.ContainerAdjustment{}
	set(a, v)
	return a
}

// update sets a running container's values.
func update(id string, v Values) *api.ContainerUpdate {
	u := &api.ContainerUpdate{}
	u.SetContainerId(id)
	set(u, v)
	return u
}

// setter is what an adjustment and an update both set.
type setter interface {
	SetLinuxCPUSetCPUs(string)
	SetLinuxCPUSetMems(string)
	AddLinuxUnified(key, value string)
	SetLinuxMemoryReservation(int64)
}

func set(s setter, v Values) {
	if v.CPUs != "" {
		s.SetLinuxCPUSetCPUs(v.CPUs)
	}
	if v.Mems != "" {
		s.SetLinuxCPUSetMems(v.Mems)
	}
	for _, k := range slices.Sorted(maps.Keys(v.Unified)) {
		s.AddLinuxUnified(k, v.Unified[k])
	}
	if v.Reservation != 0 {
		s.SetLinuxMemoryReservation(v.Reservation)
	}
}

// differs says whether a container's current values are not those wanted.
// The runtime's lists are compared as sets (bounded parses): "0-1" is
// "0,1"; one that does not parse differs.
func differs(cur, want Values) bool {
	if want.CPUs != "" && !sameList(cur.CPUs, want.CPUs, topology.ParseCPUList) {
		return true
	}
	if want.Mems != "" && !sameList(cur.Mems, want.Mems, topology.ParseNodeList) {
		return true
	}
	for k, v := range want.Unified {
		if cur.Unified[k] != v {
			return true
		}
	}
	return want.Reservation != 0 && cur.Reservation != want.Reservation
}

func sameList[T any](a, b string, parse func(string) (T, error)) bool {
	if a == b {
		return true
	}
	x, errA := parse(a)
	y, errB := parse(b)
	return errA == nil && errB == nil && fmt.Sprint(x) == fmt.Sprint(y)
}

// logger passes the NRI library's messages to the agent's log: its
// routine chatter at debug level, its warnings and errors as they are.
type logger struct{ l *slog.Logger }

func (g logger) Debugf(ctx context.Context, f string, a ...any) {
	g.l.DebugContext(ctx, "NRI: "+fmt.Sprintf(f, a...))
}
func (g logger) Infof(ctx context.Context, f string, a ...any) {
	g.l.DebugContext(ctx, "NRI: "+fmt.Sprintf(f, a...))
}
func (g logger) Warnf(ctx context.Context, f string, a ...any) {
	g.l.WarnContext(ctx, "NRI: "+fmt.Sprintf(f, a...))
}
func (g logger) Errorf(ctx context.Context, f string, a ...any) {
	g.l.ErrorContext(ctx, "NRI: "+fmt.Sprintf(f, a...))
}
