package core

import (
	"encoding/json"
	"strconv"
	"testing"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/fuzzseed"
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
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, raw string) {
		var obj nrt.Object
		if json.Unmarshal([]byte(raw), &obj) != nil {
			return // the API server would not have stored it
		}
		fuzzseed.Timed(t, "readNRT and Place", func() {
			build, _, _, err := readNRT(&obj)
			fuzzseed.CheckError(t, err)
			if err != nil {
				return
			}
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
		})
	})
}
