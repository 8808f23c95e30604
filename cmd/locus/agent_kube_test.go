package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// The two modes take their own flags; a flag of the other mode is refused
// rather than silently ignored.
func TestAgentModeErrors(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a pod, whatever runs the test
	missing := filepath.Join(t.TempDir(), "kubeconfig")
	cases := []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"agent", "--standalone", "--node-name", "n1"}, true, "not both"},
		{[]string{"agent", "--node-name", "n1", "--config", "host.yaml"}, true, "--config does not apply with --node-name"},
		{[]string{"agent", "--standalone", "--kubeconfig", "k"}, true, "--kubeconfig does not apply with --standalone"},
		{[]string{"agent", "--standalone", "--reserved-cpus", "0"}, true, "--reserved-cpus does not apply"},
		{[]string{"agent", "--node-name", "n1", "--cgroup-driver", "upstart"}, true, "--cgroup-driver"},
		{[]string{"agent", "--node-name", "n1", "--reserved-cpus", "0-"}, true, "--reserved-cpus"},
		{[]string{"agent", "--node-name", "n1"}, true, "give --kubeconfig"},
		{[]string{"agent", "--node-name", "n1", "--kubeconfig", missing}, false, missing},
	}
	for _, tc := range cases {
		_, err := runLocus(t, tc.args...)
		var ue usageError
		if err == nil || errors.As(err, &ue) != tc.usage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("locus %s: error %v (usage %v), want %q (usage %v)", strings.Join(tc.args, " "), err,
				errors.As(err, &ue), tc.want, tc.usage)
		}
	}
}
