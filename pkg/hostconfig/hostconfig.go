// Package hostconfig reads the standalone agent's HostConfig: the workloads of a
// host without Kubernetes, declared like pods. Parsing is strict, so a typo in a
// field name is an error that names the field rather than a silent default.
package hostconfig

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/pkg/boundedread"
	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/quantity"
	"github.com/locus-project/locus/pkg/topology"
)

const (
	APIVersion = "locus.io/v1alpha1"
	Kind       = "HostConfig"
	// DefaultCgroupParent holds the cgroups the agent creates for command and
	// match workloads, relative to the cgroup root.
	DefaultCgroupParent = "locus.slice"
)

// HostConfig is the whole file.
type HostConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// ReservedCPUs are never handed out (Linux list format).
	ReservedCPUs string `json:"reservedCPUs,omitempty"`
	// BEPool, when set, confines BE workloads to these CPUs (minus exclusive
	// ones); by default BE workloads share the pool with everyone else.
	BEPool string `json:"bePool,omitempty"`
	// UnrestrictedMems leaves cpuset.mems at every node instead of the NUMA
	// nodes of the workload's CPUs.
	UnrestrictedMems bool `json:"unrestrictedMems,omitempty"`
	// CgroupParent is where command and match workloads get their cgroups.
	CgroupParent string `json:"cgroupParent,omitempty"`
	// ResourceQOSConfig is the same document as the ConfigMap key
	// resource-qos-config, kept as written for pkg/sloconfig, which decodes
	// both with the same code into the same types.
	ResourceQOSConfig json.RawMessage `json:"resourceQOSConfig,omitempty"`
	// CPUBurstConfig is the same document as the ConfigMap key
	// cpu-burst-config, kept as written for pkg/sloconfig likewise.
	CPUBurstConfig json.RawMessage `json:"cpuBurstConfig,omitempty"`
	// Moves is the node's switch for moving opted-in workloads (off by
	// default); see Moves.
	Moves     *Moves     `json:"moves,omitempty"`
	Workloads []Workload `json:"workloads"`
}

// Workload is one managed group of processes. Exactly one of Cgroup, Command
// and Match says where its processes come from.
type Workload struct {
	Name        string            `json:"name"`
	Cgroup      string            `json:"cgroup,omitempty"`
	Command     []string          `json:"command,omitempty"`
	Match       *Match            `json:"match,omitempty"`
	QOSClass    string            `json:"qosClass,omitempty"`
	Resources   Resources         `json:"resources,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	// CPUBurst is the standalone spelling of the koordinator.sh/cpuBurst
	// annotation (the same fields), kept as written for pkg/workload, which
	// reads it as it reads the annotation.
	CPUBurst json.RawMessage `json:"cpuBurst,omitempty"`
	// Movable is the standalone spelling of the locus.io/movable
	// annotation: true lets the workload be moved to other CPUs (and its
	// memory to their nodes) so that another fits; pkg/workload reads it
	// with the annotation.
	Movable *Switch `json:"movable,omitempty"`
	// Devices are the PCI addresses of the devices the workload holds (a
	// GPU, a NIC: "0000:3b:00.0"), kept as written for pkg/workload, which
	// reads them (workload.ParseDevices): its CPUs are placed next to them.
	Devices []string `json:"devices,omitempty"`
	// CPUPolicy, for a libvirt domain (match.libvirtDomain) with exclusive
	// CPUs, is how its threads share them: shared (the default: every
	// thread gets them all) or dedicated (each vCPU a whole core of its
	// own, the emulator threads the rest).
	CPUPolicy string `json:"cpuPolicy,omitempty"`
}

// Resources mirrors a container's requests and limits.
type Resources struct {
	Requests ResourceList `json:"requests,omitempty"`
	Limits   ResourceList `json:"limits,omitempty"`
}

// ResourceList holds Kubernetes quantities ("2", "500m", "6Gi"), under
// Kubernetes' resource names.
type ResourceList struct {
	CPU    *resource.Quantity `json:"cpu,omitempty"`
	Memory *resource.Quantity `json:"memory,omitempty"`
	// HugePages2Mi and HugePages1Gi are huge pages of that size, in bytes
	// (a whole number of pages), held on the NUMA nodes of a workload
	// with CPUs of its own.
	HugePages2Mi *resource.Quantity `json:"hugepages-2Mi,omitempty"`
	HugePages1Gi *resource.Quantity `json:"hugepages-1Gi,omitempty"`
}

// UnmarshalJSON reads the quantities through quantity.FromJSON, bounded
// before apimachinery parses them: an exponent such as "1e-99999999999"
// would keep its parser busy for good.
func (l *ResourceList) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	out := ResourceList{}
	dst := map[string]**resource.Quantity{"cpu": &out.CPU, "memory": &out.Memory,
		"hugepages-2Mi": &out.HugePages2Mi, "hugepages-1Gi": &out.HugePages1Gi}
	for name, v := range raw {
		d, ok := dst[name]
		if !ok {
			return fmt.Errorf("unknown field %q", name) // as the strict decoder says of any struct
		}
		q, err := quantity.FromJSON(v)
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		*d = q
	}
	*l = out
	return nil
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$`)

