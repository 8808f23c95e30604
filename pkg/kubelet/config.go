package kubelet

import (
	"fmt"

	"k8s.io/utils/cpuset"
	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/pkg/topology"
)

// ConfigFile is where kubeadm writes the kubelet's configuration, in the
// kubelet's root directory; the kubelet reads it from its --config flag.
const ConfigFile = "config.yaml"

// MaxConfigBytes bounds the configuration file: a real one is a few KiB.
const MaxConfigBytes = 1 << 20

// Config is what Locus needs of the kubelet's KubeletConfiguration, with the
// kubelet's defaults (v1beta1) for what the file leaves out.
type Config struct {
	CPUManagerPolicy      string        `json:"cpuManagerPolicy"`      // none, static
	MemoryManagerPolicy   string        `json:"memoryManagerPolicy"`   // None, Static
	TopologyManagerPolicy string        `json:"topologyManagerPolicy"` // none, best-effort, restricted, single-numa-node
	TopologyManagerScope  string        `json:"topologyManagerScope"`  // container, pod
	CgroupDriver          string        `json:"cgroupDriver"`          // cgroupfs, systemd
	ReservedSystemCPUs    cpuset.CPUSet `json:"-"`
}

// kubeletConfig is the part of kubelet.config.k8s.io/v1beta1's
// KubeletConfiguration read here.
type kubeletConfig struct {
	Kind                  string  `json:"kind"`
	APIVersion            string  `json:"apiVersion"`
	CPUManagerPolicy      *string `json:"cpuManagerPolicy"`
	MemoryManagerPolicy   *string `json:"memoryManagerPolicy"`
	TopologyManagerPolicy *string `json:"topologyManagerPolicy"`
	TopologyManagerScope  *string `json:"topologyManagerScope"`
	CgroupDriver          *string `json:"cgroupDriver"`
	ReservedSystemCPUs    string  `json:"reservedSystemCPUs"`
}

// The values each field may take (the kubelet's validation).
var configValues = map[string][]string{
	"cpuManagerPolicy":      {"none", "static"},
	"memoryManagerPolicy":   {"None", "Static"},
	"topologyManagerPolicy": {"none", "best-effort", "restricted", "single-numa-node"},
	"topologyManagerScope":  {"container", "pod"},
	"cgroupDriver":          {"cgroupfs", "systemd"},
}

// ParseConfig reads a KubeletConfiguration file (YAML or JSON). A field
// with a value the kubelet would refuse is an error naming it.
func ParseConfig(raw []byte) (Config, error) {
	if len(raw) > MaxConfigBytes {
		return Config{}, fmt.Errorf("%d bytes, more than %d", len(raw), MaxConfigBytes)
	}
	var kc kubeletConfig
	if err := yaml.Unmarshal(raw, &kc); err != nil {
		return Config{}, fmt.Errorf("not a KubeletConfiguration: %v", shortErr(err))
	}
	if kc.Kind != "KubeletConfiguration" || kc.APIVersion != "kubelet.config.k8s.io/v1beta1" {
		return Config{}, fmt.Errorf("kind %s, apiVersion %s: want KubeletConfiguration, kubelet.config.k8s.io/v1beta1",
			topology.Quote(kc.Kind), topology.Quote(kc.APIVersion))
	}
	c := Config{CPUManagerPolicy: "none", MemoryManagerPolicy: "None", TopologyManagerPolicy: "none",
		TopologyManagerScope: "container", CgroupDriver: "cgroupfs"}
	for _, f := range []struct {
		name string
		in   *string
		out  *string
	}{
		{"cpuManagerPolicy", kc.CPUManagerPolicy, &c.CPUManagerPolicy},
		{"memoryManagerPolicy", kc.MemoryManagerPolicy, &c.MemoryManagerPolicy},
		{"topologyManagerPolicy", kc.TopologyManagerPolicy, &c.TopologyManagerPolicy},
		{"topologyManagerScope", kc.TopologyManagerScope, &c.TopologyManagerScope},
		{"cgroupDriver", kc.CgroupDriver, &c.CgroupDriver},
	} {
		if f.in == nil || *f.in == "" {
			continue
		}
		if !oneOf(*f.in, configValues[f.name]) {
			return Config{}, fmt.Errorf("%s: %s is not one of %v", f.name, topology.Quote(*f.in), configValues[f.name])
		}
		*f.out = *f.in
	}
	set, err := topology.ParseCPUList(kc.ReservedSystemCPUs)
	if err != nil {
		return Config{}, fmt.Errorf("reservedSystemCPUs: %v", err)
	}
	c.ReservedSystemCPUs = set
	return c, nil
}

func oneOf(s string, values []string) bool {
	for _, v := range values {
		if s == v {
			return true
		}
	}
	return false
}
