// Command compare prints, per machine, how Locus's allocator fares against
// kubelet's static CPU manager policy on seeded random free sets: cases,
// better / equal / worse, and the measure that decided (docs/allocator.md).
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
	flag.Parse()
	ms, err := compare.Machines()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("| machine | kubelet / Locus | cases | Locus better | equal | Locus worse | better on (sockets, nodes, L3, shared, broken, kubelet refused or invalid) |")
	fmt.Println("|---|---|---|---|---|---|---|")
	var total compare.Summary
	for _, m := range ms {
		if !strings.Contains(m.Name, *only) {
			continue
		}
		for _, p := range compare.Pairs {
			cases, err := compare.Run(m, p, *seeds)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			s := compare.Summarise(cases)
			fmt.Printf("| %s | %s | %d | %d | %d | %d | %v |\n", m.Name, p.Name, s.Cases, s.Better, s.Equal, s.Worse, s.BetterOn)
			total.Cases, total.Better, total.Equal, total.Worse = total.Cases+s.Cases, total.Better+s.Better, total.Equal+s.Equal, total.Worse+s.Worse
			for i := range s.BetterOn {
				total.BetterOn[i] += s.BetterOn[i]
				total.WorseOn[i] += s.WorseOn[i]
			}
			for _, c := range s.Examples {
				fmt.Fprintln(os.Stderr, "worse:", c)
			}
		}
	}
	fmt.Printf("| **all** | | %d | %d | %d | %d | %v |\n", total.Cases, total.Better, total.Equal, total.Worse, total.BetterOn)
}
