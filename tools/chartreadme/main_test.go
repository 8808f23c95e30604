package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The committed README and docs/kubernetes.md's table are what values.yaml
// and values.schema.json give: change a value, and this fails until
// hack/chart-readme.sh is run.
func TestCommittedFilesAreGenerated(t *testing.T) {
	files, err := generate("../..")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		have, err := os.ReadFile(filepath.Join("../..", path))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, want) {
			t.Errorf("%s differs from what values.yaml and values.schema.json give: run hack/chart-readme.sh", path)
		}
	}
}

// Every value of the chart has a row, with a description: a value added
// without a comment in values.yaml fails here.
func TestEveryValueDescribed(t *testing.T) {
	values, err := os.ReadFile("../../" + chartDir + "/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	schemaJSON, err := os.ReadFile("../../" + chartDir + "/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := rows(values, schemaJSON)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	described := map[string]bool{}
	for _, r := range rs {
		seen[r.path] = true
		if r.desc != "" {
			described[r.path] = true
		}
	}
	for _, want := range []string{"image.registry", "image.agent.digest", "agent.nri.enabled", "agent.resources",
		"agent.updateStrategy", "agent.minReadySeconds", "sloConfig.manage", "metrics.serviceMonitor.enabled", "namespace.create"} {
		if !seen[want] {
			t.Errorf("no row for %s", want)
		}
	}
	for _, r := range rs {
		// A value is described by its own comment or by its group's.
		ok := described[r.path]
		for p := r.path; !ok && strings.Contains(p, "."); {
			p = p[:strings.LastIndex(p, ".")]
			ok = described[p]
		}
		if !ok {
			t.Errorf("%s: no comment in values.yaml, nor on a group above it", r.path)
		}
	}
}

// A value the schema lacks, or input that is not what it should be, is an
// error naming it, not a table with a hole.
func TestRowsRefusesBadInput(t *testing.T) {
	schemaJSON := []byte(`{"properties": {"a": {"type": "string"}}}`)
	for _, tc := range []struct{ values, want string }{
		{"b: 1\n", "b is not in values.schema.json"},
		{"- a\n", "not a mapping"},
		{"a: [\n", "values.yaml"},
		{strings.Repeat("#", maxInput+1), "over"},
	} {
		if _, err := rows([]byte(tc.values), schemaJSON); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("rows(%.20q): %v, want an error with %q", tc.values, err, tc.want)
		}
	}
}

func FuzzRows(f *testing.F) {
	schemaJSON := []byte(`{"definitions": {"t": {"type": "string"}}, "properties": {"a": {"type": "object", "properties": {"b": {"$ref": "#/definitions/t"}}}, "c": {"enum": ["x", 1]}}}`)
	for _, seed := range []string{"a:\n  # the b\n  b: x\nc: x\n", "a: {}\n", "c: 1\n", "a: {b: [1, {x: y}]}\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, values []byte) {
		rs, err := rows(values, schemaJSON)
		if err != nil {
			return
		}
		if len(rs) > maxRows+1 {
			t.Fatalf("%d rows", len(rs))
		}
		tbl := table(rs)
		if got := strings.Count(tbl, "\n"); got != len(rs)+2 {
			t.Fatalf("table of %d rows has %d lines:\n%s", len(rs), got, tbl)
		}
	})
}
