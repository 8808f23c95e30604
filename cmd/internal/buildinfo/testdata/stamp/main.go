// Prints the build info, for the test that stamps it as the Makefile does.
package main

import (
	"fmt"

	"github.com/locus-project/locus/cmd/internal/buildinfo"
)

func main() { fmt.Println(buildinfo.Get().String("stamp")) }
