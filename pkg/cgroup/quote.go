package cgroup

import (
	"fmt"
	"strconv"
)

// quoteMax is how much of a value read from a file an error repeats: a
// workload can leave a mebibyte in a file of its cgroup, and the error
// goes into logs and Events.
const quoteMax = 64

// quote quotes s for an error message, cut to quoteMax bytes.
func quote(s string) string {
	if len(s) <= quoteMax {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:quoteMax]), len(s))
}
