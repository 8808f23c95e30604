package locality

import (
	"math/bits"
	"sort"
)

// split divides total into parts proportional to weights, never giving part
// i more than caps[i]. The rounding remainder (fewer units than parts) goes
// one unit at a time to the heaviest parts first, lower index on ties. The
// caller keeps total <= sum(caps); the result then sums to total.
func split(total uint64, weights, caps []uint64) []uint64 {
	out := make([]uint64, len(weights))
	w := sum(weights)
	if total == 0 || w == 0 {
		return out
	}
	var given uint64
	for i, wi := range weights {
		// total*wi/w without overflow: the quotient is at most total.
		hi, lo := bits.Mul64(total, wi)
		q, _ := bits.Div64(hi, lo, w)
		out[i] = min(q, caps[i])
		given += out[i]
	}
	order := make([]int, len(weights))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return weights[order[a]] > weights[order[b]] })
	for given < total {
		progressed := false
		for _, i := range order {
			if given < total && out[i] < caps[i] {
				out[i]++
				given++
				progressed = true
			}
		}
		if !progressed {
			break
		}
	}
	return out
}

func sum(xs []uint64) uint64 {
	var t uint64
	for _, x := range xs {
		t += x
	}
	return t
}
