package hostconfig

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/pkg/fieldname"
	"github.com/locus-project/locus/pkg/quantity"
)

// fieldError is a validation error at a field path of the document.
type fieldError struct{ path, msg string }

func (e fieldError) Error() string { return e.path + ": " + e.msg }

// checkFields finds keys the HostConfig does not have, anywhere in the
// document, and names each by its path (workloads[2].resoures) with the
// field it likely meant. The strict decoder only says "unknown field".
func checkFields(raw []byte) error {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(js, &doc); err != nil {
		return err
	}
	return walkFields(doc, reflect.TypeFor[HostConfig](), "")
}

var (
	rawMessage   = reflect.TypeFor[json.RawMessage]()
	quantityType = reflect.TypeFor[resource.Quantity]()
)

func walkFields(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == switchType {
		return checkSwitch(v, path)
	}
	if text, ok := v.(string); ok && t == quantityType {
		// Checked here too, so that the error names the field's path.
		if _, err := quantity.Parse(text); err != nil {
			return fieldError{path, err.Error()}
		}
		return nil
	}
	switch val := v.(type) {
	case []any:
		if t.Kind() != reflect.Slice || t == rawMessage {
			return nil
		}
		for i, item := range val {
			if err := walkFields(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case map[string]any:
		fields := jsonFields(t)
		if fields == nil {
			return nil // a map (labels) or a type read elsewhere (resourceQOSConfig)
		}
		known := make([]string, 0, len(fields))
		for name := range fields {
			known = append(known, name)
		}
		for _, key := range slices.Sorted(maps.Keys(val)) {
			item := val[key]
			at := strings.TrimPrefix(path+"."+key, ".")
			ft, ok := fields[key]
			if !ok {
				if best, ok := fieldname.Closest(key, known); ok {
					return fieldError{at, fmt.Sprintf("unknown field (did you mean %q?)", best)}
				}
				return fieldError{at, "unknown field"}
			}
			if err := walkFields(item, ft, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields maps the JSON names of a struct type's fields to their types;
// nil for anything but a struct of this package.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeFor[HostConfig]().PkgPath() {
		return nil
	}
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out[name] = f.Type
		}
	}
	return out
}
