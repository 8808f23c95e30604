package execute

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writerPackage is the cgroup writer's package; writerNames are what of it
// makes or names a writer.
const writerPackage = "github.com/locus-project/locus/pkg/cgroup"

var writerNames = map[string]bool{"Writer": true, "NewWriter": true}

// TestOnlyTheExecutorHoldsTheWriter: one executor carries every cgroup write
// out, so no package but this one (and pkg/cgroup, which defines it) names
// or makes a cgroup.Writer, tests included. The agent's sources, runners
// and tools reach the writer through the executor: the agent's Executor
// (its decisions, a standalone workload's cgroup and the processes it
// adopts), Early (a new container's cpuset between two reconciles) and
// Cgroups (`locus run`, the shim of a command workload, `locus uninstall`).
func TestOnlyTheExecutorHoldsTheWriter(t *testing.T) {
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && (d.Name() == ".cache" || d.Name() == ".git" || d.Name() == "testdata" || rel == "pkg/execute" || rel == "pkg/cgroup") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		for _, use := range writerUses(f) {
			t.Errorf("%s names cgroup.%s: only pkg/execute holds a cgroup writer; carry the write out through it", rel, use)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files: the walk missed the module", checked)
	}
}

// writerUses are the writer's names a file takes from the writer's
// package, under whatever name it imports it.
func writerUses(f *ast.File) []string {
	var local string
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == writerPackage {
			local = "cgroup"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" {
		return nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == local && writerNames[sel.Sel.Name] {
				out = append(out, sel.Sel.Name)
			}
		}
		return true
	})
	return out
}

// The guard sees the writer under any import name, and nothing else.
func TestWriterUses(t *testing.T) {
	for src, want := range map[string]string{
		`package a; import "github.com/locus-project/locus/pkg/cgroup"; var w *cgroup.Writer`:                 "Writer",
		`package a; import cg "github.com/locus-project/locus/pkg/cgroup"; var _, _ = cg.NewWriter(nil, nil)`: "NewWriter",
		`package a; import "github.com/locus-project/locus/pkg/cgroup"; var h *cgroup.Hierarchy`:              "",
		`package a; import "other/cgroup"; var w *cgroup.Writer`:                                              "",
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "a.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(writerUses(f), ","); got != want {
			t.Errorf("%s: %q, want %q", src, got, want)
		}
	}
}
