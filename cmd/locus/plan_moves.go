package main

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/moveplan"
	"github.com/locus-project/locus/pkg/topology"
)

// planMoveFlags are the flags that name the workloads holding CPUs and let
// `locus plan` move them.
type planMoveFlags struct {
	holdings   []string // NAME=CPUS
	movable    []string // names of holdings
	allowMoves bool
}

// planMove is one move of `locus plan -o json`.
type planMove struct {
	Workload  string `json:"workload"`
	From      string `json:"from"`
	To        string `json:"to"`
	FromNodes []int  `json:"fromNodes"`
	ToNodes   []int  `json:"toNodes"`
}

func addMoveFlags(f *pflag.FlagSet, m *planMoveFlags) {
	f.StringArrayVar(&m.holdings, "holding", nil, "a workload holding CPUs, as NAME=CPUS (Linux list format); repeat for each")
	f.StringArrayVar(&m.movable, "movable", nil, "the name of a --holding that may move; repeat for each")
	f.BoolVar(&m.allowMoves, "allow-moves", false, "move --movable holdings, fewest CPUs first, so that the request gets one node (or as few as on an empty machine) and whole cores")
}

var holdingName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,252}$`)

// parse reads --holding and --movable, at most moveplan.MaxHoldings. A
// holding accepted is a subset of the machine's CPUs disjoint from those
// before it, so all of them expand to at most the machine's CPUs, and the
// list that is refused to at most MaxCPUID+1 more: every list is counted
// against that budget before it is expanded.
func (m planMoveFlags) parse(t *topology.Topology, allocated cpuset.CPUSet) ([]moveplan.Holding, error) {
	if len(m.holdings) > moveplan.MaxHoldings {
		return nil, usagef("--holding: %d given, at most %d", len(m.holdings), moveplan.MaxHoldings)
	}
	if len(m.movable) > len(m.holdings) {
		return nil, usagef("--movable: %d given, more than the %d --holding", len(m.movable), len(m.holdings))
	}
	online := t.CPUSet()
	budget := topology.NewCPUBudget(online.Size()+topology.MaxCPUID+1, "the machine's CPUs, which holdings share without overlap, and one list more")
	out := make([]moveplan.Holding, 0, len(m.holdings))
	index := map[string]int{}
	var held cpuset.CPUSet
	for _, arg := range m.holdings {
		name, list, ok := strings.Cut(arg, "=")
		switch {
		case !ok:
			return nil, usagef("--holding %s: want NAME=CPUS", topology.Quote(arg))
		case !holdingName.MatchString(name):
			return nil, usagef("--holding %s: the name %s is not letters, digits, '.', '_', '/' or '-' (at most 253)", topology.Quote(arg), topology.Quote(name))
		}
		if _, dup := index[name]; dup {
			return nil, usagef("--holding %s: the name %s is given twice", topology.Quote(arg), topology.Quote(name))
		}
		if _, err := budget.Charge(list); err != nil {
			return nil, usagef("--holding %s: %v", topology.Quote(arg), err)
		}
		cpus, err := topology.ParseCPUList(list)
		switch {
		case err != nil:
			return nil, usagef("--holding %s: %v", topology.Quote(arg), err)
		case cpus.IsEmpty():
			return nil, usagef("--holding %s: holds no CPUs", topology.Quote(arg))
		case !cpus.IsSubsetOf(online):
			return nil, usagef("--holding %s: CPUs %s are not online CPUs of this machine (%s)", topology.Quote(arg), cpus.Difference(online), online)
		case !cpus.Intersection(allocated).IsEmpty():
			return nil, usagef("--holding %s: CPUs %s are also in --allocated", topology.Quote(arg), cpus.Intersection(allocated))
		}
		for _, h := range out {
			if both := h.CPUs.Intersection(cpus); !both.IsEmpty() {
				return nil, usagef("--holding %s: CPUs %s are also held by %s", topology.Quote(arg), both, topology.Quote(h.Name))
			}
		}
		index[name] = len(out)
		held = held.Union(cpus)
		out = append(out, moveplan.Holding{Name: name, CPUs: cpus})
	}
	for _, name := range m.movable {
		i, ok := index[name]
		if !ok {
			return nil, usagef("--movable %s: no --holding has that name", topology.Quote(name))
		}
		out[i].Movable = true
	}
	return out, nil
}

// place is the request's placement: with the holdings taken, or, with
// --allow-moves, after the cheapest moves that give it its usual placement.
// moves is nil without --allow-moves.
func (m planMoveFlags) place(t *topology.Topology, st cpualloc.State, reserved cpuset.CPUSet, req cpualloc.Request,
	holdings []moveplan.Holding) (cpualloc.Result, []planMove, error) {
	if !m.allowMoves {
		for _, h := range holdings {
			st.Exclusive = st.Exclusive.Union(h.CPUs)
		}
		res, err := cpualloc.Allocate(t, st, reserved, req)
		return res, nil, err
	}
	if req.Policy == cpualloc.StaticBurst {
		return cpualloc.Result{}, nil, usagef("--allow-moves makes room for exclusive CPUs; --policy %s shares them", cpualloc.StaticBurst)
	}
	plan, err := moveplan.Make(t, moveplan.Input{State: st, Reserved: reserved, Holdings: holdings, Request: req})
	switch {
	case errors.Is(err, moveplan.ErrNoMoves):
		return cpualloc.Result{}, nil, usagef("--allow-moves: no moves give --cpus %d its usual placement: %v", req.CPUs, err)
	case err != nil:
		return cpualloc.Result{}, nil, err
	}
	moves := make([]planMove, 0, len(plan.Moves))
	for _, mv := range plan.Moves {
		moves = append(moves, planMove{Workload: mv.Workload, From: mv.From.String(), To: mv.To.String(),
			FromNodes: mv.FromNodes, ToNodes: mv.ToNodes})
	}
	return plan.Result, moves, nil
}

// writeMoves prints one line per move, in the order to carry them out.
func writeMoves(w io.Writer, moves []planMove) error {
	if len(moves) == 0 {
		_, err := fmt.Fprintln(w, "moves:       none")
		return err
	}
	for _, mv := range moves {
		if _, err := fmt.Fprintf(w, "%s: %s -> %s (node %s -> %s)\n", mv.Workload, mv.From, mv.To,
			joinIDs(mv.FromNodes), joinIDs(mv.ToNodes)); err != nil {
			return err
		}
	}
	return nil
}
