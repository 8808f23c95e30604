package sloconfig

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/locus-project/locus/pkg/topology"
)

// LocalityPolicy is what memory locality does for a workload.
type LocalityPolicy string

const (
	// LocalityBestEffort migrates remote memory to the local nodes now, and
	// again every MigrateIntervalMinutes when that is above zero.
	LocalityBestEffort LocalityPolicy = "bestEffort"
	// LocalityNone turns memory locality off.
	LocalityNone LocalityPolicy = "none"
)

// Locality is one memoryLocality object: a class's section of
// resource-qos-config, or a pod's koordinator.sh/memoryLocality annotation.
type Locality struct {
	Policy LocalityPolicy `json:"policy"`
	// MigrateIntervalMinutes: 0 migrates once; N > 0 migrates now and then
	// at most every N minutes. The seed's "none" is read as policy none.
	MigrateIntervalMinutes int `json:"migrateIntervalMinutes,omitempty"`
}

// Interval is the time between migrations, 0 for once.
func (s Locality) Interval() time.Duration {
	return time.Duration(s.MigrateIntervalMinutes) * time.Minute
}

// Due says whether a migration should run now: never under policy none;
// always when none ran yet; then only with an interval, once it has passed.
func (s Locality) Due(ran bool, last, now time.Time) bool {
	switch {
	case s.Policy != LocalityBestEffort:
		return false
	case !ran:
		return true
	case s.MigrateIntervalMinutes == 0:
		return false
	}
	return !now.Before(last.Add(s.Interval()))
}

// ParseLocalityAnnotation reads the value of a memoryLocality annotation,
// e.g. {"policy": "bestEffort", "migrateIntervalMinutes": 10}; path (the
// annotation's key) prefixes the field names in errors. The policy is
// matched without regard to case.
func ParseLocalityAnnotation(value, path string) (Locality, error) {
	if len(value) > MaxAnnotationBytes {
		return Locality{}, fmt.Errorf("%s: %d bytes, at most %d", path, len(value), MaxAnnotationBytes)
	}
	var o map[string]json.RawMessage
	if err := json.Unmarshal([]byte(value), &o); err != nil || o == nil {
		return Locality{}, fmt.Errorf("%s: %s is not a JSON object", path, topology.Quote(value))
	}
	return parseLocality(o, path)
}

// parseLocalities reads the memoryLocality section of every class of a
// strategy object (clusterStrategy, or a nodeStrategies entry merged over
// it), keyed by class ("lsClass", "beClass", ...). Every other key belongs
// to other features and is skipped; a class without memoryLocality is
// absent from the result.
func parseLocalities(strategy object, path string) (map[string]Locality, error) {
	out := map[string]Locality{}
	var errs []error
	for _, class := range keys(strategy) {
		at := path + "." + class
		var c map[string]json.RawMessage
		if err := json.Unmarshal(strategy[class], &c); err != nil {
			continue // not a class object (another feature's setting)
		}
		raw, ok := c["memoryLocality"]
		if !ok || isNull(raw) {
			continue
		}
		var o map[string]json.RawMessage
		if err := json.Unmarshal(raw, &o); err != nil || o == nil {
			errs = append(errs, fmt.Errorf("%s.memoryLocality: want an object", at))
			continue
		}
		s, err := parseLocality(o, at+".memoryLocality")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[class] = s
	}
	if err := joinErrors(errs); err != nil {
		return nil, err
	}
	return out, nil
}

func parseLocality(o map[string]json.RawMessage, path string) (Locality, error) {
	var s Locality
	var errs []error
	intervalNone := false
	for _, key := range keys(o) {
		raw := o[key]
		switch key {
		case "policy":
			var p string
			if err := json.Unmarshal(raw, &p); err != nil {
				errs = append(errs, fmt.Errorf("%s.policy: want a string, got %s", path, topology.Quote(string(raw))))
				continue
			}
			switch {
			case strings.EqualFold(p, string(LocalityBestEffort)):
				s.Policy = LocalityBestEffort
			case strings.EqualFold(p, string(LocalityNone)):
				s.Policy = LocalityNone
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
	if err := joinErrors(errs); err != nil {
		return Locality{}, err
	}
	if intervalNone {
		s = Locality{Policy: LocalityNone}
	}
	return s, nil
}

// ResolveLocality picks the settings in force for a workload: its own
// annotation wins over its class's section; with neither, memory locality
// is off.
func ResolveLocality(pod *Locality, class *Locality) Locality {
	switch {
	case pod != nil:
		return *pod
	case class != nil:
		return *class
	}
	return Locality{Policy: LocalityNone}
}
