// Command compare prints, per machine, how Locus's allocator fares against
// kubelet's static CPU manager policy on seeded random free sets: cases,
// better / equal / worse by the first measure that differs, the cases where
// Locus is worse on some measure and better on none (dominated), and the
// measure that decided (docs/allocator.md).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/locus-project/locus/bench/compare"
)

func main() {
	seeds := flag.Int("seeds", 40, "random free sets per machine and policy pair")
	only := flag.String("only", "", "run only the machines whose name contains this")
	pair := flag.String("pair", "", "run only the policy pairs whose name contains this")
	dominated := flag.Bool("dominated", false, "print every dominated case to stderr, not only the first few worse ones")
	flag.Parse()
	ms, err := compare.Machines()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("| machine | kubelet / Locus | cases | Locus better | equal | Locus worse | dominated | better on (sockets, nodes, L3, shared, broken, kubelet refused or invalid) |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	var total compare.Summary
	perPair := map[string]*compare.Summary{}
	var names []string
	for _, m := range ms {
		if !strings.Contains(m.Name, *only) {
			continue
		}
		for _, p := range compare.Pairs {
			if !strings.Contains(p.Name, *pair) {
				continue
			}
			cases, err := compare.Run(m, p, *seeds)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			s := compare.Summarise(cases)
			fmt.Printf("| %s | %s | %d | %d | %d | %d | %d | %v |\n", m.Name, p.Name, s.Cases, s.Better, s.Equal, s.Worse, s.Dominated, s.BetterOn)
			total.Add(s)
			if perPair[p.Name] == nil {
				perPair[p.Name] = &compare.Summary{}
				names = append(names, p.Name)
			}
			perPair[p.Name].Add(s)
			for _, c := range s.Examples {
				fmt.Fprintln(os.Stderr, "worse:", c)
			}
			for _, c := range cases {
				if *dominated && c.Dominated == 1 {
					fmt.Fprintln(os.Stderr, "dominated:", c)
				}
			}
		}
	}
	for _, name := range names {
		s := perPair[name]
		fmt.Printf("| all | %s | %d | %d | %d | %d | %d (on %v) | %v |\n", name, s.Cases, s.Better, s.Equal, s.Worse, s.Dominated, s.DominatedOn, s.BetterOn)
	}
	fmt.Printf("| **all** | | %d | %d | %d | %d | %d (on %v) | %v |\n", total.Cases, total.Better, total.Equal, total.Worse, total.Dominated, total.DominatedOn, total.BetterOn)
}
