package probe

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/locus-project/locus/internal/testfs"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/workload"
)

// TestResidentOfMovableWorkloads: the resident memory per node of the
// workloads opted in to moves, from memory.numa_stat; those not opted in
// are not read, nor any with the switch off, and one whose file is missing or bad is left out.
func TestResidentOfMovableWorkloads(t *testing.T) {
	cg := t.TempDir()
	testfs.Write(t, filepath.Join(cg, "pods/a/memory.numa_stat"), "anon N0=4096 N1=8192\nshmem N0=4096 N1=0\nfile N0=1 N1=1\n")
	testfs.Write(t, filepath.Join(cg, "pods/b/memory.numa_stat"), "anon N0=1\n")
	testfs.Write(t, filepath.Join(cg, "pods/bad/memory.numa_stat"), "anon N0=x\n")
	h, err := cgroup.Open(cg, cgroup.V2)
	if err != nil {
		t.Fatal(err)
	}
	ws := []workload.Workload{{Name: "a", Cgroup: "pods/a", Movable: true}, {Name: "b", Cgroup: "pods/b"},
		{Name: "bad", Cgroup: "pods/bad", Movable: true}, {Name: "gone", Cgroup: "pods/gone", Movable: true}}
	on := &workload.Config{MovesEnabled: true}
	got := Reader{H: h}.Resident(on, ws)
	if want := map[string]map[int]uint64{"a": {0: 8192, 1: 8192}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Resident = %v, want %v", got, want)
	}
	if got := (Reader{}).Resident(on, ws); got != nil {
		t.Errorf("without a hierarchy: %v", got)
	}
	if got := (Reader{H: h}).Resident(&workload.Config{}, ws); got != nil {
		t.Errorf("with the switch off: %v", got)
	}
}
