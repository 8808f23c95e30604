package core

import (
	"encoding/json"
	"sync"

	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology"
)

// reportTexts keeps what was read of the reports' CPU topology annotations
// last, by their text. Every node of one kind of machine publishes the
// same CPU list (its CPUs' cores, sockets, NUMA nodes and L3s: 192
// entries, 10 KB, on the scale run's machine), and every such node that
// holds nothing the same annotation; decoding them was 1.2 ms of SetNRT's
// 1.5 on that machine, seconds of the scheduler's start at 5000 nodes
// before its first pod with CPUs could be placed. A text read again is
// what it was read as before. Safe for concurrent use; what it hands out
// is shared and never changed.
type reportTexts struct {
	mu    sync.Mutex
	lists map[string][]topology.CPU // by the CPU list's text
	idle  map[string]readText       // by the annotation's text, for annotations with no holding
}

// readText is an annotation as read, and its CPU list's text.
type readText struct {
	ct   nrt.CPUTopology
	cpus string
}

// A cluster has a few kinds of machine; texts past textsKept make a new
// set. Texts longer than maxKeptText (a report's annotations are at most
// 256 KB in all) are not kept: the set stays within a few megabytes
// whatever the reports say.
const (
	textsKept   = 8
	maxKeptText = 256 << 10
)

// read is the annotation's text as readNRT reads it, and its CPU list's
// text (for the machine's fingerprint). t may be nil: nothing is kept.
func (t *reportTexts) read(raw string) (nrt.CPUTopology, string, error) {
	if t != nil {
		t.mu.Lock()
		r, ok := t.idle[raw]
		t.mu.Unlock()
		if ok {
			return r.ct, r.cpus, nil
		}
	}
	var in placementTopology
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return nrt.CPUTopology{}, "", err
	}
	r := readText{ct: in.CPUTopology, cpus: string(in.CPUs)}
	var err error
	if r.ct.CPUs, err = t.list(in.CPUs); err != nil {
		return nrt.CPUTopology{}, "", err
	}
	// A node that holds nothing publishes what every other such node of
	// its machine does; one that holds pods, its own.
	if t != nil && len(r.ct.Exclusive) == 0 && len(r.ct.StaticBurst) == 0 && len(raw) <= maxKeptText {
		t.mu.Lock()
		t.idle = keep(t.idle, raw, r)
		t.mu.Unlock()
	}
	return r.ct, r.cpus, nil
}

// list is the CPU list raw says, nil for none.
func (t *reportTexts) list(raw json.RawMessage) ([]topology.CPU, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if t != nil {
		t.mu.Lock()
		cpus, ok := t.lists[string(raw)]
		t.mu.Unlock()
		if ok {
			return cpus, nil
		}
	}
	var cpus []topology.CPU
	if err := json.Unmarshal(raw, &cpus); err != nil {
		return nil, err
	}
	if t != nil && len(raw) <= maxKeptText {
		t.mu.Lock()
		t.lists = keep(t.lists, string(raw), cpus)
		t.mu.Unlock()
	}
	return cpus, nil
}

func keep[V any](m map[string]V, k string, v V) map[string]V {
	if m == nil || len(m) >= textsKept {
		m = make(map[string]V, textsKept)
	}
	m[k] = v
	return m
}
