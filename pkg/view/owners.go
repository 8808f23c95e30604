package view

import (
	"strconv"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// Kind is what a CPU is used for.
type Kind string

// The kinds of CPU owner, each CPU having exactly one.
const (
	KindExclusive Kind = "exclusive"    // bound to one workload of its own
	KindBurst     Kind = "static-burst" // bound to static-burst workloads, lent to the shared pool
	KindShared    Kind = "shared"       // the shared pool
	KindBE        Kind = "be"           // the BE pool where it is narrower than the shared one
	KindReserved  Kind = "reserved"     // never handed out (system daemons)
	KindIdle      Kind = "idle"         // nobody's: isolated CPUs, or no agent
)

// Kinds lists every kind, in the order legends show them.
var Kinds = []Kind{KindExclusive, KindBurst, KindShared, KindBE, KindReserved, KindIdle}

// Owner is who a CPU belongs to; Workload is set for exclusive and
// static-burst CPUs.
type Owner struct {
	Kind     Kind
	Workload string
}

// Owners gives every online CPU its owner. A CPU in several static-burst
// workloads goes to the first by name; exclusive CPUs are never shared.
func Owners(s *Snapshot) map[int]Owner {
	out := make(map[int]Owner, len(s.Topology.CPUs))
	if !s.Agent {
		for _, c := range s.Topology.CPUs {
			out[c.ID] = Owner{Kind: KindIdle}
		}
		return out
	}
	reserved, shared, be := parseList(s.Pools.Reserved), parseList(s.Pools.Shared), parseList(s.Pools.BE)
	bound := map[int]Owner{}
	for _, name := range sortedNames(s.Workloads) {
		w := workloadNamed(s.Workloads, name)
		kind := KindExclusive
		switch w.Pool {
		case "exclusive":
		case "static-burst":
			kind = KindBurst
		default:
			continue
		}
		for _, id := range parseList(w.CPUs).List() {
			if prev, ok := bound[id]; !ok || (prev.Kind == KindBurst && kind == KindExclusive) {
				bound[id] = Owner{Kind: kind, Workload: name}
			}
		}
	}
	narrowBE := !be.Equals(shared)
	for _, c := range s.Topology.CPUs {
		o, ok := bound[c.ID]
		switch {
		case ok && o.Kind == KindExclusive:
		case reserved.Contains(c.ID):
			o = Owner{Kind: KindReserved}
		case ok:
		case s.Topology.Isolated.Contains(c.ID):
			o = Owner{Kind: KindIdle}
		case narrowBE && be.Contains(c.ID):
			o = Owner{Kind: KindBE}
		case shared.Contains(c.ID):
			o = Owner{Kind: KindShared}
		default:
			o = Owner{Kind: KindIdle}
		}
		out[c.ID] = o
	}
	return out
}

// NodeCPUs counts each node's CPUs by kind (every kind present, zeros too),
// for the per-node metric and the summaries.
func NodeCPUs(s *Snapshot) map[int]map[Kind]int {
	owners := Owners(s)
	out := map[int]map[Kind]int{}
	for _, n := range s.Topology.Nodes {
		out[n.ID] = map[Kind]int{}
		for _, k := range Kinds {
			out[n.ID][k] = 0
		}
	}
	for _, c := range s.Topology.CPUs {
		out[c.NUMA][owners[c.ID].Kind]++
	}
	return out
}

func parseList(s string) cpuset.CPUSet {
	set, err := topology.ParseCPUList(s)
	if err != nil {
		return cpuset.New()
	}
	return set
}

func workloadNamed(ws []Workload, name string) Workload {
	for _, w := range ws {
		if w.Name == name {
			return w
		}
	}
	return Workload{}
}

// palette holds the workload colours: saturated, told apart from one
// another and from the pale pool colours.
var palette = []string{"#d62728", "#2ca02c", "#1f77b4", "#ff7f0e", "#9467bd", "#17becf",
	"#e377c2", "#8c564b", "#bcbd22", "#393b79", "#637939", "#843c39"}

// kindColors are the colours of CPUs that no single workload owns.
var kindColors = map[Kind]string{KindShared: "#c6dbef", KindBE: "#fdd0a2", KindReserved: "#9e9e9e", KindIdle: "#eeeeee"}

// Colors gives each workload its colour, by name order, so a workload keeps
// its colour while others come and go after it.
func Colors(ws []Workload) map[string]string {
	out := map[string]string{}
	for i, name := range sortedNames(ws) {
		out[name] = palette[i%len(palette)]
	}
	return out
}

// Markers give each workload the letter its CPUs show in the terminal: A–Z,
// then 0–9, then *.
func Markers(ws []Workload) map[string]string {
	out := map[string]string{}
	for i, name := range sortedNames(ws) {
		switch {
		case i < 26:
			out[name] = string(rune('A' + i))
		case i < 36:
			out[name] = strconv.Itoa(i - 26)
		default:
			out[name] = "*"
		}
	}
	return out
}

// ownerColor is the fill of a CPU with owner o.
func ownerColor(o Owner, colors map[string]string) string {
	if o.Workload != "" {
		if c, ok := colors[o.Workload]; ok {
			return c
		}
	}
	if c, ok := kindColors[o.Kind]; ok {
		return c
	}
	return kindColors[KindIdle]
}

// textOn is a readable text colour on background hex ("#rrggbb").
func textOn(hex string) string {
	if len(hex) != 7 {
		return "#222222"
	}
	v, err := strconv.ParseUint(hex[1:], 16, 32)
	if err != nil {
		return "#222222"
	}
	r, g, b := float64(v>>16&0xff), float64(v>>8&0xff), float64(v&0xff)
	if 0.299*r+0.587*g+0.114*b < 140 {
		return "#ffffff"
	}
	return "#222222"
}

func itoa(n int) string { return strconv.Itoa(n) }
