package cpuset

// visit is one group in a fill order and how much the fill takes from it.
type visit struct{ group, amount int }

// packOrder lists groups in the order a packing fill of n visits them. While
// something is left it takes the best-fitting group (the one with the least
// room that still holds everything left; ties: earliest in groups) and stops,
// or, when no group holds it all, the group with the most room, whole (ties:
// earliest), and goes on. This spans the fewest groups a greedy fill can and
// leaves the biggest holes elsewhere intact. Groups not needed follow with an
// amount equal to their room, so policies that go round the cores several
// times (spread) still see every group.
func packOrder(groups []int, room []int, n int) []visit {
	out := make([]visit, 0, len(groups))
	used := make([]bool, len(groups))
	for n > 0 {
		fit, big := -1, -1
		for i, g := range groups {
			r := room[g]
			if used[i] || r <= 0 {
				continue
			}
			if r >= n && (fit < 0 || r < room[groups[fit]]) {
				fit = i
			}
			if big < 0 || r > room[groups[big]] {
				big = i
			}
		}
		if fit >= 0 {
			used[fit] = true
			out = append(out, visit{groups[fit], n})
			break
		}
		if big < 0 {
			break
		}
		used[big] = true
		out = append(out, visit{groups[big], room[groups[big]]})
		n -= room[groups[big]]
	}
	for i, g := range groups {
		if !used[i] && room[g] > 0 {
			out = append(out, visit{g, room[g]})
		}
	}
	return out
}

// coreOrder flattens domain d into cores in packing order for n units of
// measure m: nodes (for a multi-node domain) by packOrder, then each node's L3
// groups by packOrder for that node's amount, then each group's cores by
// leaf.
func (v *view) coreOrder(d domain, m measure, n int, leaf func(cores, out []int) []int) []int {
	out := make([]int, 0, 64)
	if d.l3 >= 0 {
		return leaf(v.ix.l3s[d.l3].cores, out)
	}
	nodes := []visit{{d.nodes[0], n}}
	if len(d.nodes) > 1 {
		nodes = packOrder(d.nodes, m.node, n)
	}
	for _, nv := range nodes {
		for _, lv := range packOrder(v.ix.nodes[nv.group].l3s, m.l3, nv.amount) {
			out = leaf(v.ix.l3s[lv.group].cores, out)
		}
	}
	return out
}

// byID keeps a group's cores in id order.
func byID(cores, out []int) []int { return append(out, cores...) }

// fragmentsFirst puts cores with a usable thread that are not whole free
// cores (a sibling is held by another workload, reserved, isolated, offline
// or burst-loaded) before whole free cores, so a spread request uses
// left-over threads before it breaks a core a full-pcpus request could use.
func (v *view) fragmentsFirst(cores, out []int) []int {
	for _, c := range cores {
		if v.free[c] > 0 && !v.whole[c] {
			out = append(out, c)
		}
	}
	for _, c := range cores {
		if v.whole[c] {
			out = append(out, c)
		}
	}
	return out
}
