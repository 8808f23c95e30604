package localityloop

import (
	"testing"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/sloconfig"
	"github.com/locus-project/locus/pkg/workload"
)

// TestWithMoved: a moved workload's memory follows it at once, best effort,
// whether or not memory locality is on for it; one whose locality is on
// keeps its settings; one not moved, or in the shared pool, is left as is.
func TestWithMoved(t *testing.T) {
	every10 := sloconfig.Locality{Policy: sloconfig.LocalityBestEffort, MigrateIntervalMinutes: 10}
	ws := []workload.Workload{locWorkload("off", memqos.Burstable, nil, nil), locWorkload("on", memqos.Burstable, nil, nil),
		locWorkload("still", memqos.Burstable, nil, nil), locWorkload("shared", memqos.Burstable, nil, nil),
		locWorkload("everywhere", memqos.Burstable, nil, nil)}
	states := []decide.WorkloadState{
		{Name: "off", Pool: "exclusive", CPUs: "12-15", NUMANodes: []int{1}},
		{Name: "on", Pool: "exclusive", CPUs: "4-7", NUMANodes: []int{0}},
		{Name: "still", Pool: "exclusive", CPUs: "8-11", NUMANodes: []int{1}},
		{Name: "shared", Pool: "shared", CPUs: "0-15", NUMANodes: []int{0, 1}},
		{Name: "everywhere", Pool: "exclusive", CPUs: "0,8", NUMANodes: []int{0, 1}},
	}
	targets := []Target{{Name: "on", CPUs: "4-7", Local: []int{0}, Nodes: []int{0, 1}, Settings: every10}}
	got := WithMoved(targets, ws, states, []string{"everywhere", "off", "on", "shared"}, []int{0, 1})
	byName := map[string]Target{}
	for _, tg := range got {
		if _, twice := byName[tg.Name]; twice {
			t.Fatalf("%s is a target twice: %+v", tg.Name, got)
		}
		byName[tg.Name] = tg
	}
	if tg, ok := byName["off"]; !ok || tg.CPUs != "12-15" || tg.Settings.Policy != sloconfig.LocalityBestEffort || tg.Skip != "" ||
		len(tg.Containers) != 1 {
		t.Errorf("moved, locality off: %+v (found %v), want a best-effort run to node 1", tg, ok)
	}
	if byName["on"].Settings != every10 {
		t.Errorf("moved, locality on: settings %+v, want its own", byName["on"].Settings)
	}
	if byName["everywhere"].Skip != locality.ReasonNoTargetNUMA {
		t.Errorf("moved onto every node: %+v, want skipped", byName["everywhere"])
	}
	for _, name := range []string{"still", "shared"} {
		if _, ok := byName[name]; ok {
			t.Errorf("%s is a target: %+v", name, byName[name])
		}
	}
}
