package nrt

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// The annotation is written by a node's agent and read by the scheduler for
// every node: a compromised node controls it entirely.

func FuzzReadCPUTopology(f *testing.F) {
	obj, err := Build(Input{Node: "n", Topology: fixture.MustBuild(fixture.MemoryOnly)})
	if err != nil {
		f.Fatal(err)
	}
	good := obj.Metadata.Annotations[AnnotationCPUTopology]
	f.Add(good)
	fuzzseed.Add(f, func(s string) string {
		return `{"cpus":[{"id":0}],"reserved":` + strconv.Quote(s) + `,"exclusive":{"a/b":` + strconv.Quote(s) + `}}`
	})
	fuzzseed.Add(f, func(s string) string { return `{"cpus":` + s + `}` })
	fuzzseed.Add(f, func(s string) string { return `{"cpus":[],"containers":{"a/b":{"c":` + strconv.Quote(s) + `}}}` })
	fuzzseed.Add(f, func(s string) string { return `{"cpus":[],"containers":` + s + `}` })
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, raw string) {
		var ct CPUTopology
		var err error
		fuzzseed.Timed(t, "ReadCPUTopology", func() { ct, err = ReadCPUTopology(raw) })
		fuzzseed.CheckError(t, err, AnnotationCPUTopology)
		if err != nil {
			return
		}
		// What it reads, it writes back to the same value.
		out, err := json.Marshal(ct)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ReadCPUTopology(string(out))
		if err != nil || !reflect.DeepEqual(normal(again), normal(ct)) {
			t.Fatalf("round trip: %+v became %+v (%v)", ct, again, err)
		}
	})
}

// normal treats empty and nil maps and slices alike, as JSON does with omitempty.
func normal(ct CPUTopology) CPUTopology {
	raw, _ := json.Marshal(ct)
	var out CPUTopology
	_ = json.Unmarshal(raw, &out)
	return out
}
