package archmap

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the repository, from this package's directory.
var root = filepath.Join("..", "..")

func readMap(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// goPackage is one package directory of the main module, parsed.
type goPackage struct {
	dir   string // relative to root, slash-separated
	name  string
	files []*ast.File // non-test files
	tests []*ast.File
}

// packages parses every package under pkg, internal and cmd.
func packages(t *testing.T) []*goPackage {
	t.Helper()
	byDir := map[string]*goPackage{}
	for _, top := range []string{"pkg", "internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			p := byDir[rel]
			if p == nil {
				p = &goPackage{dir: rel}
				byDir[rel] = p
			}
			if strings.HasSuffix(path, "_test.go") {
				p.tests = append(p.tests, f)
				return nil
			}
			p.name = f.Name.Name
			p.files = append(p.files, f)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var out []*goPackage
	for _, dir := range slices.Sorted(maps.Keys(byDir)) {
		out = append(out, byDir[dir])
	}
	if len(out) < 40 {
		t.Fatalf("found %d packages under pkg, internal and cmd: the checks would pass on anything", len(out))
	}
	return out
}

// TestEveryPackageIsOnTheMap: every directory under pkg/ and internal/
// with Go files is named in docs/architecture.md, backquoted.
func TestEveryPackageIsOnTheMap(t *testing.T) {
	doc := readMap(t)
	for _, p := range packages(t) {
		if strings.HasPrefix(p.dir, "cmd/") {
			continue
		}
		if !strings.Contains(doc, "`"+p.dir+"`") {
			t.Errorf("docs/architecture.md does not name `%s`: say in its package list what it is", p.dir)
		}
	}
}

// pathRef is a backquoted path into the repository, a Go name after it
// for `pkg/source.Source`.
var pathRef = regexp.MustCompile("`((?:pkg|internal|cmd)/[A-Za-z0-9_./-]*)`")

// splitRef splits `pkg/source.Source` into the path and the Go name.
func splitRef(ref string) (path, name string) {
	ref = strings.TrimSuffix(ref, "/")
	dot := strings.LastIndex(ref, ".")
	if dot > strings.LastIndex(ref, "/") && dot+1 < len(ref) && ref[dot+1] >= 'A' && ref[dot+1] <= 'Z' {
		return ref[:dot], ref[dot+1:]
	}
	return ref, ""
}

// TestMapPathsExist: every backquoted package or file path on the map
// exists, and a Go name after a package path is declared in it.
func TestMapPathsExist(t *testing.T) {
	doc := readMap(t)
	byDir := map[string]*goPackage{}
	for _, p := range packages(t) {
		byDir[p.dir] = p
	}
	found := 0
	for _, m := range pathRef.FindAllStringSubmatch(doc, -1) {
		path, name := splitRef(m[1])
		found++
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(path))); err != nil {
			t.Errorf("docs/architecture.md names `%s`, which does not exist", m[1])
			continue
		}
		if name != "" {
			if p := byDir[path]; p == nil || !declares([]*goPackage{p}, name, "") {
				t.Errorf("docs/architecture.md names `%s.%s`: %s declares no %s", path, name, path, name)
			}
		}
	}
	if found < 40 {
		t.Fatalf("found %d paths on the map: the pattern reads nothing", found)
	}
}

// qualified is a backquoted Go name qualified by its package's name:
// `decide.Decide`, `execute.Config.DryRun`.
var qualified = regexp.MustCompile("`([a-z][a-z0-9]*)\\.([A-Z][A-Za-z0-9_]*)(?:\\.([A-Z][A-Za-z0-9_]*))?")

// TestMapNamesExist: every backquoted `pkg.Name` (or `pkg.Type.Member`) on
// the map whose pkg is a package of the module is declared there: a type,
// function, variable or constant, and a member is a method, field or
// interface method of that type.
func TestMapNamesExist(t *testing.T) {
	doc := readMap(t)
	byName := map[string][]*goPackage{}
	for _, p := range packages(t) {
		byName[p.name] = append(byName[p.name], p)
	}
	checked := 0
	for _, m := range qualified.FindAllStringSubmatch(doc, -1) {
		pkgs := byName[m[1]]
		if len(pkgs) == 0 {
			continue // not a package's name: status.json, say
		}
		checked++
		if !declares(pkgs, m[2], m[3]) {
			what := m[1] + "." + m[2]
			if m[3] != "" {
				what += "." + m[3]
			}
			t.Errorf("docs/architecture.md names `%s`, which package %s does not declare", what, m[1])
		}
	}
	if checked < 30 {
		t.Fatalf("checked %d qualified names on the map: the pattern reads nothing", checked)
	}
}

