// Command chartreadme writes the chart's README (deploy/helm/locus/README.md,
// what `helm show readme` prints) and the values table of docs/kubernetes.md
// from the chart's values.yaml (defaults, and the comment above each value)
// and values.schema.json (types), so that neither can drift from the chart.
//
//	go run ./tools/chartreadme          rewrite both (hack/chart-readme.sh)
//	go run ./tools/chartreadme -check   exit 1 if either differs
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "embed"
)

//go:embed header.md
var header string

const (
	chartDir = "deploy/helm/locus"
	docPath  = "docs/kubernetes.md"
	begin    = "<!-- values table: written by tools/chartreadme from the chart's values.yaml and values.schema.json; do not edit -->\n"
	end      = "<!-- end of values table -->\n"
)

func main() {
	check := flag.Bool("check", false, "report files that differ instead of writing them")
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	files, err := generate(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chartreadme:", err)
		os.Exit(1)
	}
	stale := false
	for path, want := range files {
		full := filepath.Join(*root, path)
		have, _ := os.ReadFile(full)
		if bytes.Equal(have, want) {
			continue
		}
		if *check {
			fmt.Fprintf(os.Stderr, "chartreadme: %s is not what values.yaml and values.schema.json give: run hack/chart-readme.sh\n", path)
			stale = true
			continue
		}
		if err := os.WriteFile(full, want, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "chartreadme:", err)
			os.Exit(1)
		}
	}
	if stale {
		os.Exit(1)
	}
}

// generate returns the README and docs/kubernetes.md as they should be.
func generate(root string) (map[string][]byte, error) {
	values, err := os.ReadFile(filepath.Join(root, chartDir, "values.yaml"))
	if err != nil {
		return nil, err
	}
	schemaJSON, err := os.ReadFile(filepath.Join(root, chartDir, "values.schema.json"))
	if err != nil {
		return nil, err
	}
	rs, err := rows(values, schemaJSON)
	if err != nil {
		return nil, err
	}
	tbl := table(rs)
	doc, err := os.ReadFile(filepath.Join(root, docPath))
	if err != nil {
		return nil, err
	}
	newDoc, err := splice(string(doc), tbl)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", docPath, err)
	}
	return map[string][]byte{
		filepath.Join(chartDir, "README.md"): []byte(header + tbl),
		docPath:                              []byte(newDoc),
	}, nil
}

// splice replaces what lies between the table's markers in doc.
func splice(doc, tbl string) (string, error) {
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("no %q ... %q markers", strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	return doc[:i+len(begin)] + tbl + doc[j:], nil
}
