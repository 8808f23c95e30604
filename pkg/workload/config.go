package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/utils/cpuset"

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

// DeriveConfig validates and derives the parts of a parsed HostConfig.
func DeriveConfig(hc *hostconfig.HostConfig) (*Config, error) {
	c := &Config{Host: hc}
	var err error
	if len(hc.ResourceQOSConfig) > 0 && string(hc.ResourceQOSConfig) != "null" {
		if c.MemQoS, err = memqos.ParseResourceQoSConfig(string(hc.ResourceQOSConfig)); err != nil {
			return nil, fmt.Errorf("resourceQOSConfig: %w", err)
		}
	}
	if c.Locality, err = localityClasses(hc.ResourceQOSConfig); err != nil {
		return nil, fmt.Errorf("resourceQOSConfig: %w", err)
	}
	if c.Reserved, c.BEPool, err = cpuLists(hc); err != nil {
		return nil, err
	}
	return c, nil
}

// CheckResourceQoSConfig parses a resource-qos-config value the way the
// agent derives its settings from it, so that a source keeps in force only
// a value the agent accepts. Errors name the field.
func CheckResourceQoSConfig(raw string) error {
	_, err := ConfigFromQoS(raw)
	return err
}

// ConfigFromQoS derives a config from resource-qos-config alone, as from a
// HostConfig holding only that.
func ConfigFromQoS(raw string) (*Config, error) {
	hc := &hostconfig.HostConfig{}
	if strings.TrimSpace(raw) != "" {
		hc.ResourceQOSConfig = json.RawMessage(raw)
	}
	cfg, err := DeriveConfig(hc)
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
