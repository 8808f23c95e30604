package locality

// Breakdown splits memory the way `numastat -p` does, in base pages per
// node: hugetlbfs mappings, the heap, stacks, and everything else
// (private and file mappings alike).
type Breakdown struct {
	Huge, Heap, Stack, Private NodePages
}

// BreakdownOf sums the processes' mappings by category.
func BreakdownOf(mems []ProcessMemory) Breakdown {
	b := Breakdown{Huge: NodePages{}, Heap: NodePages{}, Stack: NodePages{}, Private: NodePages{}}
	for _, pm := range mems {
		for _, m := range pm.Mappings {
			pages := m.BasePages(pm.BasePageKB)
			switch {
			case m.Huge:
				b.Huge.Add(pages)
			case m.Heap:
				b.Heap.Add(pages)
			case m.Stack:
				b.Stack.Add(pages)
			default:
				b.Private.Add(pages)
			}
		}
	}
	return b
}

// Total is every category added up.
func (b Breakdown) Total() NodePages {
	t := NodePages{}
	for _, p := range []NodePages{b.Huge, b.Heap, b.Stack, b.Private} {
		t.Add(p)
	}
	return t
}
