package core

// exclOver is the byte count that says the CPU's count is in over.
const exclOver = 255

// holders is how many exclusive holdings list CPU id.
func (t *tally) holders(id int) uint32 {
	if t.excl[id] == exclOver {
		return t.over[id]
	}
	return uint32(t.excl[id])
}

// setHolders makes CPU id's count n.
func (t *tally) setHolders(id int, n uint32) {
	if n < exclOver {
		t.excl[id] = uint8(n)
		delete(t.over, id)
		return
	}
	if t.over == nil {
		t.over = map[int]uint32{}
	}
	t.excl[id], t.over[id] = exclOver, n
}
