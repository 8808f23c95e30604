package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/topology"
)

// CPU Burst's text: the pod annotation and the cpu-burst-config key of
// ack-slo-config, read strictly (an unknown field, a wrong type or a value
// out of range is an error naming the field path and the value).
const (
	AnnotationCPUBurst = "koordinator.sh/cpuBurst"
	ConfigKeyCPUBurst  = "cpu-burst-config" // in kube-system/ack-slo-config
	// Bounds: far above any real value, low enough that hostile text costs
	// nothing to refuse.
	MaxCPUBurstAnnotation = 4 << 10
	MaxCPUBurstConfig     = 256 << 10
)

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

// ParseCPUBurst reads the koordinator.sh/cpuBurst annotation's JSON; path
// prefixes the field names in errors.
func ParseCPUBurst(raw, path string) (cpuburst.Config, error) {
	if len(raw) > MaxCPUBurstAnnotation {
		return cpuburst.Config{}, fmt.Errorf("%s: %d bytes, at most %d", path, len(raw), MaxCPUBurstAnnotation)
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
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		if len(errs) == maxBurstErrors {
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

// maxBurstErrors bounds the errors told of one object: hostile text with
// thousands of bad fields must not make a message as long.
const maxBurstErrors = 8

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

// clipKey keeps a field name fit for a message.
func clipKey(k string) string {
	if len(k) > 40 || strings.IndexFunc(k, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		return topology.Quote(k[:min(len(k), 40)])
	}
	return k
}

// ParseCPUBurstConfig reads cpu-burst-config (JSON or YAML) on a node with
// these labels: clusterStrategy, with the first nodeStrategies entry whose
// nodeSelector selects the node merged over it. Every entry is checked on
// every node. Blank input is the protocol's defaults (policy none).
func ParseCPUBurstConfig(raw string, nodeLabels map[string]string) (cpuburst.NodeConfig, error) {
	if len(raw) > MaxCPUBurstConfig {
		return cpuburst.NodeConfig{}, fmt.Errorf("%s: %d bytes, at most %d", ConfigKeyCPUBurst, len(raw), MaxCPUBurstConfig)
	}
	if strings.TrimSpace(raw) == "" {
		return cpuburst.NodeConfig{}, nil
	}
	doc, err := yaml.YAMLToJSON([]byte(raw))
	if err != nil {
		// The parser's text can quote a whole nested key: cut it.
		return cpuburst.NodeConfig{}, fmt.Errorf("%s: %s", ConfigKeyCPUBurst, topology.Quote(err.Error()))
	}
	q, err := qosForNode(string(doc), nodeLabels)
	if err != nil {
		return cpuburst.NodeConfig{}, err
	}
	cluster, err := burstStrategy(q.cluster, "clusterStrategy")
	if err != nil {
		return cpuburst.NodeConfig{}, err
	}
	out := cpuburst.NodeConfig{Strategy: cluster, Source: "clusterStrategy"}
	for i, e := range q.entries {
		c, err := burstStrategy(e, fmt.Sprintf("%s[%d]", nodeStrategiesKey, i))
		if err != nil {
			return cpuburst.NodeConfig{}, err
		}
		if i == q.match {
			out = cpuburst.NodeConfig{Strategy: c, Source: q.name}
		}
	}
	return out, nil
}

// burstStrategy reads a document's clusterStrategy (for a nodeStrategies
// entry, the entry merged over it, named by path).
func burstStrategy(doc, path string) (cpuburst.Config, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal([]byte(doc), &root); err != nil || root == nil {
		return cpuburst.Config{}, fmt.Errorf("%s: want an object with clusterStrategy and nodeStrategies, got %s", ConfigKeyCPUBurst, clipJSON(json.RawMessage(doc)))
	}
	for k := range root {
		if k != "clusterStrategy" {
			return cpuburst.Config{}, fmt.Errorf("%s: unknown field %s (known: clusterStrategy, nodeStrategies)", ConfigKeyCPUBurst, topology.Quote(k))
		}
	}
	cs, ok := root["clusterStrategy"]
	if !ok || isJSONNull(cs) {
		return cpuburst.Config{}, nil
	}
	var o map[string]json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(cs)).Decode(&o); err != nil || o == nil {
		return cpuburst.Config{}, fmt.Errorf("%s: want an object, got %s", path, clipJSON(cs))
	}
	return burstObject(o, path)
}

// CheckCPUBurstConfig parses a cpu-burst-config value as the agent will,
// so that a source keeps in force only a value the agent accepts.
func CheckCPUBurstConfig(raw string) error {
	_, err := ParseCPUBurstConfig(raw, nil)
	return err
}

// CPUBurstOf reads a workload's own CPU Burst fields: its annotation, nil
// when it has none; the error names the annotation and the field.
func CPUBurstOf(annotations map[string]string) (*cpuburst.Config, error) {
	raw, ok := annotations[AnnotationCPUBurst]
	if !ok {
		return nil, nil
	}
	c, err := ParseCPUBurst(raw, "annotation "+AnnotationCPUBurst)
	if err != nil {
		return nil, err
	}
	return &c, nil
}
