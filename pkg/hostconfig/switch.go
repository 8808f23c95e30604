package hostconfig

import (
	"encoding/json"
	"fmt"
	"reflect"

	yamlv3 "gopkg.in/yaml.v3"
)

// Switch is a field that is true or false and nothing else: a quoted
// "true", a yes or a 1 is an error naming the field and the value, not a
// guess, because a switch that moves running workloads must mean what it
// says.
type Switch bool

// UnmarshalJSON takes the literals true and false only.
func (s *Switch) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "true":
		*s = true
	case "false":
		*s = false
	default:
		return fmt.Errorf("%s is not true or false", b)
	}
	return nil
}

// Moves is the node's switch for moving workloads that opted in
// (`movable: true`, or the locus.io/movable annotation) to other CPUs so
// that a request fits; Rebalance, with Enabled, also moves them off a NUMA
// node busier than another.
type Moves struct {
	Enabled   Switch `json:"enabled"`
	Rebalance Switch `json:"rebalance,omitempty"`
}

// MovesEnabled says whether the HostConfig turns moves on (off unless it
// says moves.enabled: true).
func (c *HostConfig) MovesEnabled() bool { return c.Moves != nil && bool(c.Moves.Enabled) }

// RebalanceEnabled says whether the HostConfig turns rebalancing on: only
// with moves on too (moves.enabled and moves.rebalance both true).
func (c *HostConfig) RebalanceEnabled() bool { return c.MovesEnabled() && bool(c.Moves.Rebalance) }

var switchType = reflect.TypeFor[Switch]()

// checkSwitch says, at path, why v is no Switch: the strict decoder's own
// error would name neither the field's path nor the value.
func checkSwitch(v any, path string) error {
	if _, ok := v.(bool); ok {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil || len(raw) > 64 {
		raw = []byte("the value")
	}
	return fieldError{path, fmt.Sprintf("%s: want true or false", raw)}
}

// switchNodes are the Switch fields of a document as YAML 1.2 reads them,
// before the YAML 1.1 conversion of the strict decoder turns yes, on and
// y into true.
type switchNodes struct {
	Moves struct {
		Enabled   yamlv3.Node `yaml:"enabled"`
		Rebalance yamlv3.Node `yaml:"rebalance"`
	} `yaml:"moves"`
	Workloads []struct {
		Movable yamlv3.Node `yaml:"movable"`
	} `yaml:"workloads"`
}

// hasSwitch says whether the document set a Switch: only then is it read
// a second time for their spelling.
func (c *HostConfig) hasSwitch() bool {
	if c.Moves != nil {
		return true
	}
	for _, w := range c.Workloads {
		if w.Movable != nil {
			return true
		}
	}
	return false
}

// checkSwitchSpelling refuses a Switch written as anything but the bare
// words true or false. A document this reading cannot follow is left to
// the strict decoder, which says what is wrong with it.
func checkSwitchSpelling(raw []byte) error {
	var doc switchNodes
	if yamlv3.Unmarshal(raw, &doc) != nil {
		return nil
	}
	check := func(n yamlv3.Node, path string) error {
		if n.Kind == 0 || (n.Kind == yamlv3.ScalarNode && n.Tag == "!!bool" && (n.Value == "true" || n.Value == "false")) {
			return nil
		}
		v := n.Value
		if n.Kind != yamlv3.ScalarNode || len(v) > 64 {
			v = "the value"
		}
		return fieldError{path, fmt.Sprintf("%q: want true or false", v)}
	}
	if err := check(doc.Moves.Enabled, "moves.enabled"); err != nil {
		return err
	}
	if err := check(doc.Moves.Rebalance, "moves.rebalance"); err != nil {
		return err
	}
	for i, w := range doc.Workloads {
		if err := check(w.Movable, fmt.Sprintf("workloads[%d].movable", i)); err != nil {
			return err
		}
	}
	return nil
}
