package memqos

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/locus-project/locus/pkg/cpuqos"
)

// Config keys, exactly as written in the ConfigMaps.
const (
	ConfigKeyResourceQoS = "resource-qos-config" // in kube-system/ack-slo-config
	ConfigKeyNamespaces  = "memory-qos"          // in kube-system/ack-slo-pod-config
)

// classSections maps the class keys of clusterStrategy to Config fields:
// each class's memoryQOS and cpuQOS. Other keys (cgroupRoot, policies, ...)
// and other strategies inside a class (resctrlQOS, ...) belong to other
// features and are skipped.
var classSections = []struct {
	key   string
	field func(*Config) **ClassConfig
	cpu   func(*cpuqos.Config) **cpuqos.ClassConfig
}{
	{"lsrClass", func(c *Config) **ClassConfig { return &c.LSR }, func(c *cpuqos.Config) **cpuqos.ClassConfig { return &c.LSR }},
	{"lsClass", func(c *Config) **ClassConfig { return &c.LS }, func(c *cpuqos.Config) **cpuqos.ClassConfig { return &c.LS }},
	{"beClass", func(c *Config) **ClassConfig { return &c.BE }, func(c *cpuqos.Config) **cpuqos.ClassConfig { return &c.BE }},
	{"systemClass", func(c *Config) **ClassConfig { return &c.System }, func(c *cpuqos.Config) **cpuqos.ClassConfig { return &c.System }},
}

// ParseResourceQoSConfig reads the value of resource-qos-config (JSON or
// YAML). Blank input is a valid, empty config: memory and CPU QoS off
// everywhere. Every memoryQOS and cpuQOS section is checked strictly; errors name the field path,
// e.g. "clusterStrategy.lsClass.memoryQOS.throttlingPercent: 120 is out of
// range 0-100", and list every problem found.
func ParseResourceQoSConfig(raw string) (Config, error) {
	var cfg Config
	doc, err := document(raw)
	if err != nil {
		return cfg, fmt.Errorf("%s: %w", ConfigKeyResourceQoS, err)
	}
	root, err := asObject(doc, ConfigKeyResourceQoS)
	if err != nil {
		return cfg, err
	}
	strategy, err := asObject(root["clusterStrategy"], "clusterStrategy")
	if err != nil {
		return cfg, err
	}
	var errs []error
	for _, s := range classSections {
		path := "clusterStrategy." + s.key
		class, err := asObject(strategy[s.key], path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cpu, err := parseCPUQOS(class["cpuQOS"], path+".cpuQOS")
		errs = append(errs, err)
		*s.cpu(&cfg.CPU) = cpu
		mem, err := asObject(class["memoryQOS"], path+".memoryQOS")
		if err != nil || mem == nil {
			errs = append(errs, err)
			continue
		}
		cc, err := parseMemoryQOS(mem, path+".memoryQOS", false)
		errs = append(errs, err)
		*s.field(&cfg) = &cc
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// parseMemoryQOS reads one memoryQOS object. In a pod annotation (pod=true)
// "policy" is allowed and "enable" is not; in the ConfigMap the reverse.
func parseMemoryQOS(o object, path string, pod bool) (ClassConfig, error) {
	var cc ClassConfig
	known := []string{}
	for _, f := range paramFields {
		known = append(known, f.key)
	}
	if pod {
		known = append(known, "policy")
	} else {
		known = append(known, "enable")
	}
	var errs []error
	for _, key := range sortedKeys(o) {
		raw, field := o[key], join(path, key)
		i := slices.IndexFunc(paramFields, func(f intField) bool { return f.key == key })
		switch {
		case i >= 0:
			f := paramFields[i]
			v, err := asInt(raw, field, f.lo, f.hi)
			errs = append(errs, err)
			if err == nil && f.dst != nil {
				*f.dst(&cc.Params) = v
			}
		case key == "enable" && !pod:
			v, err := asBool(raw, field)
			errs = append(errs, err)
			cc.Enable = v
		case key == "policy" && pod:
			// read by ParsePodSetting
		case key == "enable" && pod:
			errs = append(errs, fmt.Errorf(`%s: not a pod setting; use "policy": "auto" or "none"`, field))
		default:
			errs = append(errs, unknownField(path, key, known))
		}
	}
	return cc, errors.Join(errs...)
}

// ParseNamespaceConfig reads the value of memory-qos in ack-slo-pod-config.
// A namespace listed in both lists is an error rather than a silent choice.
func ParseNamespaceConfig(raw string) (NamespaceConfig, error) {
	var nc NamespaceConfig
	doc, err := document(raw)
	if err != nil {
		return nc, fmt.Errorf("%s: %w", ConfigKeyNamespaces, err)
	}
	root, err := asObject(doc, ConfigKeyNamespaces)
	if err != nil {
		return nc, err
	}
	var errs []error
	for _, key := range sortedKeys(root) {
		path := ConfigKeyNamespaces + "." + key
		switch key {
		case "enabledNamespaces":
			nc.Enabled, err = asStrings(root[key], path)
		case "disabledNamespaces":
			nc.Disabled, err = asStrings(root[key], path)
		default:
			err = unknownField(ConfigKeyNamespaces, key, []string{"enabledNamespaces", "disabledNamespaces"})
		}
		errs = append(errs, err)
	}
	for _, ns := range nc.Enabled {
		if slices.Contains(nc.Disabled, ns) {
			errs = append(errs, fmt.Errorf("%s: namespace %q is in both enabledNamespaces and disabledNamespaces", ConfigKeyNamespaces, clip(ns)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return NamespaceConfig{}, err
	}
	return nc, nil
}

func sortedKeys(o object) []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
