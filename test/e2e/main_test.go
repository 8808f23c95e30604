package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/locus-project/locus/internal/kubetest"
)

// node is the cluster hack/e2e-up.sh brought up, as its env file describes it.
var node *e2eNode

type e2eNode struct {
	dir, name, agentMetrics, image, repo string
	// mode is chart (Locus installed by its Helm chart as release in locusNS)
	// or host (the agent and scheduler as host processes).
	mode, release, locusNS, containerd string
	runtime                            string                 // LOCUS_E2E_RUNTIME: containerd (1.6) or containerd2 (NRI)
	cp                                 *kubetest.ControlPlane // the helpers of kubetest, on this cluster
	deleted                            map[string]bool        // namespaces deleteAll is done with
	expected                           map[string]bool        // "namespace/Reason" of the Warnings a test expects
}

// skipReason is set when the tests are not to run here.
var skipReason string

func TestMain(m *testing.M) {
	if os.Getenv("LOCUS_E2E") != "1" {
		skipReason = "end-to-end test: runs on a real node with `make e2e` (hack/e2e.sh test), which CI runs; set LOCUS_E2E=1 with a node from hack/e2e-up.sh"
		os.Exit(m.Run())
	}
	if os.Getenv("LOCUS_E2E_UP") == "1" {
		os.Exit(upAndRun())
	}
	n, err := loadNode()
	if err != nil {
		// Asked to run but no node: that is a failure, never a skip.
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.Exit(1)
	}
	node = n
	os.Exit(m.Run())
}

// need skips the test unless LOCUS_E2E=1, and returns the node.
func need(t *testing.T) *e2eNode {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	return node
}

func loadNode() (*e2eNode, error) {
	dir := os.Getenv("LOCUS_E2E_DIR")
	if dir == "" {
		dir = "/tmp/locus-e2e"
	}
	env, err := readEnv(filepath.Join(dir, "env"))
	if err != nil {
		return nil, fmt.Errorf("%w: bring the node up with hack/e2e-up.sh (or run make e2e)", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", env["LOCUS_E2E_KUBECONFIG"])
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// A guest has the repository's files, not a checkout: it says where.
	repo := os.Getenv("LOCUS_E2E_REPO")
	if repo == "" {
		if repo, err = kubetest.RepoRoot(); err != nil {
			return nil, err
		}
	}
	bins, _ := kubetest.FindBinaries("") // kubectl, for Kubectl(); the node runs without kwok
	return &e2eNode{
		dir: dir, name: env["LOCUS_E2E_NODE"], agentMetrics: env["LOCUS_E2E_AGENT_METRICS"],
		image: env["LOCUS_E2E_WORKLOAD_IMAGE"], repo: repo, deleted: map[string]bool{}, expected: map[string]bool{}, runtime: env["LOCUS_E2E_RUNTIME"],
		mode: env["LOCUS_E2E_MODE"], release: env["LOCUS_E2E_RELEASE"], locusNS: env["LOCUS_E2E_NAMESPACE"],
		containerd: env["LOCUS_E2E_CONTAINERD"],
		cp: &kubetest.ControlPlane{Binaries: bins, Kubeconfig: env["LOCUS_E2E_KUBECONFIG"],
			Config: cfg, Client: client, Dynamic: dyn},
	}, nil
}

func readEnv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	for _, k := range []string{"LOCUS_E2E_KUBECONFIG", "LOCUS_E2E_NODE", "LOCUS_E2E_AGENT_METRICS", "LOCUS_E2E_WORKLOAD_IMAGE"} {
		if env[k] == "" {
			return nil, fmt.Errorf("%s: no %s", path, k)
		}
	}
	if env["LOCUS_E2E_RUNTIME"] == "" {
		env["LOCUS_E2E_RUNTIME"] = "containerd" // a node brought up before the variants
	}
	return env, sc.Err()
}
