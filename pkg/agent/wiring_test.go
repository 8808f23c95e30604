package agent

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAgentIsWiring keeps this package the agent's wiring and nothing
// more: what it wires (sources, the decision, the executor, the runners,
// the publisher) lives in packages of their own, none of which may reach
// back into it. Past these sizes a concern has grown here that belongs in
// a package named for it.
func TestAgentIsWiring(t *testing.T) {
	const maxLines, maxFileLines = 1200, 300
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(string(raw), "\n")
		total += n
		if n > maxFileLines {
			t.Errorf("%s has %d lines, over %d", f, n, maxFileLines)
		}
	}
	if total > maxLines {
		t.Errorf("pkg/agent has %d non-test lines, over %d", total, maxLines)
	}

	const self = "github.com/locus-project/locus/pkg/agent"
	root := filepath.Join("..", "..")
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && (d.Name() == ".cache" || d.Name() == ".git" || d.Name() == "testdata" || rel == "cmd" || rel == "pkg/agent") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == self {
				t.Errorf("%s imports pkg/agent: only cmd/ may; hand it what it needs instead", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
