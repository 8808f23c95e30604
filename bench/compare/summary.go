package compare

// Summary counts the cases of one machine and pair.
type Summary struct {
	Cases, Worse, Better, Equal int
	// WorseOn and BetterOn count cases by the deciding measure; index
	// len(Names) counts requests one side refused.
	WorseOn, BetterOn [len(Names) + 1]int
	Examples          []Case // the first few worse cases
}

// MaxExamples bounds Summary.Examples.
const MaxExamples = 3

// Summarise counts cases.
func Summarise(cases []Case) Summary {
	var s Summary
	for _, c := range cases {
		s.Cases++
		on := c.Measure
		if on < 0 {
			on = len(Names)
		}
		switch c.Sign {
		case 1:
			s.Worse++
			s.WorseOn[on]++
			if len(s.Examples) < MaxExamples {
				s.Examples = append(s.Examples, c)
			}
		case -1:
			s.Better++
			s.BetterOn[on]++
		default:
			s.Equal++
		}
	}
	return s
}
