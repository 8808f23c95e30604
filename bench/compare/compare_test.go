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
// same machines, free sets and requests; Locus must never be worse on the
// first measure that differs, nor refuse a request kubelet serves.
func TestNeverWorseThanKubelet(t *testing.T) {
	ms, err := Machines()
	if err != nil {
		t.Fatal(err)
	}
	total, worse := 0, 0
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
				s := Summarise(cases)
				total += s.Cases
				worse += s.Worse
				if s.Worse > 0 {
					fmt.Fprintf(&report, "%s / %s: %d of %d worse %v\n", m.Name, p.Name, s.Worse, s.Cases, s.WorseOn)
					for _, c := range s.Examples {
						fmt.Fprintf(&report, "  %s\n", c)
					}
				}
			}
		})
	}
	t.Logf("%d cases, %d worse", total, worse)
	if worse > 0 {
		t.Errorf("Locus worse than kubelet in %d of %d cases:\n%s", worse, total, report.String())
	}
}
