package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/pkg/topology"
)

// resource-qos-config may carry, beside clusterStrategy, a list of per-node
// overrides, as ack-koordinator's NodeSLO does:
//
//	"nodeStrategies": [{"name": "big", "nodeSelector": {"matchLabels": {"pool": "big"}},
//	                    "beClass": {"memoryQOS": {"throttlingPercent": 50}}}]
//
// The first entry whose nodeSelector matches the node's labels is merged over
// clusterStrategy for that node: objects key by key, any other value
// replaced, so an entry says only what differs. Every entry is checked,
// whichever node reads the config, so that a mistake is found on every node
// rather than only on the nodes it selects.

// Bounds on the per-node overrides: far above any real config, low enough
// that a hostile ConfigMap costs nothing to refuse.
const (
	MaxNodeStrategies  = 64 // entries in nodeStrategies
	MaxSelectorTerms   = 32 // matchLabels plus matchExpressions of one entry
	MaxSelectorValues  = 64 // values of one matchExpressions term
	maxMergeDepth      = 32 // objects merged key by key down to this depth
	nodeStrategiesKey  = "nodeStrategies"
	nodeStrategyFields = "name, nodeSelector and the class strategies (lsrClass, lsClass, beClass, systemClass, ...)"
)

// nodeStrategy is one entry of nodeStrategies.
type nodeStrategy struct {
	name string
	sel  labels.Selector
	body map[string]json.RawMessage // the class strategies: nodeSelector and name removed
}

// nodeDocs is resource-qos-config split for one node.
type nodeDocs struct {
	cluster string   // the document without nodeStrategies
	entries []string // per entry: cluster with the entry merged over clusterStrategy
	match   int      // the first entry selecting the node, -1 for none
	name    string   // its name, or "nodeStrategies[i]" without one
}

// qosForNode splits resource-qos-config into the cluster document and one
// document per nodeStrategies entry, and finds the entry in force on a node
// with the given labels. Input that is not an object is left whole in
// cluster, for the class parsers to name the error.
func qosForNode(raw string, nodeLabels map[string]string) (nodeDocs, error) {
	q := nodeDocs{cluster: raw, match: -1}
	if strings.TrimSpace(raw) == "" {
		return q, nil
	}
	doc, err := yaml.YAMLToJSON([]byte(raw)) // JSON is YAML too
	if err != nil {
		return q, nil
	}
	var root map[string]json.RawMessage
	if json.Unmarshal(doc, &root) != nil || root == nil {
		return q, nil
	}
	list, ok := root[nodeStrategiesKey]
	if !ok {
		return q, nil
	}
	delete(root, nodeStrategiesKey)
	base, err := json.Marshal(root)
	if err != nil {
		return q, err
	}
	q.cluster = string(base)
	if isJSONNull(list) {
		return q, nil
	}
	strategies, err := parseNodeStrategies(list)
	if err != nil {
		return q, err
	}
	cluster := root["clusterStrategy"]
	for i, s := range strategies {
		body, err := json.Marshal(s.body)
		if err != nil {
			return q, err
		}
		merged, err := mergeJSON(cluster, body, 0)
		if err != nil {
			return q, fmt.Errorf("%s[%d]: %w", nodeStrategiesKey, i, err)
		}
		root["clusterStrategy"] = merged
		d, err := json.Marshal(root)
		if err != nil {
			return q, err
		}
		q.entries = append(q.entries, string(d))
		if q.match < 0 && s.sel.Matches(labels.Set(nodeLabels)) {
			q.match, q.name = i, s.name
			if q.name == "" {
				q.name = fmt.Sprintf("%s[%d]", nodeStrategiesKey, i)
			}
		}
	}
	return q, nil
}

// parseNodeStrategies reads the nodeStrategies array, counting its entries
// before keeping any.
func parseNodeStrategies(list json.RawMessage) ([]nodeStrategy, error) {
	dec := json.NewDecoder(bytes.NewReader(list))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, fmt.Errorf("%s: want an array of objects, got %s", nodeStrategiesKey, clipJSON(list))
	}
	var out []nodeStrategy
	var errs []error
	for i := 0; dec.More(); i++ {
		if i == MaxNodeStrategies {
			return nil, fmt.Errorf("%s: more than %d entries", nodeStrategiesKey, MaxNodeStrategies)
		}
		var e json.RawMessage
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("%s[%d]: %v", nodeStrategiesKey, i, err)
		}
		s, err := parseNodeStrategy(e, fmt.Sprintf("%s[%d]", nodeStrategiesKey, i))
		errs = append(errs, err)
		out = append(out, s)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

func parseNodeStrategy(raw json.RawMessage, path string) (nodeStrategy, error) {
	var s nodeStrategy
	if json.Unmarshal(raw, &s.body) != nil || s.body == nil {
		return s, fmt.Errorf("%s: want an object with %s, got %s", path, nodeStrategyFields, clipJSON(raw))
	}
	if n, ok := s.body["name"]; ok {
		if json.Unmarshal(n, &s.name) != nil {
			return s, fmt.Errorf("%s.name: want a string, got %s", path, clipJSON(n))
		}
		// It goes to logs and the status: short and printable.
		if len(s.name) > 63 || strings.IndexFunc(s.name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			return s, fmt.Errorf("%s.name: %s is not up to 63 printable characters", path, topology.Quote(s.name))
		}
	}
	sel, ok := s.body["nodeSelector"]
	if !ok || isJSONNull(sel) {
		return s, fmt.Errorf("%s.nodeSelector: missing; an entry without one would match no node (clusterStrategy is for every node)", path)
	}
	var err error
	if s.sel, err = parseSelector(sel, path+".nodeSelector"); err != nil {
		return s, err
	}
	delete(s.body, "name")
	delete(s.body, "nodeSelector")
	return s, nil
}

// parseSelector reads a Kubernetes label selector (matchLabels,
// matchExpressions), bounded, and refuses an empty one, which would select
// every node and so is clusterStrategy's job.
func parseSelector(raw json.RawMessage, path string) (labels.Selector, error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return nil, fmt.Errorf("%s: want an object with matchLabels and/or matchExpressions, got %s", path, clipJSON(raw))
	}
	for k := range fields {
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
	if depth >= maxMergeDepth || isJSONNull(base) || json.Unmarshal(base, &b) != nil || b == nil ||
		json.Unmarshal(over, &o) != nil || o == nil {
		if isJSONNull(over) && depth > 0 {
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

func isJSONNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

func clipJSON(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return topology.Quote(s)
}
