// Package hugetest reserves huge pages on a NUMA node of the real kernel for
// a test, and puts the node's old count back when the test ends. Only the
// NUMA test guest (test/numavm) lets a test do that: on an ordinary host the
// pages would be taken from the host's memory, so there it skips.
package hugetest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Reserve sets node's count of 2 MiB pages to pages, or ends the test.
func Reserve(t testing.TB, node int, pages uint64) {
	t.Helper()
	if os.Getenv("LOCUS_NUMAVM") != "1" {
		t.Skip("reserves huge pages on the machine: runs in the NUMA test guest (test/numavm)")
	}
	path := fmt.Sprintf("/sys/devices/system/node/node%d/hugepages/hugepages-2048kB/nr_hugepages", node)
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the guest's kernel has no 2 MiB pages on node %d: %v", node, err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(path, old, 0o644); err != nil {
			t.Errorf("restore %s to %s: %v", path, strings.TrimSpace(string(old)), err)
		}
	})
	want := strconv.FormatUint(pages, 10)
	if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); strings.TrimSpace(string(got)) != want {
		t.Fatalf("asked the kernel for %d pages on node %d, it reserved %s", pages, node, strings.TrimSpace(string(got)))
	}
}
