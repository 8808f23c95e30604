package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/locus-project/locus/cmd/internal/buildinfo"
)

func TestVersionCommand(t *testing.T) {
	var out bytes.Buffer
	root := newRootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); !strings.HasPrefix(got, "locus dev (commit unknown, "+runtime.Version()) {
		t.Errorf("locus version = %q", got)
	}
	out.Reset()
	root = newRootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"version", "-o", "json"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var info buildinfo.Info
	if err := json.Unmarshal(out.Bytes(), &info); err != nil || info.Version != "dev" || info.GoVersion != runtime.Version() {
		t.Errorf("locus version -o json = %s (%v)", out.String(), err)
	}
	root = newRootCmd()
	root.SetArgs([]string{"version", "extra"})
	if err := root.Execute(); err == nil {
		t.Error("locus version extra: no error")
	}
}
