package packing

import (
	"math"
	"reflect"
	"testing"
)

func TestStreamIsDeterministicAndWellFormed(t *testing.T) {
	cfg := StreamConfig{Seed: 7, Pods: 4000, Mix: MixedSizes, Capacity: 190, Load: 1}
	a, err := Stream(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Stream(cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same config gave different streams")
	}
	cfg.Seed = 8
	if c, _ := Stream(cfg); reflect.DeepEqual(a, c) {
		t.Fatal("different seeds gave the same stream")
	}
	if len(a) != 2*cfg.Pods {
		t.Fatalf("got %d events, want %d", len(a), 2*cfg.Pods)
	}
	sizes := map[int]bool{}
	for _, s := range MixedSizes {
		sizes[s.CPUs] = true
	}
	arrived := map[int]bool{}
	drawn := map[int]bool{}
	for i, ev := range a {
		if i > 0 && ev.At < a[i-1].At {
			t.Fatalf("event %d at %v before event %d at %v", i, ev.At, i-1, a[i-1].At)
		}
		if !sizes[ev.CPUs] {
			t.Fatalf("pod %d asks %d CPUs, not a size of the mix", ev.Pod, ev.CPUs)
		}
		if ev.Arrive {
			arrived[ev.Pod] = true
			drawn[ev.CPUs] = true
		} else if !arrived[ev.Pod] {
			t.Fatalf("pod %d leaves before it arrives", ev.Pod)
		}
	}
	if len(drawn) != len(sizes) {
		t.Fatalf("4000 pods drew only sizes %v of %d", drawn, len(sizes))
	}
}

// The offered load is what the lifetimes are derived from: the CPUs asked for
// at once, averaged over time, must come out near Load x Capacity.
func TestStreamOffersTheConfiguredLoad(t *testing.T) {
	for _, load := range []float64{0.5, 1.2} {
		cfg := StreamConfig{Seed: 3, Pods: 40000, Mix: MixedSizes, Capacity: 190, Load: load}
		events, err := Stream(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var area, last float64
		asked := 0
		for _, ev := range events {
			area += float64(asked) * (ev.At - last)
			last = ev.At
			if ev.Arrive {
				asked += ev.CPUs
			} else {
				asked -= ev.CPUs
			}
		}
		got := area / last / float64(cfg.Capacity)
		if math.Abs(got-load)/load > 0.1 {
			t.Errorf("load %v: offered %.3f", load, got)
		}
	}
}

func TestStreamRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]StreamConfig{
		"no sizes":    {Pods: 1, Capacity: 1, Load: 1},
		"zero cpus":   {Pods: 1, Capacity: 1, Load: 1, Mix: Mix{{0, 1}}},
		"zero weight": {Pods: 1, Capacity: 1, Load: 1, Mix: Mix{{1, 0}}},
		"no pods":     {Capacity: 1, Load: 1, Mix: MixedSizes},
		"no capacity": {Pods: 1, Load: 1, Mix: MixedSizes},
		"no load":     {Pods: 1, Capacity: 1, Mix: MixedSizes},
		"nan load":    {Pods: 1, Capacity: 1, Load: math.NaN(), Mix: MixedSizes},
	} {
		if _, err := Stream(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestMixMean(t *testing.T) {
	if got := (Mix{{1, 1}, {4, 3}}).Mean(); got != 3.25 {
		t.Fatalf("mean %v, want 3.25", got)
	}
}
