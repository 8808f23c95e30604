package decide

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// decisionNames are this package's: the one decision of a node. A type,
// function, method or interface method of that name elsewhere would be a
// second meaning of the word, and a reader could not tell which decides.
var decisionNames = map[string]bool{"Decision": true, "Decide": true, "Decided": true}

// TestOneMeaningOfDecide: no non-test Go file outside pkg/decide declares a
// type, function, method or interface method named Decision, Decide or
// Decided. What else computes, places, plans or answers is named for it.
func TestOneMeaningOfDecide(t *testing.T) {
	root := filepath.Join("..", "..")
	own, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, top := range []string{"pkg", "cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if abs, _ := filepath.Abs(path); abs == own || d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			files++
			for _, at := range decisionDecls(t, path) {
				t.Errorf("%s declares %s: only pkg/decide decides; name it for what it does", path, at)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 100 {
		t.Fatalf("read %d Go files under pkg, cmd and internal: the check would pass on anything", files)
	}
	// The check must see the names where they are declared: here.
	if got := decisionDecls(t, "ready.go"); !strings.Contains(strings.Join(got, " "), "func Decide") {
		t.Fatalf("ready.go declares %v, want func Decide among them: the check finds nothing", got)
	}
}

// decisionDecls lists the declarations of file named as decisionNames.
func decisionDecls(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if decisionNames[n.Name.Name] {
				found = append(found, "func "+n.Name.Name)
			}
		case *ast.TypeSpec:
			if decisionNames[n.Name.Name] {
				found = append(found, "type "+n.Name.Name)
			}
		case *ast.InterfaceType:
			for _, m := range n.Methods.List {
				for _, name := range m.Names {
					if decisionNames[name.Name] {
						found = append(found, "interface method "+name.Name)
					}
				}
			}
		}
		return true
	})
	return found
}
