package scenario

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"

	"github.com/locus-project/locus/bench/packing"
)

// The project's goal against kubelet: admit at least as many pods as the
// kubelet policy that accepts the same requests, and put every pod on one
// NUMA node whenever one node had room. The default takes whole cores where
// they fit in as few nodes as threads would, and threads otherwise, so it
// admits every pod kubelet's default admits. Short streams keep this a unit
// test; cmd/packing runs the long ones.
func TestLocusMeetsThePackingGoal(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mix      packing.Mix
		baseline Contender
		same     []Contender // each admits at least as many pods as the baseline
		others   []Contender
	}{
		{"mixed sizes", packing.MixedSizes, kubeletDefault, []Contender{locusDefault, locusSpread}, []Contender{locusFullOrSprd}},
		{"whole cores", packing.EvenSizes, kubeletFull, []Contender{locusFull, locusDefault}, nil},
	} {
		against := append([]Contender{tc.baseline}, tc.same...)
		s := Scenario{Name: tc.name, Shape: fixture.Intel2S96C, Reserved: intelReserved, Mix: tc.mix, Load: 1.1,
			Against: append(against, tc.others...)}
		for seed := uint64(1); seed <= 2; seed++ {
			results, err := s.Run(s.Stream(seed, 700))
			if err != nil {
				t.Fatal(err)
			}
			base := results[0]
			if base.Rejected == 0 {
				t.Fatalf("%s seed %d: the stream never filled the node, so it proves nothing", tc.name, seed)
			}
			for _, same := range results[1 : 1+len(tc.same)] {
				if same.Admitted < base.Admitted {
					t.Errorf("%s seed %d: %s admitted %d pods, %s %d", tc.name, seed, same.Allocator, same.Admitted, base.Allocator, base.Admitted)
				}
			}
			for _, r := range results[1:] {
				if r.Inside[packing.NUMA] != r.Room[packing.NUMA] {
					var b bytes.Buffer
					packing.WriteMisses(&b, r)
					t.Errorf("%s seed %d: %s\n%s", tc.name, seed, r.Allocator, b.String())
				}
			}
		}
	}
}

func TestReportPrintsEveryContender(t *testing.T) {
	s := Scenario{Name: "tiny", Shape: fixture.Intel2S96C, Reserved: intelReserved, Mix: packing.MixedSizes,
		Load: 1, Against: []Contender{kubeletDefault, locusFullOrSprd}}
	var b bytes.Buffer
	results, err := s.Report(&b, s.Stream(1, 100))
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("%d results", len(results))
	}
	for _, want := range []string{"intel-2s-48c-ht", "reserved 0,96", "100 pods, seed 1",
		"kubelet static (tm none)", "locus full-pcpus, odd: spread-by-pcpus"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

// benchPods is the stream length of one BenchmarkPacking iteration; kubelet
// with a topology manager on 8 nodes takes about 10 ms a decision.
const benchPods = 1000

// BenchmarkPacking replays every published scenario's stream per iteration
// and reports its outcome next to the time: admitted pods, the share of pods
// with room on one node that got one node, pods sharing a core, and the mean
// decision time.
func BenchmarkPacking(b *testing.B) {
	for _, s := range All() {
		t := fixture.MustBuild(s.Shape)
		events, err := packing.Stream(s.Stream(1, benchPods))
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range s.Against {
			probe, err := c.New(t, s.Reserved)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%s", s.Name, probe.Name()), func(b *testing.B) {
				var res packing.Result
				for b.Loop() {
					if res, err = s.Replay(t, c, events); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(res.Admitted), "admitted")
				b.ReportMetric(100*res.InsideShare(packing.NUMA), "%1-numa")
				b.ReportMetric(float64(res.CoreShared), "core-shared")
				b.ReportMetric(float64(res.MeanLatency().Nanoseconds()), "ns/decision")
			})
		}
	}
}
