package workload

import (
	"fmt"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/sloconfig"
	"github.com/locus-project/locus/pkg/topology"
)

// Config is what the agent acts on node-wide: a HostConfig (for a source
// other than the file, one holding none of the file's settings) and the
// SLO configuration in force on this node, typed, whichever source gave it.
type Config struct {
	Host             *hostconfig.HostConfig
	MemQoS           memqos.Config
	CPUQoS           cpuqos.Config
	Namespaces       memqos.NamespaceConfig // the HostConfig has none
	Reserved, BEPool cpuset.CPUSet
	// MemQoSHeld, when set, says why memory QoS files are left alone this
	// reconcile (see source.Snapshot.MemoryQoSHeld).
	MemQoSHeld string
	// Locality holds the memoryLocality sections of resource-qos-config, by
	// class key (lsClass, beClass, ...).
	Locality map[string]sloconfig.Locality
	// NodeStrategy names the nodeStrategies entry of resource-qos-config in
	// force on this node (its name, or "nodeStrategies[i]"); "" for none.
	NodeStrategy string
	// CPUBurst is cpu-burst-config (standalone: cpuBurstConfig) on this
	// node.
	CPUBurst cpuburst.NodeConfig
	// MovesEnabled is the node's switch for moving movable workloads
	// (HostConfig moves.enabled, off by default): with it on, the decision
	// moves them to make room for a workload that needs it (pkg/decide).
	MovesEnabled bool
	// Rebalance, with MovesEnabled, moves movable workloads off a NUMA node
	// whose pinned workloads use much more CPU than another's, for a
	// sustained time (HostConfig moves.rebalance, the agent's --rebalance
	// in Kubernetes mode; off by default; pkg/decide rebalance.go).
	Rebalance bool
}

// HostConfig is c's HostConfig; nil for no config, as an agent stopped
// before its source's first config has.
func (c *Config) HostConfig() *hostconfig.HostConfig {
	if c == nil {
		return nil
	}
	return c.Host
}

// NodeConfig is the config of a node whose settings come from a source
// rather than a HostConfig file: what slo says is in force there.
func NodeConfig(slo sloconfig.Node, reserved, bePool cpuset.CPUSet) *Config {
	return &Config{Host: &hostconfig.HostConfig{}, MemQoS: slo.MemQoS, CPUQoS: slo.CPUQoS, Namespaces: slo.Namespaces,
		Reserved: reserved, BEPool: bePool, Locality: slo.Locality, NodeStrategy: slo.Strategy, CPUBurst: slo.CPUBurst}
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

// DeriveConfig validates and derives the parts of a parsed HostConfig: its
// resourceQOSConfig and cpuBurstConfig are decoded by pkg/sloconfig, as the
// ConfigMap keys they spell. A standalone host has no node labels: only a
// nodeStrategies entry whose selector matches an empty label set applies
// there. Every workload's cpuBurst and memory are checked too, so that a
// file with a bad one is refused as a whole.
func DeriveConfig(hc *hostconfig.HostConfig) (*Config, error) {
	var doc sloconfig.Doc
	var err error
	if raw := hc.ResourceQOSConfig; len(raw) > 0 && string(raw) != "null" {
		if doc.ResourceQoS, err = sloconfig.ParseResourceQoS(string(raw)); err != nil {
			return nil, fmt.Errorf("resourceQOSConfig: %w", err)
		}
	}
	if raw := hc.CPUBurstConfig; len(raw) > 0 && string(raw) != "null" {
		if doc.CPUBurst, err = sloconfig.ParseCPUBurst(string(raw)); err != nil {
			return nil, fmt.Errorf("cpuBurstConfig: %w", err)
		}
	}
	reserved, bePool, err := cpuLists(hc)
	if err != nil {
		return nil, err
	}
	for i, w := range hc.Workloads {
		if err := checkDedicated(i, w); err != nil {
			return nil, err
		}
		if _, err := StandaloneMemory(w); err != nil {
			return nil, fmt.Errorf("workloads[%d].%w (workload %q)", i, err, w.Name)
		}
		if len(w.CPUBurst) > 0 && string(w.CPUBurst) != "null" {
			if _, err := sloconfig.ParseCPUBurstAnnotation(string(w.CPUBurst), fmt.Sprintf("workloads[%d].cpuBurst", i)); err != nil {
				return nil, err
			}
		}
	}
	c := NodeConfig(doc.ForNode(nil), reserved, bePool)
	c.Host = hc
	c.MovesEnabled, c.Rebalance = hc.MovesEnabled(), hc.RebalanceEnabled()
	return c, nil
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
