package core

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/workload"
)

// FuzzNRT feeds the scheduler a NodeResourceTopology object as a
// compromised node could publish it: it is refused, or read into a valid
// machine on which placing a pod takes bounded time and only that node's
// CPUs; either way the scheduler keeps serving.
func FuzzNRT(f *testing.F) {
	held := map[string]workload.Assignment{"ns/a": {CPUs: reservedCore.Union(reservedCore), Policy: cpualloc.FullPCPUs}}
	good, err := json.Marshal(publish(f, twoNode, "n", reservedCore, held))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(good))
	// Memory and huge pages per zone, and a zone whose quantities are
	// the fuzzer's.
	withMem, err := json.Marshal(publishMem(f, memNode, "n", held, map[string]cpualloc.Memory{"ns/a": {Bytes: 1 << 30}}))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(withMem))
	fuzzseed.Add(f, func(s string) string {
		ct := `{"cpus":[{"id":0,"numa":0,"l3":-1}],"reserved":"","isolated":""}`
		return `{"metadata":{"annotations":{"locus.io/cpu-topology":` + strconv.Quote(ct) +
			`}},"zones":[{"name":"node-0","type":"Node","costs":[{"name":"node-0","value":10}],"resources":[` +
			`{"name":"memory","capacity":"8Gi","allocatable":"8Gi","available":` + strconv.Quote(s) + `},` +
			`{"name":"hugepages-2Mi","capacity":` + strconv.Quote(s) + `,"allocatable":"0","available":"2Mi"}]}]}`
	})
	fuzzseed.Add(f, func(s string) string {
		ct := `{"cpus":[{"id":0,"numa":0,"l3":-1}],"reserved":` + strconv.Quote(s) + `,"isolated":` + strconv.Quote(s) + `}`
		return `{"metadata":{"annotations":{"locus.io/cpu-topology":` + strconv.Quote(ct) +
			`}},"zones":[{"name":"node-0","type":"Node","costs":[{"name":"node-0","value":10}]}]}`
	})
	fuzzseed.Add(f, func(s string) string {
		return `{"metadata":{"annotations":{"locus.io/cpu-topology":` + strconv.Quote(s) + `}}}`
	})
	fuzzseed.Add(f, func(s string) string {
		ct := `{"cpus":[{"id":0,"numa":0,"l3":-1}],"reserved":"","isolated":"","containers":` + s + `}`
		return `{"metadata":{"annotations":{"locus.io/cpu-topology":` + strconv.Quote(ct) +
			`}},"zones":[{"name":"node-0","type":"Node","costs":[{"name":"node-0","value":10}]}]}`
	})
	// A zone's count of movable CPUs, the fuzzer's, on a fragmented node.
	movable, err := json.Marshal(publishMovable(f, "n", threads, map[string]bool{"ns/m0": true}))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(movable))
	fuzzseed.Add(f, func(s string) string {
		return strings.Replace(string(movable), `"locus.io/movable-cpus","value":"4"`, `"locus.io/movable-cpus","value":`+strconv.Quote(s), 1)
	})
	// Many holdings, each within its bound, over the budget in all.
	many := `{"cpus":[{"id":0,"numa":0,"l3":-1},{"id":1,"numa":0,"l3":-1}],"reserved":"","isolated":"","exclusive":{`
	for i := range 200 {
		many += `"ns/p` + strconv.Itoa(i) + `":"0-8191",`
	}
	many = strings.TrimSuffix(many, ",") + `}}`
	f.Add(`{"metadata":{"annotations":{"locus.io/cpu-topology":` + strconv.Quote(many) +
		`}},"zones":[{"name":"node-0","type":"Node","costs":[{"name":"node-0","value":10}]}]}`)
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, raw string) {
		var obj nrt.Object
		if json.Unmarshal([]byte(raw), &obj) != nil {
			return // the API server would not have stored it
		}
		fuzzseed.Timed(t, "readNRT and Place", func() {
			build, _, r, err := readNRT(&obj)
			fuzzseed.CheckError(t, err)
			if err != nil {
				return
			}
			checkHoldings(t, r, len(ann(t, &obj).CPUs))
			topo, err := build()
			fuzzseed.CheckError(t, err)
			if err != nil {
				return
			}
			if err := topo.Validate(); err != nil {
				t.Fatalf("built an invalid machine: %v", err)
			}
			c := NewCluster()
			c.SetNRT("n", &obj)
			v := c.Snapshot().Get("n")
			if v == nil {
				return
			}
			p, err := Place(v, 0, req(2, cpualloc.FullPCPUs, 0))
			if err == nil && !p.Result.CPUs.IsSubsetOf(topo.CPUSet()) {
				t.Fatalf("placed on %v, outside the machine's %v", p.Result.CPUs, topo.CPUSet())
			}
			// After moves: one NUMA node the machine has, and no CPUs.
			if p, err := Place(v, 0, req(4, cpualloc.FullPCPUs, 0)); err == nil && p.Moves {
				if len(p.Result.NUMANodes) != 1 || !p.Result.CPUs.IsEmpty() {
					t.Fatalf("placed after moves on %+v", p.Result)
				}
				if _, ok := topo.Node(p.Result.NUMANodes[0]); !ok {
					t.Fatalf("placed after moves on node %d, which the machine lacks", p.Result.NUMANodes[0])
				}
			}
			p, err = Place(v, 0, memReq(1, cpualloc.Memory{Bytes: 1 << 30, HugePages2Mi: 2 << 20}))
			for _, n := range p.Result.MemNodes {
				if _, ok := v.free[n]; err == nil && v.free != nil && !ok {
					t.Fatalf("memory placed on node %d, which the report does not list", n)
				}
			}
		})
	})
}

// checkHoldings fails t when a report's holdings name more CPUs than its
// budget allows: the node's CPUs for those held alone, maxBurstSharers
// times them for static-burst ones.
func checkHoldings(t *testing.T, r report, cpus int) {
	t.Helper()
	excl, burst := 0, 0
	for _, h := range r.holdings {
		if h.Policy == cpualloc.StaticBurst {
			burst += h.CPUs.Size()
		} else {
			excl += h.CPUs.Size()
		}
	}
	if excl > cpus || burst > maxBurstSharers*cpus {
		t.Fatalf("a report of %d CPUs read with %d held alone, %d static-burst", cpus, excl, burst)
	}
}

// ann is the report's annotation as readNRT read it.
func ann(t *testing.T, obj *nrt.Object) nrt.CPUTopology {
	ct, _, err := (*reportTexts)(nil).read(obj.Metadata.Annotations[nrt.AnnotationCPUTopology])
	if err != nil {
		t.Fatal(err)
	}
	return ct
}
