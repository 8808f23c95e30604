package sloconfig

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locus-project/locus/pkg/memqos"
)

// intField describes one integer parameter of a memoryQOS section: its
// JSON name, its valid range and where it is stored. A nil dst means the
// field is accepted for compatibility with koordinator configs but has no
// effect here.
type intField struct {
	key    string
	lo, hi int64
	dst    func(*memqos.Params) **int64
}

var paramFields = []intField{
	{"minLimitPercent", 0, 100, func(p *memqos.Params) **int64 { return &p.MinLimitPercent }},
	{"lowLimitPercent", 0, 100, func(p *memqos.Params) **int64 { return &p.LowLimitPercent }},
	{"throttlingPercent", 0, 100, func(p *memqos.Params) **int64 { return &p.ThrottlingPercent }},
	{"wmarkRatio", 0, 100, func(p *memqos.Params) **int64 { return &p.WmarkRatio }},
	{"wmarkMinAdj", -25, 50, func(p *memqos.Params) **int64 { return &p.WmarkMinAdj }},
	// koordinator fields memory QoS does not act on; validated so that a
	// config that is wrong elsewhere is not silently accepted here.
	{"wmarkScalePermill", 1, 1000, nil},
	{"priorityEnable", 0, 1, nil},
	{"priority", 0, 12, nil},
	{"oomKillGroup", 0, 1, nil},
}

// MaxAnnotationBytes bounds the value of a pod annotation this package
// reads (memoryQOS, memoryLocality, cpuBurst): far above any real one, low
// enough that hostile text costs nothing to refuse.
const MaxAnnotationBytes = 4 << 10

// ParseMemoryQOSAnnotation reads the value of a memoryQOS annotation, e.g.
// {"policy": "auto"} or {"policy": "auto", "throttlingPercent": 90}: the
// parameters of a class's memoryQOS section, with "policy" in place of
// "enable". The policy is case-insensitive; a missing or empty policy is
// "default". Blank input is PolicyDefault with no parameters.
func ParseMemoryQOSAnnotation(raw string) (memqos.PodSetting, error) {
	ps := memqos.PodSetting{Policy: memqos.PolicyDefault}
	if len(raw) > MaxAnnotationBytes {
		return ps, fmt.Errorf("%d bytes, at most %d", len(raw), MaxAnnotationBytes)
	}
	doc, err := document(raw)
	if err != nil {
		return ps, err
	}
	o, err := asObject(doc, "")
	if err != nil || o == nil {
		return ps, err
	}
	cc, err := parseMemoryQOS(o, "", true)
	if err != nil {
		return ps, err
	}
	p, err := asString(o["policy"], "policy")
	if err != nil {
		return ps, err
	}
	switch memqos.Policy(strings.ToLower(strings.TrimSpace(p))) {
	case "", memqos.PolicyDefault:
	case memqos.PolicyAuto:
		ps.Policy = memqos.PolicyAuto
	case memqos.PolicyNone:
		ps.Policy = memqos.PolicyNone
	default:
		return ps, fmt.Errorf("policy: %q is not one of auto, default, none", clip(p))
	}
	ps.Params = cc.Params
	return ps, nil
}

// parseMemoryQOS reads one memoryQOS object. In a pod annotation (pod=true)
// "policy" is allowed and "enable" is not; in the ConfigMap the reverse.
func parseMemoryQOS(o object, path string, pod bool) (memqos.ClassConfig, error) {
	var cc memqos.ClassConfig
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
	for _, key := range keys(o) {
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
			// read by ParseMemoryQOSAnnotation
		case key == "enable" && pod:
			errs = append(errs, fmt.Errorf(`%s: not a pod setting; use "policy": "auto" or "none"`, field))
		default:
			errs = append(errs, unknownField(path, key, known))
		}
	}
	return cc, joinErrors(errs)
}

// ParseNamespaces reads the value of memory-qos in ack-slo-pod-config.
// A namespace listed in both lists is an error rather than a silent choice.
func ParseNamespaces(raw string) (memqos.NamespaceConfig, error) {
	var nc memqos.NamespaceConfig
	doc, err := document(raw)
	if err != nil {
		return nc, fmt.Errorf("%s: %w", ConfigKeyNamespaces, err)
	}
	root, err := asObject(doc, ConfigKeyNamespaces)
	if err != nil {
		return nc, err
	}
	var errs []error
	for _, key := range keys(root) {
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
	// A set, not a scan per name: the lists are as long as 1 MiB allows.
	disabled := make(map[string]bool, len(nc.Disabled))
	for _, ns := range nc.Disabled {
		disabled[ns] = true
	}
	for _, ns := range nc.Enabled {
		if disabled[ns] {
			errs = append(errs, fmt.Errorf("%s: namespace %q is in both enabledNamespaces and disabledNamespaces", ConfigKeyNamespaces, clip(ns)))
		}
	}
	if err := joinErrors(errs); err != nil {
		return memqos.NamespaceConfig{}, err
	}
	return nc, nil
}
