package compare

// Summary counts the cases of one machine and pair.
type Summary struct {
	Cases, Worse, Better, Equal int
	// WorseOn and BetterOn count cases by the deciding measure; index
	// len(Names) counts requests one side refused.
	WorseOn, BetterOn [len(Names) + 1]int
	// Dominated counts the cases where Locus is worse on some measure and
	// better on none (a refusal of what kubelet served included);
	// DominatedOn counts them by every measure Locus is worse on.
	Dominated   int
	DominatedOn [len(Names) + 1]int
	Examples    []Case // the first few worse or dominated cases
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
		case -1:
			s.Better++
			s.BetterOn[on]++
		default:
			s.Equal++
		}
		if c.Dominated == 1 {
			s.Dominated++
			if c.LocusErr != nil {
				s.DominatedOn[len(Names)]++
			}
			l, k := c.L.list(), c.K.list()
			for i := range l {
				if c.LocusErr == nil && l[i] > k[i] {
					s.DominatedOn[i]++
				}
			}
		}
		if (c.Sign == 1 || c.Dominated == 1) && len(s.Examples) < MaxExamples {
			s.Examples = append(s.Examples, c)
		}
	}
	return s
}

// Add adds o's counts to s, without its examples.
func (s *Summary) Add(o Summary) {
	s.Cases, s.Worse, s.Better, s.Equal, s.Dominated = s.Cases+o.Cases, s.Worse+o.Worse, s.Better+o.Better, s.Equal+o.Equal, s.Dominated+o.Dominated
	for i := range s.WorseOn {
		s.WorseOn[i] += o.WorseOn[i]
		s.BetterOn[i] += o.BetterOn[i]
		s.DominatedOn[i] += o.DominatedOn[i]
	}
}
