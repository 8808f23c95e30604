// Command packing replays the published packing scenarios (see package
// scenario) and prints one table per scenario, ready to paste into the
// benchmarks page.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/locus-project/locus/bench/scenario"
)

func main() {
	pods := flag.Int("pods", 5000, "pods in each stream")
	seed := flag.Uint64("seed", 1, "stream seed")
	load := flag.Float64("load", 0, "offered load as a share of the CPUs (0: each scenario's own)")
	only := flag.String("only", "", "run only the scenarios whose name contains this")
	flag.Parse()
	if err := run(*pods, *seed, *load, *only); err != nil {
		fmt.Fprintln(os.Stderr, "packing:", err)
		os.Exit(1)
	}
}

func run(pods int, seed uint64, load float64, only string) error {
	for _, s := range scenario.All() {
		if !strings.Contains(s.Name, only) {
			continue
		}
		if load > 0 {
			s.Load = load
		}
		if _, err := s.Report(os.Stdout, s.Stream(seed, pods)); err != nil {
			return err
		}
	}
	return nil
}
