package cpualloc

// Each exclusive policy sets the view's capacity (cap) and the counts its
// grade looks at (aux, pref) per core, searches for a domain with an
// evaluator, then fills the domain.

// fullPCPUs hands out whole physical cores only. Capacity is the CPUs of
// whole free cores; there is no tier: every fitting domain is ideal. On a
// hybrid machine (cores of one thread beside cores of two) any count that
// whole cores add up to is served: the widest cores first, then
// single-thread cores for what is left.
func (v *view) fullPCPUs() ([]int, error) {
	t := v.ix.threads
	uniform := v.ix.uniform
	if uniform && v.n%t != 0 {
		return nil, invalidf("%s: requested %d CPUs is not a multiple of %d threads per core", FullPCPUs, v.n, t)
	}
	for c, w := range v.whole {
		v.cap.core[c], v.aux.core[c] = 0, 0
		if w {
			v.cap.core[c] = len(v.ix.cores[c].cpus)
			if v.cap.core[c] < t {
				v.aux.core[c] = v.cap.core[c] // CPUs of whole narrow cores
			}
		}
	}
	v.ix.sum(v.cap)
	v.ix.sum(v.aux)
	d, ok := v.search(func(d domain) (bool, grade) {
		// Wide cores give t CPUs each; what they cannot give exactly must
		// come from narrow ones.
		wide := (v.cap.of(d) - v.aux.of(d)) / t
		return v.cap.of(d) >= v.n && v.n-min(wide, v.n/t)*t <= v.aux.of(d), grade{}
	})
	if !ok {
		if free := v.usableTotal(); free < v.n {
			return nil, notEnough(FullPCPUs, v.n, free)
		}
		whole := v.wholeTotal()
		return nil, shortf("%s: requested=%d, free whole cores=%d (%d CPUs)", FullPCPUs, v.n, whole, v.wholeCPUs())
	}
	out := make([]int, 0, v.n)
	order := v.coreOrder(d, v.cap, v.n, byID)
	for _, wide := range []bool{true, false} {
		for _, c := range order {
			size := len(v.ix.cores[c].cpus)
			if v.whole[c] && (size == t) == wide && size <= v.n-len(out) {
				out = append(out, v.ix.cores[c].cpus...)
			}
		}
	}
	if len(out) != v.n {
		// Cores of several widths (a machine report may give any) that no
		// sum of whole ones makes exactly: never fewer CPUs than asked.
		return nil, shortf("%s: requested=%d, whole free cores add up to %d CPUs at most without exceeding it", FullPCPUs, v.n, len(out))
	}
	return out, nil
}

// spreadByPCPUs takes one thread per physical core before any second thread.
// Capacity is usable threads; a domain is tier 0 when it has at least n cores
// with a usable thread, so no two of the request's threads share a core. Its
// pref is how many whole free cores it would break: a core whose sibling
// another workload holds gives the request's thread a core of its own just as
// well, so such left-over threads go first and whole cores stay whole for
// full-pcpus requests.
func (v *view) spreadByPCPUs() ([]int, error) {
	for c, f := range v.free {
		v.cap.core[c], v.aux.core[c], v.pref.core[c] = f, min(f, 1), 0
		if f > 0 && (!v.whole[c] || v.narrow(c)) {
			v.pref.core[c] = 1
		}
	}
	v.ix.sum(v.cap)
	v.ix.sum(v.aux)
	v.ix.sum(v.pref)
	d, ok := v.search(func(d domain) (bool, grade) {
		cores := v.aux.of(d)
		return v.cap.of(d) >= v.n, grade{tier: boolTier(cores < v.n), pref: max(0, min(v.n, cores)-v.pref.of(d))}
	})
	if !ok {
		return nil, notEnough(SpreadByPCPUs, v.n, v.usableTotal())
	}
	order := v.coreOrder(d, v.aux, min(v.n, v.aux.of(d)), v.fragmentsFirst)
	out := make([]int, 0, v.n)
	for round := 0; round < v.ix.threads && len(out) < v.n; round++ {
		for _, c := range order {
			if len(out) == v.n {
				break
			}
			if id, ok := v.usableThread(c, round); ok {
				out = append(out, id)
			}
		}
	}
	return out, nil
}

// narrow reports whether core c is a whole core of one thread on a machine
// with wider ones (a hybrid part's efficiency core): a spread request takes
// it whole, breaking nothing and sharing nothing, so it goes before
// left-overs beside other workloads.
func (v *view) narrow(c int) bool {
	return v.whole[c] && v.ix.threads > 1 && len(v.ix.cores[c].cpus) == 1
}

// usableThread returns the nth (from 0) usable thread of core c.
func (v *view) usableThread(c, nth int) (int, bool) {
	for _, id := range v.ix.cores[c].cpus {
		if v.usable.has(id) {
			if nth == 0 {
				return id, true
			}
			nth--
		}
	}
	return 0, false
}

// take appends up to want usable threads of core c that are not in out yet.
func (v *view) take(c, want int, out []int) []int {
	for _, id := range v.ix.cores[c].cpus {
		if want == 0 {
			break
		}
		if v.usable.has(id) && !containsInt(out, id) {
			out = append(out, id)
			want--
		}
	}
	return out
}

func boolTier(worse bool) int {
	if worse {
		return 1
	}
	return 0
}

func containsInt(s []int, x int) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
