package study

import (
	"fmt"
	"strings"

	"github.com/meshbench/meshbench/internal/topology"
)

// FieldError is one error in a study file: the field at fault as a path
// ("meshes[1].profile"), its place in the file when known (a required
// field left out is placed at its parent), and what is wrong with it. It
// reads "file:line:col: path: message", as compilers do, so that an
// editor can jump to it; a graph file's errors are the same.
type FieldError = topology.FieldError

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
