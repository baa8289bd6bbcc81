package topology

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// FieldError is an error in a graph (or in a study, which shares the
// type): the field at fault as a path ("services[2].script[0].call.service"),
// what is wrong, and where the field is in the file, when it was read from
// one.
type FieldError struct {
	Path, Msg string
	// File names the graph's file, when known.
	File string
	// Line and Column are 1-based; zero when unknown (a graph built in
	// code, or a field left out and defaulted).
	Line, Column int
}

// Error reads "file:line:col: path: message", as compilers do.
func (e *FieldError) Error() string {
	var loc string
	switch {
	case e.File != "" && e.Line > 0:
		loc = fmt.Sprintf("%s:%d:%d: ", e.File, e.Line, e.Column)
	case e.File != "":
		loc = e.File + ": "
	case e.Line > 0:
		loc = fmt.Sprintf("line %d:%d: ", e.Line, e.Column)
	}
	if e.Path == "" {
		return loc + e.Msg
	}
	return loc + e.Path + ": " + e.Msg
}

// fieldError names the field at fault, as "services[2].script[0].call.service".
func fieldError(path, format string, args ...any) error {
	return &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// place sets e's line and column to those of its field in data, or of
// the nearest enclosing field the file has.
func (e *FieldError) place(data []byte) {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return
	}
	n := doc.Content[0]
	e.Line, e.Column = n.Line, n.Column
	for _, part := range strings.Split(e.Path, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if n = child(n, name); n == nil {
			return
		}
		e.Line, e.Column = n.Line, n.Column
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			i, err := strconv.Atoi(idx)
			if n.Kind != yaml.SequenceNode || err != nil || i < 0 || i >= len(n.Content) {
				return
			}
			n = n.Content[i]
			e.Line, e.Column = n.Line, n.Column
			rest = strings.TrimPrefix(after, "[")
		}
	}
}

// child is the value of key in mapping n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// yamlLine is the place the YAML library gives a syntax error: a line,
// and for an error found while parsing a block the line the block
// starts on, not the one at fault.
var yamlLine = regexp.MustCompile(`^yaml: (?:line \d+: )?`)

// SyntaxError places err, the YAML library's syntax error in data, at a
// line and column. The line is where the file stops being YAML: the first
// whose lines up to it fail as the whole file does (found by bisection,
// so a long file costs a few parses). The column is where that line's
// content starts, which for an indentation error (the commonest) is the
// indentation at fault.
func SyntaxError(data []byte, err error) *FieldError {
	msg := yamlLine.ReplaceAllString(err.Error(), "")
	fails := func(lines []string) bool {
		var n yaml.Node
		e := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &n)
		return e != nil && yamlLine.ReplaceAllString(e.Error(), "") == msg
	}
	lines := strings.Split(string(data), "\n")
	lo, hi := 1, len(lines)
	for lo < hi {
		if mid := (lo + hi) / 2; fails(lines[:mid]) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	line := lines[lo-1]
	if slices.Contains(indentationErrors, msg) {
		msg += "; is the line indented as the keys beside it are?"
	}
	return &FieldError{Line: lo, Column: len(line) - len(strings.TrimLeft(line, " ")) + 1, Msg: "YAML syntax: " + msg}
}

// indentationErrors are the YAML library's words for a line indented
// deeper than its siblings, or between two levels.
var indentationErrors = []string{"mapping values are not allowed in this context", "did not find expected key"}
