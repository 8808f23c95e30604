package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/topology"
)

// Config is a HostConfig with its derived, validated parts: what the agent
// acts on, whichever source the node-wide settings came from.
type Config struct {
	Host             *hostconfig.HostConfig
	MemQoS           memqos.Config
	Namespaces       memqos.NamespaceConfig // the HostConfig has none
	Reserved, BEPool cpuset.CPUSet
	// MemQoSHeld, when set, says why memory QoS files are left alone this
	// reconcile (see source.Snapshot.MemoryQoSHeld).
	MemQoSHeld string
	// Locality holds the memoryLocality sections of resourceQOSConfig, by
	// class key (lsClass, beClass, ...).
	Locality map[string]locality.Settings
	// NodeStrategy names the nodeStrategies entry of resourceQOSConfig in
	// force on this node (its name, or "nodeStrategies[i]"); "" for none.
	NodeStrategy string
	// CPUBurst is cpu-burst-config (standalone: cpuBurstConfig) on this
	// node.
	CPUBurst cpuburst.NodeConfig
}

// ParseConfig validates everything the agent derives from a HostConfig, so
// that a file is accepted or refused as a whole.
func ParseConfig(raw []byte) (*Config, error) {
	hc, err := hostconfig.Parse(raw)
	if err != nil {
		return nil, err
	}
	return DeriveConfig(hc)
}

// DeriveConfig validates and derives the parts of a parsed HostConfig. A
// standalone host has no node labels: only a nodeStrategies entry whose
// selector matches an empty label set applies there.
func DeriveConfig(hc *hostconfig.HostConfig) (*Config, error) {
	return DeriveConfigOnNode(hc, nil)
}

// DeriveConfigOnNode is DeriveConfig on a node with these labels: the first
// nodeStrategies entry of resourceQOSConfig that selects them is merged over
// clusterStrategy (see qosForNode). Every entry is checked on every node.
func DeriveConfigOnNode(hc *hostconfig.HostConfig, nodeLabels map[string]string) (*Config, error) {
	c := &Config{Host: hc}
	var err error
	if len(hc.ResourceQOSConfig) > 0 && string(hc.ResourceQOSConfig) != "null" {
		q, err := qosForNode(string(hc.ResourceQOSConfig), nodeLabels)
		if err != nil {
			return nil, fmt.Errorf("resourceQOSConfig: %w", err)
		}
		// The cluster strategy alone first, so that an error found in an
		// entry's merged document below is the entry's own.
		if err := c.parseQoS(q.cluster); err != nil {
			return nil, fmt.Errorf("resourceQOSConfig: %w", err)
		}
		for i, e := range q.entries {
			if err := (&Config{}).parseQoS(e); err != nil {
				return nil, fmt.Errorf("resourceQOSConfig: %s", strings.ReplaceAll(err.Error(), "clusterStrategy.", fmt.Sprintf("%s[%d].", nodeStrategiesKey, i)))
			}
		}
		if q.match >= 0 {
			if err := c.parseQoS(q.entries[q.match]); err != nil {
				return nil, fmt.Errorf("resourceQOSConfig: %w", err)
			}
		}
		c.NodeStrategy = q.name
	}
	if c.Reserved, c.BEPool, err = cpuLists(hc); err != nil {
		return nil, err
	}
	if err := c.deriveBurst(hc, nodeLabels); err != nil {
		return nil, err
	}
	return c, nil
}

// deriveBurst reads cpuBurstConfig and checks every workload's cpuBurst, so
// that a file with a bad one is refused as a whole, as for resourceQOSConfig.
func (c *Config) deriveBurst(hc *hostconfig.HostConfig, nodeLabels map[string]string) error {
	if len(hc.CPUBurstConfig) > 0 && string(hc.CPUBurstConfig) != "null" {
		b, err := ParseCPUBurstConfig(string(hc.CPUBurstConfig), nodeLabels)
		if err != nil {
			return fmt.Errorf("cpuBurstConfig: %w", err)
		}
		c.CPUBurst = b
	}
	for i, w := range hc.Workloads {
		if len(w.CPUBurst) > 0 && string(w.CPUBurst) != "null" {
			if _, err := ParseCPUBurst(string(w.CPUBurst), fmt.Sprintf("workloads[%d].cpuBurst", i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseQoS reads the memory QoS and memory locality sections of one
// resource-qos-config document into c.
func (c *Config) parseQoS(raw string) error {
	var err error
	if c.MemQoS, err = memqos.ParseResourceQoSConfig(raw); err != nil {
		return err
	}
	c.Locality, err = localityClasses(json.RawMessage(raw))
	return err
}

// CheckResourceQoSConfig parses a resource-qos-config value the way the
// agent derives its settings from it, so that a source keeps in force only
// a value the agent accepts. Errors name the field.
func CheckResourceQoSConfig(raw string) error {
	_, err := ConfigFromQoS(raw)
	return err
}

// ConfigFromQoS derives a config from resource-qos-config alone, as from a
// HostConfig holding only that, on a node without labels.
func ConfigFromQoS(raw string) (*Config, error) { return ConfigFromQoSOnNode(raw, nil) }

// ConfigFromQoSOnNode is ConfigFromQoS on a node with these labels, which
// select the nodeStrategies entry in force.
func ConfigFromQoSOnNode(raw string, nodeLabels map[string]string) (*Config, error) {
	hc := &hostconfig.HostConfig{}
	if strings.TrimSpace(raw) != "" {
		hc.ResourceQOSConfig = json.RawMessage(raw)
	}
	cfg, err := DeriveConfigOnNode(hc, nodeLabels)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "resourceQOSConfig: "))
	}
	return cfg, nil
}

func localityClasses(raw json.RawMessage) (map[string]locality.Settings, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	return locality.ParseClassConfig(string(raw))
}

// cpuLists parses the config's reservedCPUs and bePool (already validated).
func cpuLists(cfg *hostconfig.HostConfig) (reserved, bePool cpuset.CPUSet, err error) {
	if reserved, err = topology.ParseCPUList(cfg.ReservedCPUs); err != nil {
		return reserved, bePool, fmt.Errorf("reservedCPUs: %w", err)
	}
	if bePool, err = topology.ParseCPUList(cfg.BEPool); err != nil {
		return reserved, bePool, fmt.Errorf("bePool: %w", err)
	}
	return reserved, bePool, nil
}
