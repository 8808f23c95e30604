package doctor

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/pkg/topology"
)

// maxKubeletConfig bounds the kubelet's config file: a real one is a few KiB.
const maxKubeletConfig = 1 << 20

// kubeletConfig is the part of the kubelet's KubeletConfiguration that
// decides whether it and Locus write the same cgroup files. Only this file
// is read: flags given on the kubelet's command line override it unseen.
type kubeletConfig struct {
	Kind                  string `json:"kind"`
	APIVersion            string `json:"apiVersion"`
	CPUManagerPolicy      string `json:"cpuManagerPolicy"`
	MemoryManagerPolicy   string `json:"memoryManagerPolicy"`
	TopologyManagerPolicy string `json:"topologyManagerPolicy"`
	TopologyManagerScope  string `json:"topologyManagerScope"`
	ReservedSystemCPUs    string `json:"reservedSystemCPUs"`
	CgroupDriver          string `json:"cgroupDriver"`
}

// parseKubeletConfig reads a KubeletConfiguration (YAML or JSON) and fills
// the kubelet's defaults. Its errors name the field and the value.
func parseKubeletConfig(text string) (kubeletConfig, error) {
	var c kubeletConfig
	if len(text) > maxKubeletConfig {
		return c, fmt.Errorf("longer than %d bytes", maxKubeletConfig)
	}
	if err := yaml.Unmarshal([]byte(text), &c); err != nil {
		return c, fmt.Errorf("not a KubeletConfiguration: %s", cut(err.Error()))
	}
	if c.Kind != "KubeletConfiguration" {
		return c, fmt.Errorf("kind %s: want KubeletConfiguration", quote(c.Kind))
	}
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&c.CPUManagerPolicy, "none")
	def(&c.MemoryManagerPolicy, "None")
	def(&c.TopologyManagerPolicy, "none")
	def(&c.TopologyManagerScope, "container")
	def(&c.CgroupDriver, "cgroupfs")
	for _, f := range []struct{ name, v string }{
		{"cpuManagerPolicy", c.CPUManagerPolicy}, {"memoryManagerPolicy", c.MemoryManagerPolicy},
		{"topologyManagerPolicy", c.TopologyManagerPolicy}, {"topologyManagerScope", c.TopologyManagerScope},
		{"cgroupDriver", c.CgroupDriver},
	} {
		if len(f.v) > 64 || strings.ContainsAny(f.v, " \t\n") {
			return c, fmt.Errorf("%s %s: not a policy name", f.name, quote(f.v))
		}
	}
	if _, err := topology.ParseCPUList(c.ReservedSystemCPUs); err != nil {
		return c, fmt.Errorf("reservedSystemCPUs %s: %w", quote(c.ReservedSystemCPUs), err)
	}
	return c, nil
}

// cut bounds a decoder's message, which may quote the input.
func cut(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// readKubeletConfig reads and parses env's kubelet config. found=false with
// no error: there is no kubelet here (neither the file nor its directory).
func readKubeletConfig(env Env) (c kubeletConfig, found bool, err error) {
	text, err := readText(env.KubeletConfig, maxKubeletConfig)
	if isMissing(err) {
		if isDir(env.KubeletDir) {
			return c, false, &readErr{path: env.KubeletConfig, reason: "absent, though " + env.KubeletDir +
				" exists: the kubelet is configured elsewhere (give --kubelet-config) or by flags only"}
		}
		return c, false, nil
	}
	if err != nil {
		return c, false, err
	}
	c, err = parseKubeletConfig(text)
	if err != nil {
		return c, false, &readErr{path: env.KubeletConfig, reason: err.Error()}
	}
	return c, true, nil
}
