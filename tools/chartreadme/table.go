package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// A row is one value of the chart: its dotted path, its type as the schema
// says, its default as values.yaml holds it, and its description, the
// comment above it in values.yaml.
type row struct {
	path, typ, def, desc string
}

// schema is the part of a JSON schema the table reads.
type schema struct {
	Type        any                `json:"type"`
	Enum        []any              `json:"enum"`
	Ref         string             `json:"$ref"`
	Description string             `json:"description"`
	Properties  map[string]*schema `json:"properties"`
	Definitions map[string]*schema `json:"definitions"`
}

// Bounds on the input: the chart's own files, but a bound keeps a mistake
// (a values.yaml made huge by a bad merge) from becoming a huge README.
const (
	maxInput = 1 << 20
	maxRows  = 1000
)

// rows walks values.yaml beside the schema: a mapping the schema describes
// property by property is descended into (and gets a row of its own when
// it has a comment); anything else is one row.
func rows(values, schemaJSON []byte) ([]row, error) {
	if len(values) > maxInput || len(schemaJSON) > maxInput {
		return nil, fmt.Errorf("values.yaml (%d bytes) or values.schema.json (%d bytes) is over %d bytes", len(values), len(schemaJSON), maxInput)
	}
	var root schema
	if err := json.Unmarshal(schemaJSON, &root); err != nil {
		return nil, fmt.Errorf("values.schema.json: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(values, &doc); err != nil {
		return nil, fmt.Errorf("values.yaml: %w", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("values.yaml: not a mapping")
	}
	w := walker{defs: root.Definitions}
	if err := w.mapping("", doc.Content[0], &root); err != nil {
		return nil, err
	}
	return w.out, nil
}

type walker struct {
	defs map[string]*schema
	out  []row
}

func (w *walker) resolve(s *schema) *schema {
	if s != nil && strings.HasPrefix(s.Ref, "#/definitions/") {
		if d := w.defs[strings.TrimPrefix(s.Ref, "#/definitions/")]; d != nil {
			return d
		}
	}
	return s
}

func (w *walker) mapping(prefix string, n *yaml.Node, s *schema) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		path := prefix + key.Value
		var ks *schema
		if s != nil {
			ks = w.resolve(s.Properties[key.Value])
		}
		if ks == nil {
			return fmt.Errorf("values.yaml: %s is not in values.schema.json", path)
		}
		if len(w.out) >= maxRows {
			return fmt.Errorf("values.yaml: more than %d values", maxRows)
		}
		desc := comment(key.HeadComment)
		if desc == "" {
			desc = ks.Description
		}
		if val.Kind == yaml.MappingNode && len(val.Content) > 0 && len(ks.Properties) > 0 {
			if desc != "" {
				w.out = append(w.out, row{path: path, typ: "object", desc: desc})
			}
			if err := w.mapping(path+".", val, ks); err != nil {
				return err
			}
			continue
		}
		def, err := compact(val)
		if err != nil {
			return fmt.Errorf("values.yaml: %s: %w", path, err)
		}
		w.out = append(w.out, row{path: path, typ: typeOf(ks), def: def, desc: desc})
	}
	return nil
}

// comment is a values.yaml comment as one line of prose.
func comment(c string) string {
	var words []string
	for _, l := range strings.Split(c, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "#"))
		if l != "" {
			words = append(words, l)
		}
	}
	return strings.Join(words, " ")
}

func typeOf(s *schema) string {
	if len(s.Enum) > 0 {
		var vs []string
		for _, v := range s.Enum {
			b, _ := json.Marshal(v)
			vs = append(vs, string(b))
		}
		return "one of " + strings.Join(vs, ", ")
	}
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		var ts []string
		for _, v := range t {
			ts = append(ts, fmt.Sprint(v))
		}
		return strings.Join(ts, " or ")
	}
	return "any"
}

// compact is a default as one line of JSON.
func compact(n *yaml.Node) (string, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// table is the rows as a Markdown table.
func table(rs []row) string {
	var b strings.Builder
	b.WriteString("| value | type | default | description |\n|---|---|---|---|\n")
	// A pipe would end the cell; <registry> would be taken for an HTML tag.
	cell := strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace
	for _, r := range rs {
		def := ""
		if r.def != "" {
			def = "`" + cell(r.def) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.path, cell(r.typ), def, cell(r.desc))
	}
	return b.String()
}
