package integration

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/internal/decisiontest"
	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/scheduler/plugin"
)

var cp *kubetest.ControlPlane

// schedulerLog receives the in-process scheduler's klog output; a failed
// test prints its end.
var schedulerLog string

// keyFile holds the decision key the scheduler signs with and the agents
// verify by, as the chart's Secret does.
var keyFile string

func TestMain(m *testing.M) {
	klog.InitFlags(nil)
	dir, err := os.MkdirTemp("", "locus-scheduler-test-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	schedulerLog = filepath.Join(dir, "scheduler.log")
	keyFile = filepath.Join(dir, "decision-keys")
	if err := os.WriteFile(keyFile, []byte(decisiontest.KeyFile), 0o600); err != nil {
		panic(err)
	}
	_ = flag.Set("logtostderr", "false")
	_ = flag.Set("alsologtostderr", "false")
	_ = flag.Set("v", "2")
	f, err := os.Create(schedulerLog)
	if err != nil {
		panic(err)
	}
	klog.SetOutput(f)
	kubetest.Main(m, &cp)
}

const (
	chartNamespace = "locus-system"
	schedulerSA    = "locus-scheduler" // <release>-scheduler for release locus
	agentSA        = "locus-agent"
)

var setupOnce sync.Once

// setup installs the CRD and the chart's RBAC (agent and scheduler), once.
func setup(t *testing.T) {
	t.Helper()
	setupOnce.Do(func() {
		ctx := callCtx(t)
		_, err := cp.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chartNamespace}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		cp.InstallNodeResourceTopologyCRD(t)
		cp.ApplyYAML(t, []byte(helmTemplate(t, "--set", "scheduler.enabled=true",
			"--show-only", "templates/rbac.yaml", "--show-only", "templates/scheduler-rbac.yaml")))
	})
}

// schedulerConfig is the chart's KubeSchedulerConfiguration (its ConfigMap),
// rendered as default-scheduler since the seeds' pods name no scheduler,
// reaching the apiserver as the chart's service account.
func schedulerConfig(t *testing.T, set ...string) string {
	t.Helper()
	setup(t)
	args := []string{"--set", "scheduler.enabled=true", "--set", "scheduler.schedulerName=default-scheduler",
		"--show-only", "templates/scheduler.yaml"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	objs, err := kubetest.DecodeYAML([]byte(helmTemplate(t, args...)))
	if err != nil {
		t.Fatal(err)
	}
	var raw string
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" {
			raw, _, _ = unstructuredString(o.Object, "data", "config.yaml")
		}
	}
	if raw == "" {
		t.Fatal("the chart renders no scheduler ConfigMap with config.yaml")
	}
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := kubetest.WriteKubeconfig(kubeconfig, cp.ServiceAccountConfig(t, chartNamespace, schedulerSA)); err != nil {
		t.Fatal(err)
	}
	cfg["clientConnection"] = map[string]any{"kubeconfig": kubeconfig}
	setKeyFile(t, cfg)
	out, _ := yaml.Marshal(cfg)
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// setKeyFile points the plugin's decisionKeyFile, the chart's Secret
// mount, at the test's key file.
func setKeyFile(t *testing.T, cfg map[string]any) {
	t.Helper()
	profiles, _ := cfg["profiles"].([]any)
	for _, p := range profiles {
		pcs, _ := p.(map[string]any)["pluginConfig"].([]any)
		for _, pc := range pcs {
			if pc := pc.(map[string]any); pc["name"] == plugin.Name {
				args := pc["args"].(map[string]any)
				if args["decisionKeyFile"] == nil {
					t.Fatal("the chart's scheduler configuration gives the plugin no decisionKeyFile")
				}
				args["decisionKeyFile"] = keyFile
				return
			}
		}
	}
	t.Fatalf("the chart's scheduler configuration has no pluginConfig for %s", plugin.Name)
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[f]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

// startScheduler runs locus-scheduler in-process until the test ends (or
// stop is called).
func startScheduler(t *testing.T, set ...string) (stop func()) {
	t.Helper()
	s, err := plugin.Start(context.Background(), schedulerConfig(t, set...))
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			if err := s.Stop(); err != nil {
				t.Errorf("scheduler: %v", err)
			}
		})
	}
	t.Cleanup(func() {
		stop()
		klog.Flush()
		b, err := os.ReadFile(schedulerLog)
		if err != nil {
			t.Error(err)
			return
		}
		// The chart's RBAC must let the scheduler do all it tries.
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "forbidden") {
				t.Errorf("the scheduler was refused something: %s", line)
			}
		}
		if t.Failed() {
			t.Logf("scheduler log (end):\n%s", tail(string(b), 40))
		}
	})
	return stop
}

func helmTemplate(t *testing.T, args ...string) string {
	t.Helper()
	bin := os.Getenv("LOCUS_HELM")
	if bin == "" {
		bin = kubetest.RepoPath(t, ".cache/bin/helm")
	}
	home := t.TempDir()
	cmd := exec.Command(bin, append([]string{"template", "locus", kubetest.RepoPath(t, "deploy/helm/locus"), "--namespace", chartNamespace}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm template (install helm with hack/helm-check.sh --install-only, or set LOCUS_HELM): %v\n%s", err, out)
	}
	return string(out)
}

func callCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func tail(s string, lines int) string {
	parts := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return strings.Join(parts, "\n")
}
