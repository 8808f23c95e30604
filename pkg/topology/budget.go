package topology

import "fmt"

// CPUBudget bounds the CPUs a whole document may expand its CPU lists into:
// each list is bounded by MaxCPUID, but a document of many lists is not,
// and a few kilobytes of "0-8191" lists expand into gigabytes. A parser
// sizes the budget from what the document can describe (a machine's CPUs,
// a pod's containers) and reads every list through it: a list is counted
// (CountCPUList) and charged before it is expanded, so a document over
// budget is refused having made nothing.
type CPUBudget struct {
	left int
	what string // what the budget is sized from, for the error
}

// NewCPUBudget allows n CPUs in all; why says what n is sized from, as
// the error completes "more than n CPUs in all: ...".
func NewCPUBudget(n int, why string) *CPUBudget {
	return &CPUBudget{left: max(n, 0), what: why}
}

// Charge counts a list's CPUs against the budget without expanding it.
func (b *CPUBudget) Charge(list string) (int, error) {
	n, err := CountCPUList(list)
	if err != nil {
		return 0, err
	}
	if n > b.left {
		return 0, fmt.Errorf("%d CPUs: more than the %d left of the budget (%s)", n, b.left, b.what)
	}
	b.left -= n
	return n, nil
}
