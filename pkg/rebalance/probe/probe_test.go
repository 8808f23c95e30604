package probe

import (
	"path/filepath"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/testfs"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/workload"
)

// Only with moves and rebalancing on, and only workloads holding CPUs: a
// file that cannot be read leaves its workload out.
func TestObserve(t *testing.T) {
	cg := t.TempDir()
	testfs.Write(t, filepath.Join(cg, "a/cpu.stat"), "usage_usec 2500000\nuser_usec 2000000\n")
	testfs.Write(t, filepath.Join(cg, "b/cpu.stat"), "usage_usec 10\n")
	testfs.Write(t, filepath.Join(cg, "c/cpu.stat"), "nonsense\n")
	h, err := cgroup.Open(cg, cgroup.V2)
	if err != nil {
		t.Fatal(err)
	}
	held := workload.Assignment{CPUs: cpuset.New(1)}
	assigned := map[string]workload.Assignment{"a": held, "c": held}
	obs := func(moves, rebalance bool) decide.Observation {
		return decide.Observation{Config: &workload.Config{Host: &hostconfig.HostConfig{}, MovesEnabled: moves, Rebalance: rebalance},
			Workloads: []workload.Workload{{Name: "a", Cgroup: "a"}, {Name: "b", Cgroup: "b"}, {Name: "c", Cgroup: "c"}}}
	}
	got := Observe(obs(true, true), h, assigned).Usage
	if len(got) != 1 || got["a"] != 2500*time.Millisecond {
		t.Errorf("usage %v, want a's 2.5s alone", got)
	}
	for _, o := range []decide.Observation{obs(false, true), obs(true, false)} {
		if u := Observe(o, h, assigned).Usage; u != nil {
			t.Errorf("read %v with moves %v, rebalancing %v", u, o.Config.MovesEnabled, o.Config.Rebalance)
		}
	}
}
