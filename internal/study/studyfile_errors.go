package study

import (
	"fmt"
	"strings"
)

// FieldError is one error in a study file: the field at fault as a path
// ("meshes[1].profile"), its place in the file when known, and what is
// wrong with it.
type FieldError struct {
	// File is the study file's path, when it was read from one.
	File string
	// Line and Column are 1-based; zero when the field is not in the
	// file (a required field left out is placed at its parent).
	Line, Column int
	Path         string
	Msg          string
}

// Error reads "file:line:col: path: message", as compilers do, so that
// an editor can jump to it.
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

// fieldError names the field at fault, as "meshes[1].profile".
func fieldError(path, format string, args ...any) error {
	return &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// FieldErrors is every error found in one study file, in file order.
type FieldErrors []*FieldError

func (es FieldErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// inFile names the file in every error.
func (es FieldErrors) inFile(file string) {
	for _, e := range es {
		e.File = file
	}
}
