package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAgentLinksNoClientset: the agent runs on every node, and client-go's
// clientset (or anything of k8s.io/kubernetes) registers every API group's
// types when the program starts, 12 MiB of resident memory before the
// agent has done anything (pkg/kube/kubeclient). It asks the go tool
// what cmd/locus links.
func TestAgentLinksNoClientset(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), out)
	}
	for _, p := range deps {
		if p == "k8s.io/client-go/kubernetes" || strings.HasPrefix(p, "k8s.io/client-go/kubernetes/") ||
			p == "k8s.io/client-go/discovery" || strings.HasPrefix(p, "k8s.io/kubernetes/") {
			t.Errorf("locus links %s", p)
		}
	}
}
