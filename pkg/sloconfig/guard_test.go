package sloconfig

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestOneSLOConfigParser: the node's SLO configuration is decoded here
// only, and only as it arrives: nowhere else is a key or a field of its
// text spelled out, the ConfigMap values are decoded only where the
// ConfigMaps (pkg/kube/nodeagent) or the HostConfig file (pkg/workload)
// arrive, and the annotations carrying its sections only where pkg/workload
// reads a workload's text. Everyone else takes the typed values.
func TestOneSLOConfigParser(t *testing.T) {
	// String literals (struct tags included) that only a decoder of the
	// text needs: the ConfigMap keys (use the constants) and its fields.
	// (Reasons may name a parameter, status fields may be called like a
	// section: those names are not here.)
	forbidden := []string{ConfigKeyResourceQoS, ConfigKeyCPUBurst,
		"clusterStrategy", "nodeStrategies", "nodeSelector", "enabledNamespaces", "disabledNamespaces",
		"lsClass", "beClass", "lsrClass", "systemClass", "cpuBurstPercent", "migrateIntervalMinutes"}
	decoders := map[*regexp.Regexp][]string{
		regexp.MustCompile(`sloconfig\.Parse(ResourceQoS|CPUBurst|Namespaces)\(`): {
			filepath.Join("pkg", "kube", "nodeagent", "configs.go"), filepath.Join("pkg", "workload", "config.go")},
		regexp.MustCompile(`sloconfig\.Parse[A-Za-z]*Annotation\(`): {
			filepath.Join("pkg", "workload", "memqos.go"), filepath.Join("pkg", "workload", "cpuburst.go"), filepath.Join("pkg", "workload", "config.go")},
	}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".cache" || d.Name() == ".git" || d.Name() == "testdata" ||
			path == filepath.Join(root, "bench") || path == filepath.Join(root, "pkg", "sloconfig")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, lit := range stringLiterals(raw) {
			for _, f := range forbidden {
				if lit == f || strings.Contains(lit, `json:"`+f+`"`) || strings.Contains(lit, `json:"`+f+`,`) {
					t.Errorf("%s spells out %q: decode the SLO configuration with pkg/sloconfig and take its types", rel, f)
				}
			}
		}
		for re, allowed := range decoders {
			if re.Match(raw) && !slices.Contains(allowed, rel) {
				t.Errorf("%s calls %s: SLO text is decoded once, where it arrives (%s)", rel, re.FindString(string(raw)), strings.Join(allowed, ", "))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// stringLiterals are the values of a Go file's string literals: comments
// may name the fields, code may not.
func stringLiterals(src []byte) []string {
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", fset.Base(), len(src)), src, nil, 0)
	var out []string
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok == token.STRING {
			if v, err := strconv.Unquote(lit); err == nil {
				out = append(out, v)
			}
		}
	}
}

// TestConfigReachesTheCoresWithoutEffects: what the pure cores (pkg/decide,
// pkg/memqos, pkg/cpualloc) take from the configuration and the workloads'
// text comes through packages that make no system call and start no
// process, so that reading a config never brings an effect into them.
func TestConfigReachesTheCoresWithoutEffects(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to list the imports: %v", err)
	}
	pkgs := []string{"memqos", "cpualloc", "sloconfig", "workload", "hostconfig", "cpuqos", "cpuburst", "topology"}
	args := []string{"list", "-deps"}
	for _, p := range pkgs {
		args = append(args, "./pkg/"+p)
	}
	cmd := exec.Command(goTool, args...)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	effects := []string{"golang.org/x/sys/unix", "os/exec", "github.com/locus-project/locus/pkg/cgroup",
		"github.com/locus-project/locus/pkg/locality", "github.com/locus-project/locus/pkg/procfs", "github.com/locus-project/locus/pkg/state"}
	deps := strings.Fields(string(out))
	for _, e := range effects {
		if slices.Contains(deps, e) {
			t.Errorf("%s reaches the pure cores through pkg/%s", e, strings.Join(pkgs, ", pkg/"))
		}
	}
	if !slices.Contains(deps, "github.com/locus-project/locus/pkg/sloconfig") || len(deps) < 20 {
		t.Fatalf("go list gave %d packages: %.200s", len(deps), out)
	}
}
