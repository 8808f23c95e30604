package cpualloc

import (
	"errors"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// Rule names a default set the way Allocate does: whole cores are
// full-pcpus, anything else full-pcpus-then-threads; a policy named is kept.
func TestRule(t *testing.T) {
	topo := fixture.MustBuild(fixture.MemoryOnly) // core k is CPUs 2k and 2k+1
	for _, c := range []struct {
		p    Policy
		cpus string
		want Policy
	}{
		{"", "0-3", FullPCPUs},
		{FullPCPUsThenThreads, "16-19", FullPCPUs},
		{"", "0-2", FullPCPUsThenThreads},
		{"", "1-2", FullPCPUsThenThreads},
		{"", "", FullPCPUsThenThreads},
		{SpreadByPCPUs, "0,2", SpreadByPCPUs},
		{StaticBurst, "0-1", StaticBurst},
	} {
		cpus, err := cpuset.Parse(c.cpus)
		if err != nil {
			t.Fatal(err)
		}
		if got := Rule(topo, c.p, cpus); got != c.want {
			t.Errorf("Rule(%q, %s) = %q, want %q", c.p, c.cpus, got, c.want)
		}
	}
	// What Allocate names its default results, Rule names them too.
	for n := 1; n <= 6; n++ {
		res, err := Allocate(topo, State{BurstMilli: map[int]int64{}}, cpuset.New(), Request{CPUs: n})
		if err != nil {
			t.Fatal(err)
		}
		if got := Rule(topo, "", res.CPUs); got != res.Policy {
			t.Errorf("%d CPUs %s: Rule %q, Allocate %q", n, res.CPUs, got, res.Policy)
		}
	}
}

func TestRequestValidate(t *testing.T) {
	if err := (Request{CPUs: 2, Policy: SpreadByPCPUs}).Validate(); err != nil {
		t.Errorf("a good request refused: %v", err)
	}
	for _, r := range []Request{{CPUs: 0}, {CPUs: 1, Policy: "pack"}, {CPUs: 1, NUMAStrategy: "far"}} {
		if err := r.Validate(); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%+v: %v, want ErrInvalidRequest", r, err)
		}
	}
}
