package runner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/workload"
)

// A checkpoint as the agent and `locus run` have always written it keys
// leases by run name and assignments by workload, with no prefix: a run
// reads it as it is and routes around both, even where a lease and a
// workload share a name.
func TestPlanRunReadsTheCheckpointOnDisk(t *testing.T) {
	dir := t.TempDir()
	raw := `{"version":1,
 "assignments":{"run-9":{"cpus":"2-5","policy":"full-pcpus"},"db":{"cpus":"6-9","policy":"spread-by-pcpus"}},
 "workloads":{"run-9":{"cgroup":"locus.slice/run-9"},"db":{"cgroup":"locus.slice/db"}},
 "leases":{"run-9":{"cgroup":"locus.slice/run-9","assignment":{"cpus":"10-11","policy":"full-pcpus"},"owner":{"pid":1,"startTime":1}},
  "run-8":{"cgroup":"locus.slice/run-8","assignment":{"cpus":"","policy":""},"owner":{"pid":1,"startTime":1}}}}`
	if err := os.WriteFile(filepath.Join(dir, "checkpoint.json"), []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	cp, err := (&state.Store{Dir: dir, ReadOnly: true}).Load()
	if err != nil {
		t.Fatal(err)
	}
	d, err := PlanRun(host("0-1", ""), cp, Request{CPUs: 4, QoS: memqos.ClassLS}, "p/run-1")
	if err != nil {
		t.Fatal(err)
	}
	if d.CPUs.String() != "12-15" {
		t.Errorf("cpus %s, want 12-15: around reserved 0-1, the workloads' 2-9 and run-9's lease 10-11", d.CPUs)
	}
	shared, err := PlanRun(host("0-1", ""), cp, Request{QoS: memqos.ClassLS}, "p/run-2")
	if err != nil {
		t.Fatal(err)
	}
	if shared.CPUs.String() != "12-31" || shared.Mems != "0-1" {
		t.Errorf("shared run: cpus %s mems %s, want 12-31 and 0-1", shared.CPUs, shared.Mems)
	}
}

// A run is decided as the agent decides a workload of the same need: the
// same CPUs, cgroup values and pool.
func TestPlanRunIsTheAgentsDecision(t *testing.T) {
	h := host("0-1", "")
	cp := checkpoint(map[string]workload.Assignment{"db": excl("2-5")}, map[string]string{"run-9": "6-7"})
	req := Request{CPUs: 3, QoS: memqos.ClassBE, MemoryLimit: 64 * mib, MemoryQoS: true}
	d, err := PlanRun(h, cp, req, "p/run-1")
	if err != nil {
		t.Fatal(err)
	}
	obs := observation(h, cp, req, "run-1", "p/run-1")
	rd := decide.Decide(obs, decide.Memory{})
	ops, _ := rd.Writes()
	if a := rd.Desired.Assignments["run-1"]; !a.CPUs.Equals(d.CPUs) || len(ops) != len(d.Ops) {
		t.Fatalf("the run got %s and %d files, the decision %s and %d", d.CPUs, len(d.Ops), a.CPUs, len(ops))
	}
	for i := range ops {
		if ops[i] != d.Ops[i] {
			t.Errorf("file %d: the run writes %+v, the decision %+v", i, d.Ops[i], ops[i])
		}
	}
}

// The run's package decides nothing of its own: no allocation, pool or
// memory or CPU QoS of its own making, and no lease key of its own
// spelling; the one decision (pkg/decide) does all of that.
func TestRunnerDecidesNothingItself(t *testing.T) {
	forbidden := map[string]bool{"cpualloc.Allocate": true, "cpualloc.Resize": true,
		"decide.Compute": true, "memqos.Compute": true, "cpuqos.Compute": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && forbidden[id.Name+"."+n.Sel.Name] {
					t.Errorf("%s calls %s.%s: ask decide.Decide", name, id.Name, n.Sel.Name)
				}
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && (strings.HasPrefix(s, "lease/") || strings.HasPrefix(s, "lease:")) {
					t.Errorf("%s spells a lease key %q: decide.LeasePrefix is the one", name, s)
				}
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no file checked")
	}
}
