package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkStoreSave is one record into an originals checkpoint of 300
// pods' files (eight files each, half of them marked), as each reconcile
// under a churn of pods makes.
func BenchmarkStoreSave(b *testing.B) {
	s, err := OpenFileStore(filepath.Join(b.TempDir(), "originals.json"))
	if err != nil {
		b.Fatal(err)
	}
	data, marks := map[string]string{}, map[string]Mark{}
	for i := range 300 {
		pod := fmt.Sprintf("kubepods/burstable/pod%08x-4c1d-4e2f-9a1b-0123456789ab", i)
		for _, f := range []string{"cpuset.cpus", "cpuset.mems", "cpu.weight", "cpu.max", "memory.min", "memory.low", "memory.high", "cpu.idle"} {
			data[pod+"/"+f] = "0-95"
		}
		if i%2 == 0 {
			marks[pod] = ChildrenFromParent
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.save(data, marks); err != nil {
			b.Fatal(err)
		}
	}
	if fi, err := os.Stat(s.path); err != nil || fi.Size() == 0 {
		b.Fatalf("nothing saved: %v", err)
	}
}
