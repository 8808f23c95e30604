package hostsource

import (
	"maps"
	"slices"
	"testing"

	"github.com/locus-project/locus/pkg/hostconfig"
)

// The workloads marked stop-on-agent-exit are stopped; the cgroups of the
// others are kept.
func TestStopOnExit(t *testing.T) {
	cfg := &hostconfig.HostConfig{CgroupParent: "locus.slice", Workloads: []hostconfig.Workload{
		{Name: "demo", Command: []string{"sleep", "1"}, Annotations: map[string]string{"locus.io/stop-on-agent-exit": "true"}},
		{Name: "db", Cgroup: "system.slice/db.service"},
		{Name: "web", Command: []string{"sleep", "1"}},
	}}
	stop, keep := StopOnExit(cfg)
	if !slices.Equal(stop, []string{"demo"}) {
		t.Errorf("stop %v, want demo", stop)
	}
	if got := slices.Sorted(maps.Keys(keep)); !slices.Equal(got, []string{"locus.slice/web", "system.slice/db.service"}) {
		t.Errorf("keep %v", got)
	}
}