// testName is a backquoted test, fuzz target or benchmark.
var testName = regexp.MustCompile("`((?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*)`")

// TestMapTestsExist: every test the map says holds a promise exists.
func TestMapTestsExist(t *testing.T) {
	doc := readMap(t)
	have := map[string]bool{}
	for _, p := range packages(t) {
		for _, f := range p.tests {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
					have[fd.Name.Name] = true
				}
			}
		}
	}
	for _, dir := range []string{"test", "tools", "bench"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
					have[fd.Name.Name] = true
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	named := testName.FindAllStringSubmatch(doc, -1)
	if len(named) < 5 {
		t.Fatalf("found %d tests named on the map: the pattern reads nothing", len(named))
	}
	for _, m := range named {
		if !have[m[1]] {
			t.Errorf("docs/architecture.md names the test %s, which no _test.go file declares", m[1])
		}
	}
}

// declares says whether one of pkgs declares name at the top level, and,
// when member is given, whether name is a type with that method, field or
// interface method.
func declares(pkgs []*goPackage, name, member string) bool {
	for _, p := range pkgs {
		for _, f := range p.files {
			if declaredIn(f, name, member) {
				return true
			}
		}
	}
	return false
}

func declaredIn(f *ast.File, name, member string) bool {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				if member == "" && d.Name.Name == name {
					return true
				}
				continue
			}
			if member != "" && d.Name.Name == member && receiver(d.Recv.List[0].Type) == name {
				return true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.Name != name {
						continue
					}
					if member == "" || hasMember(s.Type, member) {
						return true
					}
				case *ast.ValueSpec:
					if member != "" {
						continue
					}
					for _, n := range s.Names {
						if n.Name == name {
							return true
						}
					}
				}
			}
		}
	}
	return false
}

// receiver is the type name of a method's receiver: T, *T, T[P].
func receiver(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiver(e.X)
	case *ast.IndexExpr:
		return receiver(e.X)
	case *ast.IndexListExpr:
		return receiver(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// hasMember says whether a struct has the field (embedded included) or an
// interface the method.
func hasMember(e ast.Expr, member string) bool {
	var fields *ast.FieldList
	switch e := e.(type) {
	case *ast.StructType:
		fields = e.Fields
	case *ast.InterfaceType:
		fields = e.Methods
	default:
		return false
	}
	for _, f := range fields.List {
		for _, n := range f.Names {
			if n.Name == member {
				return true
			}
		}
		if len(f.Names) == 0 && receiver(f.Type) == member {
			return true
		}
	}
	return false
}

// TestNoTestHarnessInPkg: a package under pkg/ that only tests import is
// test harness, and belongs under internal/ (docs/architecture.md's "Test
// harness"). The importers are every Go file of the repository, the bench
// and tools modules' included.
func TestNoTestHarnessInPkg(t *testing.T) {
	const module = "github.com/locus-project/locus/"
	type use struct{ tests, code []string }
	uses := map[string]*use{}
	files := 0
	for _, top := range []string{"pkg", "cmd", "internal", "bench", "tools", "test"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" || d.Name() == ".cache" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			files++
			for _, imp := range f.Imports {
				p := strings.Trim(imp.Path.Value, `"`)
				if !strings.HasPrefix(p, module+"pkg/") {
					continue
				}
				u := uses[strings.TrimPrefix(p, module)]
				if u == nil {
					u = &use{}
					uses[strings.TrimPrefix(p, module)] = u
				}
				if strings.HasSuffix(path, "_test.go") {
					u.tests = append(u.tests, path)
				} else {
					u.code = append(u.code, path)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 200 || len(uses) < 30 {
		t.Fatalf("read %d files importing %d packages of pkg/: the check would pass on anything", files, len(uses))
	}
	for _, dir := range slices.Sorted(maps.Keys(uses)) {
		if u := uses[dir]; len(u.code) == 0 {
			t.Errorf("%s is imported by tests only (%s, ...): test harness goes under internal/", dir, u.tests[0])
		}
	}
}
