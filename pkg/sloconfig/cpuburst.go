package sloconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/topology"
)

// MaxCPUBurstConfig bounds cpu-burst-config: far above any real value, low
// enough that hostile text costs nothing to refuse.
const MaxCPUBurstConfig = 256 << 10

// CPUBurst is cpu-burst-config decoded: clusterStrategy, and each
// nodeStrategies entry merged over it.
type CPUBurst struct {
	Cluster cpuburst.Config
	Nodes   []NodeStrategy[cpuburst.Config]
	// written tells a key that says nothing (blank, or absent) from one
	// whose clusterStrategy is empty: only the latter is a strategy in force.
	written bool
}

// ForNode is the strategy in force on a node with these labels.
func (b CPUBurst) ForNode(nodeLabels map[string]string) cpuburst.NodeConfig {
	if !b.written {
		return cpuburst.NodeConfig{}
	}
	c, name := forNode(b.Cluster, b.Nodes, nodeLabels)
	if name == "" {
		name = "clusterStrategy"
	}
	return cpuburst.NodeConfig{Strategy: c, Source: name}
}

// burstFields are the protocol's fields with their ranges; a bound outside
// what the protocol allows is Locus's, to keep the arithmetic bounded.
type burstField struct {
	key      string
	min, max int64
	field    func(*cpuburst.Config) **int64
}

var burstFields = []burstField{
	{"cpuBurstPercent", 0, 10000, func(c *cpuburst.Config) **int64 { return &c.CPUBurstPercent }},
	{"cfsQuotaBurstPercent", 100, 10000, func(c *cpuburst.Config) **int64 { return &c.CFSQuotaBurstPercent }},
	{"cfsQuotaBurstPeriodSeconds", -1, 86400, func(c *cpuburst.Config) **int64 { return &c.CFSQuotaBurstPeriodSeconds }},
	{"sharePoolThresholdPercent", 0, 100, func(c *cpuburst.Config) **int64 { return &c.SharePoolThresholdPercent }},
}

var burstPolicies = []cpuburst.Policy{cpuburst.Auto, cpuburst.CPUBurstOnly, cpuburst.CFSQuotaBurst, cpuburst.None}

// ParseCPUBurstAnnotation reads the JSON of a cpuBurst annotation (or a
// standalone workload's cpuBurst field): the fields of a cpu-burst-config
// strategy. path prefixes the field names in errors.
func ParseCPUBurstAnnotation(raw, path string) (cpuburst.Config, error) {
	if len(raw) > MaxAnnotationBytes {
		return cpuburst.Config{}, fmt.Errorf("%s: %d bytes, at most %d", path, len(raw), MaxAnnotationBytes)
	}
	var o map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &o); err != nil || o == nil {
		return cpuburst.Config{}, fmt.Errorf("%s: want a JSON object like {\"policy\": \"auto\"}, got %s", path, clipJSON(json.RawMessage(raw)))
	}
	return burstObject(o, path)
}

// burstObject reads the protocol's fields of one object, every error named.
func burstObject(o map[string]json.RawMessage, path string) (cpuburst.Config, error) {
	var c cpuburst.Config
	var errs []error
	for _, key := range keys(o) {
		if len(errs) == maxErrors {
			errs = append(errs, fmt.Errorf("%s: more errors not shown", path))
			break
		}
		field, v := path+"."+clipKey(key), o[key]
		if key == "policy" {
			var p string
			if json.Unmarshal(v, &p) != nil || !slices.Contains(burstPolicies, cpuburst.Policy(p)) {
				errs = append(errs, fmt.Errorf("%s: %s is not one of auto, cpuBurstOnly, cfsQuotaBurstOnly, none", field, shown(v)))
				continue
			}
			c.Policy = new(cpuburst.Policy(p))
			continue
		}
		i := slices.IndexFunc(burstFields, func(f burstField) bool { return f.key == key })
		if i < 0 {
			errs = append(errs, fmt.Errorf("%s: unknown field (known: policy, cpuBurstPercent, cfsQuotaBurstPercent, cfsQuotaBurstPeriodSeconds, sharePoolThresholdPercent)", field))
			continue
		}
		f := burstFields[i]
		var n int64
		if err := json.Unmarshal(v, &n); err != nil {
			errs = append(errs, fmt.Errorf("%s: want an integer, got %s", field, shown(v)))
		} else if n < f.min || n > f.max {
			errs = append(errs, fmt.Errorf("%s: %d is out of range %d..%d", field, n, f.min, f.max))
		} else {
			*f.field(&c) = &n
		}
	}
	return c, errors.Join(errs...)
}

// shown is a JSON value fit for a message: a string as its text, quoted.
func shown(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return clipJSON(v)
	}
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return topology.Quote(s)
}

// ParseCPUBurst reads cpu-burst-config (JSON or YAML): clusterStrategy, and
// each nodeStrategies entry merged over it. Blank input says nothing: the
// protocol's defaults (policy none).
func ParseCPUBurst(raw string) (CPUBurst, error) {
	if len(raw) > MaxCPUBurstConfig {
		return CPUBurst{}, fmt.Errorf("%s: %d bytes, at most %d", ConfigKeyCPUBurst, len(raw), MaxCPUBurstConfig)
	}
	if strings.TrimSpace(raw) == "" {
		return CPUBurst{}, nil
	}
	doc, err := yaml.YAMLToJSON([]byte(raw))
	if err != nil {
		// The parser's text can quote a whole nested key: cut it.
		return CPUBurst{}, fmt.Errorf("%s: %s", ConfigKeyCPUBurst, topology.Quote(err.Error()))
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(doc, &root); err != nil || root == nil {
		return CPUBurst{}, fmt.Errorf("%s: want an object with clusterStrategy and nodeStrategies, got %s", ConfigKeyCPUBurst, clipJSON(doc))
	}
	cluster := root["clusterStrategy"]
	entries, err := parseNodeStrategies(root[nodeStrategiesKey], cluster)
	if err != nil {
		return CPUBurst{}, err
	}
	for _, k := range keys(root) {
		if k != "clusterStrategy" && k != nodeStrategiesKey {
			return CPUBurst{}, fmt.Errorf("%s: unknown field %s (known: clusterStrategy, nodeStrategies)", ConfigKeyCPUBurst, topology.Quote(k))
		}
	}
	b := CPUBurst{written: true}
	if b.Cluster, err = burstStrategy(cluster, "clusterStrategy"); err != nil {
		return CPUBurst{}, err
	}
	for _, e := range entries {
		c, err := burstStrategy(e.merged, e.path)
		if err != nil {
			return CPUBurst{}, err
		}
		b.Nodes = append(b.Nodes, NodeStrategy[cpuburst.Config]{Name: e.name, Selector: e.sel, Value: c})
	}
	return b, nil
}

// burstStrategy reads a strategy: clusterStrategy, or an entry merged over
// it, named by path.
func burstStrategy(raw json.RawMessage, path string) (cpuburst.Config, error) {
	if isNull(raw) {
		return cpuburst.Config{}, nil
	}
	var o map[string]json.RawMessage
	if err := json.Unmarshal(raw, &o); err != nil || o == nil {
		return cpuburst.Config{}, fmt.Errorf("%s: want an object, got %s", path, clipJSON(raw))
	}
	return burstObject(o, path)
}
