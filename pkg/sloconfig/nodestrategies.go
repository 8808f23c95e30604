package sloconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/locus-project/locus/pkg/topology"
)

// resource-qos-config and cpu-burst-config may carry, beside
// clusterStrategy, a list of per-node overrides, as ack-koordinator's
// NodeSLO does:
//
//	"nodeStrategies": [{"name": "big", "nodeSelector": {"matchLabels": {"pool": "big"}},
//	                    "beClass": {"memoryQOS": {"throttlingPercent": 50}}}]
//
// Each entry is merged over clusterStrategy (objects key by key, any other
// value replaced, so an entry says only what differs) and decoded on
// arrival, whichever node reads the config, so that a mistake is found on
// every node rather than only on the nodes it selects. The first entry
// whose nodeSelector matches a node's labels is in force there.

// Bounds on the per-node overrides: far above any real config, low enough
// that a hostile ConfigMap costs nothing to refuse.
const (
	MaxNodeStrategies = 64 // entries in nodeStrategies
	MaxSelectorTerms  = 32 // matchLabels plus matchExpressions of one entry
	MaxSelectorValues = 64 // values of one matchExpressions term
	maxMergeDepth     = 32 // objects merged key by key down to this depth
	// maxMergedBytes bounds the entries merged over clusterStrategy, all
	// together: each is as long as clusterStrategy and the entry.
	maxMergedBytes     = 16 << 20
	nodeStrategiesKey  = "nodeStrategies"
	nodeStrategyFields = "name, nodeSelector and the class strategies (lsrClass, lsClass, beClass, systemClass, ...)"
)

// NodeStrategy is one nodeStrategies entry, decoded: Value is the entry
// merged over clusterStrategy.
type NodeStrategy[T any] struct {
	// Name is the entry's name, or "nodeStrategies[i]" without one.
	Name     string
	Selector labels.Selector
	Value    T
}

// forNode is the first entry selecting a node with these labels, or
// cluster ("" for its name) when none does.
func forNode[T any](cluster T, nodes []NodeStrategy[T], nodeLabels map[string]string) (T, string) {
	for _, n := range nodes {
		if n.Selector.Matches(labels.Set(nodeLabels)) {
			return n.Value, n.Name
		}
	}
	return cluster, ""
}

// entry is one nodeStrategies entry as written: its name, selector and
// the rest (the strategies it overrides), merged over clusterStrategy.
type entry struct {
	name, path string
	sel        labels.Selector
	merged     json.RawMessage
}

// parseNodeStrategies reads the nodeStrategies array (absent or null:
// none), counting its entries before keeping any, and merges each over
// cluster.
func parseNodeStrategies(list, cluster json.RawMessage) ([]entry, error) {
	if isNull(list) {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(list))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, fmt.Errorf("%s: want an array of objects, got %s", nodeStrategiesKey, clipJSON(list))
	}
	var out []entry
	var errs []error
	for i := 0; dec.More(); i++ {
		if i == MaxNodeStrategies {
			return nil, fmt.Errorf("%s: more than %d entries", nodeStrategiesKey, MaxNodeStrategies)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%s[%d]: %v", nodeStrategiesKey, i, err)
		}
		e, body, err := parseEntry(raw, fmt.Sprintf("%s[%d]", nodeStrategiesKey, i))
		errs = append(errs, err)
		if err == nil {
			e.merged = body
			out = append(out, e)
		}
	}
	if err := joinErrors(errs); err != nil {
		return nil, err
	}
	merged := 0
	for i := range out {
		m, err := mergeJSON(cluster, out[i].merged, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", out[i].path, err)
		}
		if merged += len(m); merged > maxMergedBytes {
			return nil, fmt.Errorf("%s: merged over clusterStrategy, the entries make more than %d bytes", nodeStrategiesKey, maxMergedBytes)
		}
		out[i].merged = m
	}
	return out, nil
}

// parseEntry reads one entry's name and selector, and returns the rest of
// it: the strategies it overrides.
func parseEntry(raw json.RawMessage, path string) (entry, json.RawMessage, error) {
	e := entry{path: path, name: path}
	var body map[string]json.RawMessage
	if json.Unmarshal(raw, &body) != nil || body == nil {
		return e, nil, fmt.Errorf("%s: want an object with %s, got %s", path, nodeStrategyFields, clipJSON(raw))
	}
	if n, ok := body["name"]; ok {
		var name string
		if json.Unmarshal(n, &name) != nil {
			return e, nil, fmt.Errorf("%s.name: want a string, got %s", path, clipJSON(n))
		}
		// It goes to logs and the status: short and printable.
		if len(name) > 63 || strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			return e, nil, fmt.Errorf("%s.name: %s is not up to 63 printable characters", path, topology.Quote(name))
		}
		if name != "" {
			e.name = name
		}
	}
	sel, ok := body["nodeSelector"]
	if !ok || isNull(sel) {
		return e, nil, fmt.Errorf("%s.nodeSelector: missing; an entry without one would match no node (clusterStrategy is for every node)", path)
	}
	var err error
	if e.sel, err = parseSelector(sel, path+".nodeSelector"); err != nil {
		return e, nil, err
	}
	delete(body, "name")
	delete(body, "nodeSelector")
	rest, err := json.Marshal(body)
	return e, rest, err
}

// parseSelector reads a Kubernetes label selector (matchLabels,
// matchExpressions), bounded, and refuses an empty one, which would select
// every node and so is clusterStrategy's job.
func parseSelector(raw json.RawMessage, path string) (labels.Selector, error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return nil, fmt.Errorf("%s: want an object with matchLabels and/or matchExpressions, got %s", path, clipJSON(raw))
	}
	for _, k := range keys(fields) {
		if k != "matchLabels" && k != "matchExpressions" {
			return nil, fmt.Errorf("%s: unknown field %s (known: matchLabels, matchExpressions)", path, topology.Quote(k))
		}
	}
	var probe struct {
		MatchLabels      map[string]json.RawMessage `json:"matchLabels"`
		MatchExpressions []struct {
			Values []json.RawMessage `json:"values"`
		} `json:"matchExpressions"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if n := len(probe.MatchLabels) + len(probe.MatchExpressions); n > MaxSelectorTerms {
		return nil, fmt.Errorf("%s: %d terms, at most %d", path, n, MaxSelectorTerms)
	}
	for i, e := range probe.MatchExpressions {
		if len(e.Values) > MaxSelectorValues {
			return nil, fmt.Errorf("%s.matchExpressions[%d].values: %d values, at most %d", path, i, len(e.Values), MaxSelectorValues)
		}
	}
	var ls metav1.LabelSelector
	if err := json.Unmarshal(raw, &ls); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0 {
		return nil, fmt.Errorf("%s: empty; it would select every node, which clusterStrategy already does", path)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return sel, nil
}

// mergeJSON lays over on base: where both are objects, key by key; else
// over wins. Depth is bounded; below maxMergeDepth over replaces base.
func mergeJSON(base, over json.RawMessage, depth int) (json.RawMessage, error) {
	var b, o map[string]json.RawMessage
	if depth >= maxMergeDepth || isNull(base) || json.Unmarshal(base, &b) != nil || b == nil ||
		json.Unmarshal(over, &o) != nil || o == nil {
		if isNull(over) && depth > 0 {
			return base, nil
		}
		return over, nil
	}
	for k, v := range o {
		m, err := mergeJSON(b[k], v, depth+1)
		if err != nil {
			return nil, err
		}
		b[k] = m
	}
	return json.Marshal(b)
}

func clipJSON(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return topology.Quote(s)
}
