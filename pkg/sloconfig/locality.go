package locality

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/pkg/topology"
)

// AnnotationKey turns memory locality on or off for one pod.
const AnnotationKey = "koordinator.sh/memoryLocality"

// ConfigKeyResourceQoS is the key of kube-system/ack-slo-config that holds
// the per-class settings under clusterStrategy.<class>.memoryLocality.
const ConfigKeyResourceQoS = "resource-qos-config"

// Policy is what memory locality does for a pod.
type Policy string

const (
	// PolicyBestEffort migrates remote memory to the local nodes now, and
	// again every MigrateIntervalMinutes when that is above zero.
	PolicyBestEffort Policy = "bestEffort"
	// PolicyNone turns memory locality off.
	PolicyNone Policy = "none"
)

// Settings are one memoryLocality object.
type Settings struct {
	Policy Policy `json:"policy"`
	// MigrateIntervalMinutes: 0 migrates once; N > 0 migrates now and then
	// at most every N minutes. The seed's "none" is read as Policy none.
	MigrateIntervalMinutes int `json:"migrateIntervalMinutes,omitempty"`
}

// Interval is the time between migrations, 0 for once.
func (s Settings) Interval() time.Duration {
	return time.Duration(s.MigrateIntervalMinutes) * time.Minute
}

// Due says whether a migration should run now: never under policy none;
// always when none ran yet; then only with an interval, once it has passed.
func (s Settings) Due(ran bool, last, now time.Time) bool {
	switch {
	case s.Policy != PolicyBestEffort:
		return false
	case !ran:
		return true
	case s.MigrateIntervalMinutes == 0:
		return false
	}
	return !now.Before(last.Add(s.Interval()))
}

// ParseAnnotation reads the value of koordinator.sh/memoryLocality, e.g.
// {"policy": "bestEffort", "migrateIntervalMinutes": 10}. The policy is
// matched without regard to case; errors name the field.
func ParseAnnotation(value string) (Settings, error) {
	var o map[string]json.RawMessage
	if err := json.Unmarshal([]byte(value), &o); err != nil || o == nil {
		return Settings{}, fmt.Errorf("%s: %s is not a JSON object", AnnotationKey, topology.Quote(value))
	}
	return parseSettings(o, AnnotationKey)
}

// ParseClassConfig reads memoryLocality of every QoS class in the value of
// resource-qos-config (JSON or YAML), keyed by class ("lsClass", "beClass",
// ...). Every other key in the document belongs to other features and is
// ignored; a class without memoryLocality is absent from the result.
func ParseClassConfig(raw string) (map[string]Settings, error) {
	out := map[string]Settings{}
	if strings.TrimSpace(raw) == "" {
		return out, nil
	}
	doc, err := yaml.YAMLToJSON([]byte(raw)) // JSON is YAML too
	if err != nil {
		// The parser's text can quote a whole nested key: cut it.
		return nil, fmt.Errorf("%s: not JSON or YAML: %s", ConfigKeyResourceQoS, topology.Quote(err.Error()))
	}
	var root struct {
		ClusterStrategy map[string]json.RawMessage `json:"clusterStrategy"`
	}
	if err := strictObject(doc, &root); err != nil {
		return nil, fmt.Errorf("%s: %v", ConfigKeyResourceQoS, err)
	}
	var errs []error
	for _, class := range sortedKeys(root.ClusterStrategy) {
		path := "clusterStrategy." + class
		var c map[string]json.RawMessage
		if err := json.Unmarshal(root.ClusterStrategy[class], &c); err != nil {
			continue // not a class object (another feature's setting)
		}
		raw, ok := c["memoryLocality"]
		if !ok || isNull(raw) {
			continue
		}
		var o map[string]json.RawMessage
		if err := json.Unmarshal(raw, &o); err != nil || o == nil {
			errs = append(errs, fmt.Errorf("%s.memoryLocality: want an object", path))
			continue
		}
		s, err := parseSettings(o, path+".memoryLocality")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[class] = s
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

func parseSettings(o map[string]json.RawMessage, path string) (Settings, error) {
	var s Settings
	var errs []error
	intervalNone := false
	for _, key := range sortedKeys(o) {
		raw := o[key]
		switch key {
		case "policy":
			var p string
			if err := json.Unmarshal(raw, &p); err != nil {
				errs = append(errs, fmt.Errorf("%s.policy: want a string, got %s", path, topology.Quote(string(raw))))
				continue
			}
			switch {
			case strings.EqualFold(p, string(PolicyBestEffort)):
				s.Policy = PolicyBestEffort
			case strings.EqualFold(p, string(PolicyNone)):
				s.Policy = PolicyNone
			default:
				errs = append(errs, fmt.Errorf("%s.policy: %s is not bestEffort or none", path, topology.Quote(p)))
			}
		case "migrateIntervalMinutes":
			var word string
			if json.Unmarshal(raw, &word) == nil && strings.EqualFold(strings.TrimSpace(word), "none") {
				intervalNone = true // the seed's "none": off, whatever the policy says
				continue
			}
			var f float64
			if err := json.Unmarshal(raw, &f); err != nil || f != math.Trunc(f) || f < 0 || f > 1e6 {
				errs = append(errs, fmt.Errorf(`%s.migrateIntervalMinutes: want a whole number of minutes from 0 to 1000000, or "none", got %s`, path, topology.Quote(string(raw))))
				continue
			}
			s.MigrateIntervalMinutes = int(f)
		default:
			errs = append(errs, fmt.Errorf("%s: unknown field %s (known: policy, migrateIntervalMinutes)", path, topology.Quote(key)))
		}
	}
	if _, ok := o["policy"]; !ok && !intervalNone {
		errs = append(errs, fmt.Errorf("%s.policy: missing (want bestEffort or none)", path))
	}
	if err := errors.Join(errs...); err != nil {
		return Settings{}, err
	}
	if intervalNone {
		s = Settings{Policy: PolicyNone}
	}
	return s, nil
}

// Resolve picks the settings in force for a pod: its own annotation wins
// over its class's config; with neither, memory locality is off.
func Resolve(pod *Settings, class *Settings) Settings {
	switch {
	case pod != nil:
		return *pod
	case class != nil:
		return *class
	}
	return Settings{Policy: PolicyNone}
}

// strictObject decodes JSON that must be an object into v.
func strictObject(doc []byte, v any) error {
	if t := bytes.TrimSpace(doc); len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("want a JSON object")
	}
	return json.Unmarshal(doc, v)
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
