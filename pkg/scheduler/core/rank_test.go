package core

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/workload"
)

// A placement only ranked (what the sweep and Filter ask) has the score,
// the locality, the shared core and the error of the same placement made
// whole (what Reserve asks), and its CPU list is the whole one's set: on
// nodes held at random, with and without memory, under every policy.
func TestRankedAsPlaced(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 44))
	policies := []cpualloc.Policy{"", cpualloc.FullPCPUs, cpualloc.SpreadByPCPUs, cpualloc.DistributeAcrossNUMA, cpualloc.StaticBurst}
	mems := []cpualloc.Memory{{}, {Bytes: 256 << 20}, {Bytes: 7 * gib}, {Bytes: 20 * gib}, {HugePages2Mi: 512 << 20}}
	compared, fits := 0, 0
	for state := range 40 {
		c := NewCluster()
		held := map[string]workload.Assignment{}
		mem := map[string]cpualloc.Memory{}
		var all []int
		for id := range memNode.TotalCores() * memNode.ThreadsPerCore {
			all = append(all, id)
		}
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		taken := all[:rng.IntN(len(all)-1)]
		for k := 0; k < len(taken); k += 2 {
			key := fmt.Sprintf("ns/h%d", k)
			ids := taken[k:min(k+2, len(taken))]
			if slices.Contains(ids, 0) || slices.Contains(ids, memNode.TotalCores()) {
				continue // the reserved core
			}
			held[key] = workload.Assignment{CPUs: cpuset.New(ids...), Policy: cpualloc.FullPCPUsThenThreads}
			mem[key] = cpualloc.Memory{Bytes: uint64(rng.IntN(3)) * gib}
		}
		c.SetNRT("n", publishMem(t, memNode, "n", held, mem))
		for _, pol := range policies {
			for cpus := 1; cpus <= 8; cpus++ {
				for _, m := range mems {
					r := req(cpus, pol, 0)
					if pol == cpualloc.StaticBurst {
						r.RequestMilli = int64(cpus) * 300
					}
					r.Memory = m
					v := c.Snapshot().Get("n")
					whole, wholeErr := v.allocate(r, false)
					ranked, rankErr := v.allocate(r, true)
					what := fmt.Sprintf("state %d (%d held), %d CPUs %q, %+v", state, len(held), cpus, pol, m)
					compared++
					if fmt.Sprint(rankErr) != fmt.Sprint(wholeErr) {
						t.Fatalf("%s: ranked error %v, whole %v", what, rankErr, wholeErr)
					}
					if wholeErr != nil {
						continue
					}
					fits++
					if ranked.Score != whole.Score || ranked.Locality != whole.Locality || ranked.SharesCore != whole.SharesCore || ranked.Moves != whole.Moves {
						t.Fatalf("%s: ranked %+v, whole %+v", what, ranked, whole)
					}
					if !whole.Moves && !cpuset.New(ranked.Result.IDs...).Equals(whole.Result.CPUs) {
						t.Fatalf("%s: ranked CPUs %v, whole %s", what, ranked.Result.IDs, whole.Result.CPUs)
					}
				}
			}
		}
	}
	if fits == 0 || fits == compared {
		t.Fatalf("%d of %d requests fit: the states test one side only", fits, compared)
	}
}
