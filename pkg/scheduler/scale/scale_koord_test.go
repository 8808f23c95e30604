package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/topology"
)

// Koordinator's protocol, as koord-scheduler at the commit
// bench/scheduler/koord.sh builds reads and writes it.
const koord kind = "koord-scheduler"

const (
	koordSchedulerName   = "koord-scheduler" // its profile's schedulerName
	koordQoSLabel        = "koordinator.sh/qosClass"
	koordProdClass       = "koord-prod"
	koordProdPriority    = 9000 // koord-prod is 9000-9999
	koordResourceStatus  = "scheduling.koordinator.sh/resource-status"
	koordCPUTopology     = "node.koordinator.sh/cpu-topology"
	koordKubeletPolicy   = "kubelet.koordinator.sh/cpu-manager-policy"
	koordNUMAPolicyLabel = "node.koordinator.sh/numa-topology-policy"
	koordSystemNamespace = "koordinator-system"
	// Its client and DRA informer ask for APIs a v1.33 apiserver lacks.
	koordFeatureGates = "DisableDynamicResourceAllocationInformer=true,WatchListClient=false"
)

// koordDir holds what bench/scheduler/koord.sh built: bin/koord-scheduler,
// crd/ and scheduler-config.yaml (the ConfigMap Koordinator deploys).
func koordDir(t testing.TB) string {
	t.Helper()
	dir := envString("LOCUS_KOORD_DIR", kubetest.RepoPath(t, ".cache/koord"))
	if _, err := os.Stat(filepath.Join(dir, "bin", "koord-scheduler")); err != nil {
		t.Fatalf("koord-scheduler is not built (run bench/scheduler/koord.sh): %v", err)
	}
	return dir
}

// prepareKoord gives the cluster what koord-scheduler waits for or reads:
// its CRDs (the NodeResourceTopology one is already installed, v1alpha1
// served beside v1alpha2), its system namespace, the koord-prod priority
// class, and on every node the single-NUMA-node policy label.
func prepareKoord(t *testing.T, nodes []string) {
	t.Helper()
	dir := koordDir(t)
	crds, err := filepath.Glob(filepath.Join(dir, "crd", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("koord-scheduler's CRDs in %s: %d found, %v", dir, len(crds), err)
	}
	for _, path := range crds {
		if !strings.Contains(filepath.Base(path), "noderesourcetopologies") {
			cp.InstallCRDs(t, path)
		}
	}
	ctx := callCtx(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: koordSystemNamespace}}
	if _, err := cp.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: koordProdClass}, Value: koordProdPriority}
	if _, err := cp.Client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:"SingleNUMANode"}}}`, koordNUMAPolicyLabel)
	err = parallel(16, len(nodes), func(ctx context.Context, i int) error {
		_, err := cp.Client.CoreV1().Nodes().Patch(ctx, nodes[i], types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("labelling the nodes for koord-scheduler: %v", err)
	}
}

// koordNRTAnnotations are what koordlet adds to a node's
// NodeResourceTopology: every CPU's core, socket and NUMA node, and the
// kubelet's reserved CPUs (the same ones the Locus report leaves out).
func koordNRTAnnotations(topo *topology.Topology) (map[string]string, error) {
	type cpuInfo struct {
		ID     int `json:"id"`
		Core   int `json:"core"`
		Socket int `json:"socket"`
		Node   int `json:"node"`
	}
	detail := make([]cpuInfo, 0, len(topo.CPUs))
	for _, c := range topo.CPUs {
		detail = append(detail, cpuInfo{ID: c.ID, Core: c.Core, Socket: c.Socket, Node: c.NUMA})
	}
	cpuTopo, err := json.Marshal(map[string]any{"detail": detail})
	if err != nil {
		return nil, err
	}
	policy, err := json.Marshal(map[string]string{"policy": "static", "reservedCPUs": reserved.String()})
	if err != nil {
		return nil, err
	}
	return map[string]string{koordCPUTopology: string(cpuTopo), koordKubeletPolicy: string(policy)}, nil
}

// koordConfig is the KubeSchedulerConfiguration Koordinator deploys (its
// ConfigMap's koord-scheduler-config), with leader election off and the
// same client limits as the other schedulers.
func koordConfig(dir string, cfg config) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "scheduler-config.yaml"))
	if err != nil {
		return nil, err
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		return nil, fmt.Errorf("koord-scheduler's ConfigMap: %w", err)
	}
	var sc map[string]any
	if err := yaml.Unmarshal([]byte(cm.Data["koord-scheduler-config"]), &sc); err != nil || sc == nil {
		return nil, fmt.Errorf("koord-scheduler's ConfigMap has no readable koord-scheduler-config: %v", err)
	}
	sc["leaderElection"] = map[string]any{"leaderElect": false}
	sc["clientConnection"] = map[string]any{"kubeconfig": cp.Kubeconfig, "qps": cfg.qps, "burst": cfg.burst}
	return yaml.Marshal(sc)
}

// koordProcess is koord-scheduler running as its own process, as it is
// deployed; its CPU time is read from /proc as the control plane's is.
type koordProcess struct {
	cmd  *exec.Cmd
	port int // its secure port, serving /metrics
	done chan error
}

func startKoord(t testing.TB, cfg config) (*koordProcess, error) {
	dir := koordDir(t)
	conf, err := koordConfig(dir, cfg)
	if err != nil {
		return nil, err
	}
	confPath := filepath.Join(filepath.Dir(schedulerLog), "koord-scheduler-config.yaml")
	if err := os.WriteFile(confPath, conf, 0o644); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(filepath.Join(filepath.Dir(schedulerLog), "koord-scheduler.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// Its secure port serves /metrics to anyone, so that the pass reads its
	// scheduling attempts as it reads the others' from this process.
	cmd := exec.Command(filepath.Join(dir, "bin", "koord-scheduler"), "--config="+confPath,
		"--feature-gates="+koordFeatureGates, fmt.Sprintf("--secure-port=%d", port), "--bind-address=127.0.0.1",
		"--cert-dir="+filepath.Join(filepath.Dir(schedulerLog), "koord-certs"),
		"--authorization-always-allow-paths=/metrics,/healthz,/readyz,/livez", "--v="+envString("LOCUS_SCHED_V", "0"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &koordProcess{cmd: cmd, port: port, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

func (p *koordProcess) PID() int { return p.cmd.Process.Pid }

// Stop ends it as the kubelet would: SIGTERM, then SIGKILL after 30 s.
func (p *koordProcess) Stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("koord-scheduler did not stop within 30s of SIGTERM")
	}
}
