package compare

import (
	"fmt"
	"strings"
	"testing"
)

// seeds per machine and pair: enough that every machine sees empty, partly
// used and nearly full nodes, few enough to keep the test fast. kubelet's
// policy takes milliseconds a decision on the largest machines, so they get
// fewer here; cmd/compare runs 40 on every machine.
const testSeeds, largeSeeds, large = 6, 3, 200

// TestNeverWorseThanKubelet runs kubelet's static policy and Locus on the
// same machines, free sets and requests. Locus must never be worse on some
// measure and better on none (dominated), nor refuse a request kubelet
// serves. For the default and full-pcpus pairs it must also never be worse
// on the first measure that differs; the spreading pairs trade by design
// (distribute-across-numa takes a left-over beside another pod before it
// breaks a whole core, spread-by-pcpus leaves an L3 group for cores of its
// own), so there only the dominance check holds, spread judged on how many
// pairs of the request's threads share a core beside the five measures.
func TestNeverWorseThanKubelet(t *testing.T) {
	ms, err := Machines()
	if err != nil {
		t.Fatal(err)
	}
	total, failed := 0, 0
	var report strings.Builder
	for _, m := range ms {
		t.Run(m.Name, func(t *testing.T) {
			for _, p := range Pairs {
				seeds := testSeeds
				if len(m.Topology.CPUs) > large {
					seeds = largeSeeds
				}
				cases, err := Run(m, p, seeds)
				if err != nil {
					t.Fatal(err)
				}
				total += len(cases)
				bad := 0
				for _, c := range cases {
					lexicographic := c.Sign == 1 && !p.Spread && !p.Even
					dominated := c.Dominated == 1
					if !lexicographic && !dominated {
						continue
					}
					if bad++; bad <= MaxExamples {
						fmt.Fprintf(&report, "  %s\n", c)
					}
				}
				if bad > 0 {
					failed += bad
					fmt.Fprintf(&report, "%s / %s: %d of %d worse\n", m.Name, p.Name, bad, len(cases))
				}
			}
		})
	}
	t.Logf("%d cases, %d worse", total, failed)
	if failed > 0 {
		t.Errorf("Locus worse than kubelet in %d of %d cases:\n%s", failed, total, report.String())
	}
}
