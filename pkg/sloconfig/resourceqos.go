package sloconfig

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/topology"
)

// Strategy is one class strategy of resource-qos-config: clusterStrategy,
// or a nodeStrategies entry merged over it.
type Strategy struct {
	MemQoS memqos.Config
	CPUQoS cpuqos.Config
	// Locality holds the memoryLocality sections, by class key.
	Locality map[string]Locality
}

// ResourceQoS is resource-qos-config decoded.
type ResourceQoS struct {
	Cluster Strategy
	Nodes   []NodeStrategy[Strategy]
}

// ForNode is the strategy in force on a node with these labels, and the
// name of the nodeStrategies entry it came from ("" for clusterStrategy).
func (r ResourceQoS) ForNode(nodeLabels map[string]string) (Strategy, string) {
	return forNode(r.Cluster, r.Nodes, nodeLabels)
}

// classSections maps the class keys of a strategy to the memoryQOS and
// cpuQOS sections they hold. Other keys (cgroupRoot, policies, ...) and
// other strategies inside a class (resctrlQOS, ...) belong to other
// features and are skipped; memoryLocality is read from every class key.
var classSections = []struct {
	key string
	mem func(*memqos.Config) **memqos.ClassConfig
	cpu func(*cpuqos.Config) **cpuqos.ClassConfig
}{
	{"lsrClass", func(c *memqos.Config) **memqos.ClassConfig { return &c.LSR }, func(c *cpuqos.Config) **cpuqos.ClassConfig { return &c.LSR }},
	{"lsClass", func(c *memqos.Config) **memqos.ClassConfig { return &c.LS }, func(c *cpuqos.Config) **cpuqos.ClassConfig { return &c.LS }},
	{"beClass", func(c *memqos.Config) **memqos.ClassConfig { return &c.BE }, func(c *cpuqos.Config) **cpuqos.ClassConfig { return &c.BE }},
	{"systemClass", func(c *memqos.Config) **memqos.ClassConfig { return &c.System }, func(c *cpuqos.Config) **cpuqos.ClassConfig { return &c.System }},
}

// ParseResourceQoS reads the value of resource-qos-config (JSON or YAML).
// Blank input is a valid, empty config: every class-wide feature off. Every
// memoryQOS, cpuQOS and memoryLocality section, of clusterStrategy and of
// each nodeStrategies entry merged over it, is checked strictly; errors name
// the field path, e.g. "clusterStrategy.lsClass.memoryQOS.throttlingPercent:
// 120 is out of range 0-100" or "nodeStrategies[1].beClass.memoryQOS...",
// and list the problems found.
func ParseResourceQoS(raw string) (ResourceQoS, error) {
	doc, err := document(raw)
	if err != nil {
		return ResourceQoS{}, fmt.Errorf("%s: %w", ConfigKeyResourceQoS, err)
	}
	root, err := asObject(doc, ConfigKeyResourceQoS)
	if err != nil {
		return ResourceQoS{}, err
	}
	cluster := root["clusterStrategy"]
	list := root[nodeStrategiesKey]
	if !isNull(list) {
		// The entries have always been read as YAML, JSON or not, so that
		// a number written 50.0 there is the integer 50: so they stay.
		if list, err = yaml.YAMLToJSON(list); err != nil {
			return ResourceQoS{}, fmt.Errorf("%s: %s", nodeStrategiesKey, topology.Quote(err.Error()))
		}
	}
	entries, err := parseNodeStrategies(list, cluster)
	if err != nil {
		return ResourceQoS{}, err
	}
	var r ResourceQoS
	if r.Cluster, err = parseStrategy(cluster, "clusterStrategy"); err != nil {
		return ResourceQoS{}, err
	}
	// An entry's errors are its own: clusterStrategy, under it, is good.
	for _, e := range entries {
		s, err := parseStrategy(e.merged, e.path)
		if err != nil {
			return ResourceQoS{}, err
		}
		r.Nodes = append(r.Nodes, NodeStrategy[Strategy]{Name: e.name, Selector: e.sel, Value: s})
	}
	return r, nil
}

// parseStrategy reads one strategy object named path: each class's
// memoryQOS and cpuQOS, then every class's memoryLocality.
func parseStrategy(raw json.RawMessage, path string) (Strategy, error) {
	strategy, err := asObject(raw, path)
	if err != nil {
		return Strategy{}, err
	}
	var s Strategy
	var errs []error
	for _, c := range classSections {
		at := path + "." + c.key
		class, err := asObject(strategy[c.key], at)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cpu, err := parseCPUQOS(class["cpuQOS"], at+".cpuQOS")
		errs = append(errs, err)
		*c.cpu(&s.CPUQoS) = cpu
		mem, err := asObject(class["memoryQOS"], at+".memoryQOS")
		if err != nil || mem == nil {
			errs = append(errs, err)
			continue
		}
		cc, err := parseMemoryQOS(mem, at+".memoryQOS", false)
		errs = append(errs, err)
		*c.mem(&s.MemQoS) = &cc
	}
	if err := joinErrors(errs); err != nil {
		return Strategy{}, err
	}
	if s.Locality, err = parseLocalities(strategy, path); err != nil {
		return Strategy{}, err
	}
	return s, nil
}
