package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"

	"github.com/locus-project/locus/pkg/boundedread"
	"github.com/locus-project/locus/pkg/topology"
)

// flagFileError says what went wrong with the file a flag names, naming both.
// A file over its cap is the wrong file for the flag (exit 2); one that
// cannot be opened or read is a failure of the environment (exit 1), as
// elsewhere.
func flagFileError(flag, path string, err error) error {
	var tl *boundedread.TooLargeError
	if errors.As(err, &tl) {
		return usagef("%s %s: larger than %s: not a file this flag reads", flag, path, boundedread.Size(tl.Limit))
	}
	return fmt.Errorf("%s: %w", flag, err)
}

// loadTopologyFile reads a machine written by `locus topology -o json`.
func loadTopologyFile(flag, path string) (*topology.Topology, error) {
	t, err := topology.LoadJSONFile(path)
	var pe *fs.PathError
	var tl *boundedread.TooLargeError
	switch {
	case err == nil:
		return t, nil
	case errors.As(err, &pe), errors.As(err, &tl):
		return nil, flagFileError(flag, path, err)
	}
	return nil, usagef("%s %s: not a machine as `locus topology -o json` writes it: %s", flag, path, jsonProblem(err, path))
}

// jsonProblem says what is wrong with a document in the reader's terms: where
// it stops being JSON, which field holds the wrong kind of value, or what
// the topology's own checks refused.
func jsonProblem(err error, path string) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("it is not JSON (byte %d)", syntax.Offset)
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Sprintf("field %s holds a JSON %s, want %s", typ.Field, typ.Value, jsonKind(typ.Type))
	case errors.As(err, &typ):
		return fmt.Sprintf("it holds a JSON %s, want an object", typ.Value)
	}
	return strings.TrimPrefix(strings.TrimPrefix(err.Error(), path+": "), "topology json: ")
}

// jsonKind names what a Go type reads from JSON, as the file's author sees it.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	}
	return "a number"
}
