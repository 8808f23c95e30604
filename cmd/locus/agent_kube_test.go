package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/dynamic"

	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/cgroup"
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
		{[]string{"agent", "--node-name", "n1", "--kubelet-cgroup-root", "/kubelet/.."}, true, "--kubelet-cgroup-root"},
		{[]string{"agent", "--node-name", "n1", "--kubelet-cgroup-root", "a//b"}, true, "--kubelet-cgroup-root"},
		{[]string{"agent", "--standalone", "--kubelet-cgroup-root", "/kubelet"}, true, "--kubelet-cgroup-root does not apply"},
		{[]string{"agent", "--node-name", "n1"}, true, "give --kubeconfig"},
		{[]string{"agent", "--node-name", "n1", "--rebalance"}, true, "--rebalance needs --moves"},
		{[]string{"agent", "--standalone", "--moves"}, true, "--moves does not apply with --standalone"},
		{[]string{"agent", "--node-name", "n1", "--kubeconfig", missing}, false, missing},
		{[]string{"agent", "--standalone", "--log-level", "loud"}, true, `--log-level "loud"`},
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

// TestFindKubeletRoot: kind's layout is found one level down, in the cpuset
// hierarchy on v1; the top wins when the kubelet's tree is there.
func TestFindKubeletRoot(t *testing.T) {
	for _, tc := range []struct {
		v    cgroup.Version
		dirs []string
		want string
	}{
		{cgroup.V2, []string{"kubelet.slice/kubelet-kubepods.slice", "system.slice"}, "/kubelet"},
		{cgroup.V1, []string{"cpuset/kubelet/kubepods/burstable", "memory/kubelet/kubepods"}, "/kubelet"},
		{cgroup.V1, []string{"memory/kubelet/kubepods"}, "/"},
		{cgroup.V2, []string{"kubepods/besteffort", "kubelet/kubepods"}, "/"},
	} {
		root := t.TempDir()
		for _, d := range tc.dirs {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if got := findKubeletRoot(agent.Options{CgroupRoot: root, CgroupVersion: tc.v}); got.String() != tc.want {
			t.Errorf("%v %v: found %s, want %s", tc.v, tc.dirs, got, tc.want)
		}
	}
}

// The clients made from --kubeconfig (the agent's, `remove-agents`' and the
// uninstall's) ask for protobuf first; a dynamic client made from that
// config still asks for JSON, which CRDs are served in.
func TestKubeconfigClientsAskForProtobuf(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := (&kubeFlags{kubeconfig: path}).restConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ContentType != "application/vnd.kubernetes.protobuf" || !strings.HasPrefix(cfg.AcceptContentTypes, "application/vnd.kubernetes.protobuf,") {
		t.Errorf("typed clients: Content-Type %q, Accept %q; want protobuf first", cfg.ContentType, cfg.AcceptContentTypes)
	}
	if dyn := dynamic.ConfigFor(cfg); dyn.AcceptContentTypes != "application/json" || dyn.ContentType != "application/json" {
		t.Errorf("dynamic client: Content-Type %q, Accept %q; want JSON", dyn.ContentType, dyn.AcceptContentTypes)
	}
}
