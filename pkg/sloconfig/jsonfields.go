package sloconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/pkg/fieldname"
	"github.com/locus-project/locus/pkg/topology"
)

// The configs are read field by field from raw JSON, not with struct tags,
// because encoding/json matches keys case-insensitively and ignores unknown
// keys: a typo such as "minlimitPercent" must be an error naming the field.

type object map[string]json.RawMessage

// keys are an object's keys in order, so that errors come in the same
// order every time.
func keys[V any](o map[string]V) []string { return slices.Sorted(maps.Keys(o)) }

// document turns a config value into JSON. JSON is tried first for its
// precise error positions; YAML is the fallback. Blank input gives nil.
func document(raw string) (json.RawMessage, error) {
	if len(raw) > MaxValueBytes {
		return nil, fmt.Errorf("%d bytes, at most %d", len(raw), MaxValueBytes)
	}
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	var probe json.RawMessage
	jsonErr := json.Unmarshal([]byte(raw), &probe)
	if jsonErr == nil {
		return probe, nil
	}
	converted, yamlErr := yaml.YAMLToJSON([]byte(raw))
	if yamlErr == nil {
		return converted, nil
	}
	var syn *json.SyntaxError
	if errors.As(jsonErr, &syn) {
		return nil, fmt.Errorf("malformed JSON at byte %d: %v (and not valid YAML either)", syn.Offset, syn)
	}
	return nil, fmt.Errorf("malformed JSON: %v (and not valid YAML either)", jsonErr)
}

// kind names the JSON type of raw for error messages.
func kind(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// clip cuts a value from a pod or ConfigMap to 40 bytes for an error
// message, which ends up in logs and Events.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// isNull says a value is absent: missing, empty or null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

func wrongType(path string, raw json.RawMessage, want string) error {
	shown := clip(string(bytes.TrimSpace(raw)))
	return fmt.Errorf("%sgot %s %s, want %s", prefix(path), kind(raw), shown, want)
}

// prefix is "path: ", or nothing at the root of a value with no name.
func prefix(path string) string {
	if path == "" {
		return ""
	}
	return path + ": "
}

// asObject reads an object; a missing or null value gives (nil, nil).
func asObject(raw json.RawMessage, path string) (object, error) {
	if isNull(raw) {
		return nil, nil
	}
	if kind(raw) != "an object" {
		return nil, wrongType(path, raw, "an object")
	}
	var o object
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("%s%v", prefix(path), err)
	}
	return o, nil
}

func asBool(raw json.RawMessage, path string) (*bool, error) {
	if isNull(raw) {
		return nil, nil
	}
	var b bool
	if kind(raw) != "a boolean" || json.Unmarshal(raw, &b) != nil {
		return nil, wrongType(path, raw, "true or false")
	}
	return &b, nil
}

// asInt reads an integer within [lo, hi].
func asInt(raw json.RawMessage, path string, lo, hi int64) (*int64, error) {
	if isNull(raw) {
		return nil, nil
	}
	if kind(raw) != "a number" {
		return nil, wrongType(path, raw, "an integer")
	}
	lit := string(bytes.TrimSpace(raw))
	v, err := strconv.ParseInt(lit, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return nil, fmt.Errorf("%s: %s is out of range %s", path, clip(lit), rangeText(lo, hi))
	case err != nil:
		return nil, fmt.Errorf("%s: %s is not an integer", path, clip(lit))
	case v < lo || v > hi:
		return nil, fmt.Errorf("%s: %d is out of range %s", path, v, rangeText(lo, hi))
	}
	return &v, nil
}

func rangeText(lo, hi int64) string {
	if lo < 0 {
		return fmt.Sprintf("%d..%d", lo, hi)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

func asString(raw json.RawMessage, path string) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if kind(raw) != "a string" || json.Unmarshal(raw, &s) != nil {
		return "", wrongType(path, raw, "a string")
	}
	return s, nil
}

func asStrings(raw json.RawMessage, path string) ([]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if kind(raw) != "an array" || json.Unmarshal(raw, &items) != nil {
		return nil, wrongType(path, raw, "an array of strings")
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, err := asString(it, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// unknownField names a key that is not allowed at path, with the field it
// likely meant when its letter case is wrong or it is a near misspelling.
func unknownField(path, key string, known []string) error {
	if k, ok := fieldname.Closest(key, known); ok {
		return fmt.Errorf("%s: unknown field (did you mean %q?)", join(path, clipKey(key)), k)
	}
	return fmt.Errorf("%s: unknown field", join(path, clipKey(key)))
}

// clipKey keeps a field name fit for a message: a key is text from outside
// too, as long as the value allows.
func clipKey(k string) string {
	if len(k) > 40 || strings.IndexFunc(k, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		return topology.Quote(k[:min(len(k), 40)])
	}
	return k
}

// join builds a dotted field path; the root has an empty path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// maxErrors bounds the problems told of one value: hostile text with
// thousands of bad fields must not make a message as long, since it is
// copied into logs and Events.
const maxErrors = 8

// joinErrors is errors.Join of the first maxErrors problems, saying how
// many more there were.
func joinErrors(errs []error) error {
	errs = slices.DeleteFunc(slices.Clone(errs), func(err error) bool { return err == nil })
	if len(errs) > maxErrors {
		more := len(errs) - maxErrors
		errs = append(errs[:maxErrors:maxErrors], fmt.Errorf("and %d more problems not shown", more))
	}
	return errors.Join(errs...)
}
