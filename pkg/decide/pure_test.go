package decide

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCoreIsPure: the decision core and the cores it is built on reach no
// effect through their imports: no process started (os/exec), no cgroup
// written (pkg/cgroup, the writer's package: the decision names files with
// pkg/cgroupfile), no system call beyond the standard library's
// (golang.org/x/sys/unix). Each package found is named with the packages
// that import it, so the path in is plain.
func TestCoreIsPure(t *testing.T) {
	forbidden := []string{"os/exec", "github.com/locus-project/locus/pkg/cgroup", "golang.org/x/sys/unix"}
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`,
		"./pkg/decide", "./pkg/cpualloc", "./pkg/memqos", "./pkg/moveplan")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	importers := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			importers[imp] = append(importers[imp], fields[0])
		}
	}
	if len(importers) == 0 {
		t.Fatal("go list listed no imports: the check would pass on anything")
	}
	for _, f := range forbidden {
		if by, ok := importers[f]; ok {
			slices.Sort(by)
			t.Errorf("the pure core depends on %s, imported by %s", f, strings.Join(by, ", "))
		}
	}
}
