package study

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/meshbench/meshbench/internal/topology"
)

// A study file is checked against the Study type on its YAML node tree
// before it is decoded, so that every unknown field, wrong type and bad
// duration is reported at once, each with its field path and line; the
// JSON decoder that sigs.k8s.io/yaml uses knows neither, and stops at the
// first.

// place is where a field's value starts in the file.
type place struct{ line, column int }

// fileMap is what checking a study file learned: where each field path
// is, and what is wrong.
type fileMap struct {
	places map[string]place
	errs   FieldErrors
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// checkYAML checks data against the Study type. A YAML syntax error is
// returned as such; field errors are collected in the map.
func checkYAML(data []byte) (*fileMap, error) {
	m := &fileMap{places: map[string]place{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, FieldErrors{topology.SyntaxError(data, err)}
	}
	if doc.Kind == 0 {
		return m, nil // an empty file: the header check says what is missing
	}
	m.check(&doc, reflect.TypeFor[Study](), "")
	return m, nil
}

// at places an error at node n.
func (m *fileMap) at(n *yaml.Node, path, format string, args ...any) {
	m.errs = append(m.errs, &FieldError{Line: n.Line, Column: n.Column, Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (m *fileMap) check(n *yaml.Node, t reflect.Type, path string) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			m.check(n.Content[0], t, path)
		}
		return
	case yaml.AliasNode:
		m.check(n.Alias, t, path)
		return
	}
	if path != "" {
		m.places[path] = place{n.Line, n.Column}
	}
	if n.Tag == "!!null" {
		return // absent: defaults and validation handle it
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		m.checkStruct(n, t, path)
	case reflect.PointerTo(t).Implements(unmarshalerType):
		m.checkLeaf(n, t, path)
	case t.Kind() == reflect.Struct:
		m.at(n, path, "want a mapping (field: value), got %s", describe(n))
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			m.at(n, path, "want a list, got %s", describe(n))
			return
		}
		for i, c := range n.Content {
			m.check(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	case t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			m.at(n, path, "want a mapping, got %s", describe(n))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			m.check(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value))
		}
	default:
		m.checkLeaf(n, t, path)
	}
}

// checkStruct checks a mapping's keys against t's fields (by json tag,
// with embedded structs inlined, as encoding/json reads them).
func (m *fileMap) checkStruct(n *yaml.Node, t reflect.Type, path string) {
	fields := map[string]reflect.Type{}
	jsonFields(t, fields)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := join(path, k.Value)
		ft, ok := fields[k.Value]
		switch {
		case !ok:
			msg := "unknown field"
			if s := closest(k.Value, sortedKeys(fields)); s != "" {
				msg += fmt.Sprintf("; did you mean %s?", s)
			} else {
				msg += "; known: " + strings.Join(sortedKeys(fields), ", ")
			}
			m.at(k, p, "%s", msg)
		case seen[k.Value]:
			m.at(k, p, "given twice")
		default:
			seen[k.Value] = true
			m.check(v, ft, p)
		}
	}
}

// checkLeaf decodes one value as encoding/json would decode it into t,
// and says what was wanted when that fails.
func (m *fileMap) checkLeaf(n *yaml.Node, t reflect.Type, path string) {
	var v any
	if err := n.Decode(&v); err != nil {
		m.at(n, path, "%v", err)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		m.at(n, path, "want %s, got %s", want(t), describe(n))
		return
	}
	err = json.Unmarshal(b, reflect.New(t).Interface())
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
	case errors.As(err, &typeErr):
		m.at(n, path, "want %s, got %s", want(t), describe(n))
	default:
		m.at(n, path, "%v", err)
	}
}

// jsonFields adds t's fields by their json names to fields.
func jsonFields(t reflect.Type, fields map[string]reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-", !f.IsExported() && !f.Anonymous:
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			jsonFields(f.Type, fields)
		case tag != "":
			fields[tag] = f.Type
		default:
			fields[f.Name] = f.Type
		}
	}
}

// want says in words what a value of type t looks like.
func want(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return t.String()
}

// describe says what a YAML node holds, for "want X, got Y".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.Tag {
	case "!!str":
		return fmt.Sprintf("the string %q", n.Value)
	case "!!int", "!!float":
		return "the number " + n.Value
	case "!!bool":
		return n.Value
	}
	return n.Value
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys(m map[string]reflect.Type) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// closest is the known name (a field, a profile) nearest to name by edit
// distance, ignoring case, if it is near enough to be a typo: at most 2
// edits, touching under half of it.
func closest(name string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < bestD && d*2 < len(k) {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// place gives e the place of its path, or of the nearest enclosing field
// the file holds (a required field left out is placed at its parent).
func (m *fileMap) place(e *FieldError) {
	if e.Line > 0 {
		return
	}
	for p := e.Path; p != ""; p = parentPath(p) {
		if pl, ok := m.places[p]; ok {
			e.Line, e.Column = pl.line, pl.column
			return
		}
	}
}

// parentPath drops a path's last element: "a.b[2]" -> "a.b" -> "a".
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}
