package main

import (
	"strings"
	"testing"
)

func TestVersionFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"--version"}, true},
		{[]string{"--config=x.yaml", "--version=true"}, true},
		{[]string{"--version=raw"}, false}, // kube-scheduler's own, left to it
		{[]string{"--config=x.yaml"}, false},
		{nil, false},
	} {
		if got := versionRequested(tc.args); got != tc.want {
			t.Errorf("versionRequested(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
	if got := versionLine(); !strings.HasPrefix(got, "locus-scheduler dev (commit unknown, go") {
		t.Errorf("version line %q", got)
	}
}
