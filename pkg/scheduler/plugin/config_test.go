package plugin

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
)

// profileOf loads a KubeSchedulerConfiguration as kube-scheduler does and
// returns the profile enabling the plugin, with its args decoded.
func profileOf(t *testing.T, path string) (config.KubeSchedulerProfile, Args) {
	t.Helper()
	cfg, err := options.LoadConfigFromFile(klog.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		t.Fatal(err)
	}
	for _, prof := range cfg.Profiles {
		for _, pl := range prof.Plugins.MultiPoint.Enabled {
			if pl.Name != Name {
				continue
			}
			var args Args
			var raw kruntime.Object
			for _, pc := range prof.PluginConfig {
				if pc.Name == Name {
					raw = pc.Args
				}
			}
			if err := decodeArgs(raw, &args); err != nil {
				t.Fatal(err)
			}
			return prof, args
		}
	}
	t.Fatalf("%s enables no %s in multiPoint", path, Name)
	return config.KubeSchedulerProfile{}, Args{}
}

// The shipped example loads, validates and configures the plugin.
func TestExampleConfig(t *testing.T) {
	_, self, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(self), "../../../examples/scheduler/config.yaml")
	prof, args := profileOf(t, path)
	if prof.SchedulerName != "locus-scheduler" || args.ScoringStrategy != "MostAllocated" || args.NUMAStrategy != "most-allocated" {
		t.Fatalf("example: scheduler %s, args %+v", prof.SchedulerName, args)
	}
}

// Without --config, locus-scheduler is kube-scheduler's default profile
// with the plugin added, reaching the cluster through --kubeconfig.
func TestDefaultConfig(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	opts := options.NewOptions()
	for _, f := range opts.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse([]string{"--kubeconfig=/etc/k.conf", "--kube-api-qps=77"}); err != nil {
		t.Fatal(err)
	}
	raw, err := DefaultConfig(fs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	prof, args := profileOf(t, path)
	if prof.SchedulerName != "default-scheduler" || args.ScoringStrategy != "MostAllocated" {
		t.Fatalf("default: scheduler %s, args %+v", prof.SchedulerName, args)
	}
	cfg, _ := options.LoadConfigFromFile(klog.Background(), path)
	if cfg.ClientConnection.Kubeconfig != "/etc/k.conf" || cfg.ClientConnection.QPS != 77 {
		t.Fatalf("client connection %+v", cfg.ClientConnection)
	}
}

// --decision-key-file becomes the default configuration's decisionKeyFile;
// with --config it is refused rather than silently ignored.
func TestDefaultConfigDecisionKeyFile(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	for _, f := range options.NewOptions().Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	addFlags(fs)
	if err := fs.Parse([]string{"--" + DecisionKeyFileFlag + "=/etc/keys"}); err != nil {
		t.Fatal(err)
	}
	raw, err := DefaultConfig(fs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, args := profileOf(t, path); args.DecisionKeyFile != "/etc/keys" {
		t.Fatalf("args %+v, want decisionKeyFile /etc/keys", args)
	}
	if err := fs.Set("config", path); err != nil {
		t.Fatal(err)
	}
	err = withDefaultConfig(fs, func() error { return nil })
	if err == nil || !strings.Contains(err.Error(), "--"+DecisionKeyFileFlag+" applies without --config only") {
		t.Fatalf("with --config: %v", err)
	}
}