// MaxFileBytes bounds a HostConfig file, as the agent's loader does.
const MaxFileBytes = 16 << 20

// Load reads and validates a HostConfig file.
func Load(file string) (*HostConfig, error) {
	raw, err := boundedread.File(file, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	cfg, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return cfg, nil
}

// Parse decodes YAML or JSON strictly and validates the result.
func Parse(raw []byte) (*HostConfig, error) {
	var cfg HostConfig
	if err := checkFields(raw); err != nil {
		return nil, err
	}
	if err := yaml.UnmarshalStrict(raw, &cfg); err != nil {
		return nil, err
	}
	if cfg.hasSwitch() {
		if err := checkSwitchSpelling(raw); err != nil {
			return nil, err
		}
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.CgroupParent == "" {
		cfg.CgroupParent = DefaultCgroupParent
	}
	return &cfg, nil
}

func (c *HostConfig) validate() error {
	if c.APIVersion != APIVersion || c.Kind != Kind {
		return fmt.Errorf("apiVersion/kind: got %q/%q, want %s/%s", c.APIVersion, c.Kind, APIVersion, Kind)
	}
	for field, list := range map[string]string{"reservedCPUs": c.ReservedCPUs, "bePool": c.BEPool} {
		if _, err := topology.ParseCPUList(list); err != nil {
			return fmt.Errorf("%s: %v", field, err)
		}
	}
	if c.CgroupParent != "" {
		if err := cgroupfile.CheckRel(c.CgroupParent); err != nil {
			return fmt.Errorf("cgroupParent: %w", err)
		}
	}
	seen := map[string]bool{}
	for i, w := range c.Workloads {
		if err := w.validate(); err != nil {
			return fmt.Errorf("workloads[%d].%w (workload %q)", i, err, w.Name)
		}
		if seen[w.Name] {
			return fmt.Errorf("workloads[%d].name: %q is used twice", i, w.Name)
		}
		seen[w.Name] = true
	}
	return nil
}

func (w Workload) validate() error {
	if !nameRE.MatchString(w.Name) {
		return fmt.Errorf("name %q: want lower-case letters, digits, '.', '_' or '-', at most 63", w.Name)
	}
	sources := 0
	if w.Cgroup != "" {
		sources++
		if err := cgroupfile.CheckRel(w.Cgroup); err != nil {
			return fmt.Errorf("cgroup: %w", err)
		}
	}
	if len(w.Command) > 0 {
		sources++
	}
	if w.Match != nil {
		sources++
		if err := w.Match.validate("match"); err != nil {
			return err
		}
	}
	if sources != 1 {
		return fmt.Errorf("cgroup|command|match: give exactly one of them")
	}
	if err := w.validateCPUPolicy(); err != nil {
		return err
	}
	switch strings.ToUpper(w.QOSClass) {
	case "", "LS", "LSR", "LSE", "BE", "SYSTEM":
	default:
		return fmt.Errorf("qosClass %q: want LS, LSR, LSE, BE or SYSTEM", w.QOSClass)
	}
	return w.Resources.validate()
}

func (r Resources) validate() error {
	for name, q := range map[string]*resource.Quantity{
		"requests.cpu": r.Requests.CPU, "requests.memory": r.Requests.Memory,
		"limits.cpu": r.Limits.CPU, "limits.memory": r.Limits.Memory,
		"requests.hugepages-2Mi": r.Requests.HugePages2Mi, "requests.hugepages-1Gi": r.Requests.HugePages1Gi,
		"limits.hugepages-2Mi": r.Limits.HugePages2Mi, "limits.hugepages-1Gi": r.Limits.HugePages1Gi,
	} {
		if q != nil && q.Sign() < 0 {
			return fmt.Errorf("resources.%s: %s is negative", name, q.String())
		}
	}
	if r.Requests.CPU != nil && r.Limits.CPU != nil && r.Requests.CPU.Cmp(*r.Limits.CPU) > 0 {
		return fmt.Errorf("resources: requests.cpu %s exceeds limits.cpu %s", r.Requests.CPU, r.Limits.CPU)
	}
	if r.Requests.Memory != nil && r.Limits.Memory != nil && r.Requests.Memory.Cmp(*r.Limits.Memory) > 0 {
		return fmt.Errorf("resources: requests.memory %s exceeds limits.memory %s", r.Requests.Memory, r.Limits.Memory)
	}
	return nil
}

// CgroupPath is where the workload's processes live, relative to the cgroup root.
func (c *HostConfig) CgroupPath(w Workload) string {
	if w.Cgroup != "" {
		return w.Cgroup
	}
	return c.CgroupParent + "/" + w.Name
}
