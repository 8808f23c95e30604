// Command kubelet-checkpoints writes pkg/kubelet's checkpoint fixtures with
// the kubelet's own state packages: go run ./cmd/kubelet-checkpoints (from
// bench/). TestFixturesAreTheKubelets checks they are still what it writes.
package main

import (
	"flag"
	"log"
	"os"

	"github.com/locus-project/locus/bench/kubeletstate"
)

func main() {
	dir := flag.String("out", "../pkg/kubelet/testdata/checkpoints", "directory to write the fixtures into")
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	if err := kubeletstate.WriteAll(*dir); err != nil {
		log.Fatal(err)
	}
}
