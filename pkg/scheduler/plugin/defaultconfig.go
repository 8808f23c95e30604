package plugin

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// DefaultWeight is the plugin's score weight in the default configuration;
// kube-scheduler's own score plugins weigh 1 to 3.
const DefaultWeight = 5

// DecisionKeyFileFlag is locus-scheduler's flag for the default
// configuration's decisionKeyFile (Args). Like kube-scheduler's own flags
// for its configuration it applies only without --config, where the
// plugin's args say it; given with --config it is refused, not ignored.
const DecisionKeyFileFlag = "decision-key-file"

// addFlags adds locus-scheduler's own flags to kube-scheduler's.
func addFlags(fs *pflag.FlagSet) {
	fs.String(DecisionKeyFileFlag, "", "the key file decisions are signed with (the plugin's decisionKeyFile), without --config")
}

// DefaultConfig is the KubeSchedulerConfiguration locus-scheduler runs with
// when given no --config: kube-scheduler's defaults, as default-scheduler,
// with this plugin added (default args) and binding its own pods, so that
// it replaces kube-scheduler as it is. The connection flags kube-scheduler honours only without
// --config (--kubeconfig, --kube-api-qps, --kube-api-burst,
// --kube-api-content-type) are carried into it, and so is
// --decision-key-file, as the plugin's decisionKeyFile; leader election
// flags apply either way.
func DefaultConfig(fs *pflag.FlagSet) ([]byte, error) {
	conn := map[string]any{}
	for flag, key := range map[string]string{"kubeconfig": "kubeconfig", "kube-api-content-type": "contentType"} {
		if f := fs.Lookup(flag); f != nil && f.Value.String() != "" && (f.Changed || flag == "kubeconfig") {
			conn[key] = f.Value.String()
		}
	}
	if q, err := fs.GetFloat32("kube-api-qps"); err == nil && fs.Changed("kube-api-qps") {
		conn["qps"] = q
	}
	if b, err := fs.GetInt32("kube-api-burst"); err == nil && fs.Changed("kube-api-burst") {
		conn["burst"] = b
	}
	cfg := map[string]any{
		"apiVersion":       "kubescheduler.config.k8s.io/v1",
		"kind":             "KubeSchedulerConfiguration",
		"clientConnection": conn,
		"profiles": []any{map[string]any{
			"schedulerName": "default-scheduler",
			"plugins": map[string]any{
				"multiPoint": map[string]any{"enabled": []any{map[string]any{"name": Name, "weight": DefaultWeight}}},
				// Enabled at bind as well, it binds before DefaultBinder:
				// its pods' decisions go with their bindings (Bind).
				"bind": map[string]any{"enabled": []any{map[string]any{"name": Name}}},
			},
		}},
	}
	if f := fs.Lookup(DecisionKeyFileFlag); f != nil && f.Value.String() != "" {
		profile := cfg["profiles"].([]any)[0].(map[string]any)
		profile["pluginConfig"] = []any{map[string]any{"name": Name, "args": map[string]any{"decisionKeyFile": f.Value.String()}}}
	}
	return yaml.Marshal(cfg)
}

// withDefaultConfig gives a command line without --config the default
// configuration, in a temporary file removed when run returns.
func withDefaultConfig(fs *pflag.FlagSet, run func() error) error {
	if fs.Changed("config") {
		if fs.Changed(DecisionKeyFileFlag) {
			return fmt.Errorf("--%s applies without --config only: give decisionKeyFile in the %s plugin's args", DecisionKeyFileFlag, Name)
		}
		return run()
	}
	raw, err := DefaultConfig(fs)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp("", "locus-scheduler-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(raw); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fs.Set("config", f.Name()); err != nil {
		return err
	}
	return run()
}
