package cpualloc

// With returns a copy of s in which res, allocated for req, is in use:
// exclusive policies add res.CPUs to Exclusive; static-burst adds the pod's
// BurstShare to each of its CPUs; res.MemHeld comes off Free (when Free is
// accounted). s itself is not changed.
func (s State) With(res Result, req Request) State {
	return s.apply(res, req, 1)
}

// Without returns a copy of s with res (allocated for req) released: the
// inverse of With. Burst loads that reach zero are removed.
func (s State) Without(res Result, req Request) State {
	return s.apply(res, req, -1)
}

func (s State) apply(res Result, req Request, sign int64) State {
	out := State{Exclusive: s.Exclusive, BurstMilli: make(map[int]int64, len(s.BurstMilli)), Free: s.Free}
	for id, m := range s.BurstMilli {
		out.BurstMilli[id] = m
	}
	if s.Free != nil {
		out.Free = make(map[int]Memory, len(s.Free))
		for id, f := range s.Free {
			if sign > 0 {
				out.Free[id] = f.Sub(res.MemHeld[id])
			} else {
				out.Free[id] = f.Add(res.MemHeld[id])
			}
		}
	}
	if req.Policy != StaticBurst {
		if sign > 0 {
			out.Exclusive = out.Exclusive.Union(res.CPUs)
		} else {
			out.Exclusive = out.Exclusive.Difference(res.CPUs)
		}
		return out
	}
	n := res.CPUs.Size()
	share := BurstShare(Request{CPUs: n, RequestMilli: req.RequestMilli}.requestMilli(), n)
	for _, id := range res.CPUs.UnsortedList() {
		m := out.BurstMilli[id] + sign*share
		if m > 0 {
			out.BurstMilli[id] = m
		} else {
			delete(out.BurstMilli, id)
		}
	}
	return out
}
