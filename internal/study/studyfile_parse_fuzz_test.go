package study

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshbench/meshbench/internal/topology"
)

// FuzzParse feeds the study-file parser arbitrary files, seeded with the
// valid and invalid study files of testdata. It must never panic, and
// every error in the file's content must be a field error that says
// something; a study it accepts must name meshes and a graph.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*-*.yaml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	// Only built-in graphs: a fuzzed file must not read the disk.
	builtin := func(name string) (*topology.Graph, error) { return topology.Builtin(name) }
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parse(data, builtin, PlatformOverride{})
		if err != nil {
			var fe FieldErrors
			if errors.As(err, &fe) {
				for _, e := range fe {
					if e.Msg == "" {
						t.Fatalf("field error without a message: %+v", e)
					}
				}
			}
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if s.Graph == nil || len(s.Meshes) == 0 {
			t.Fatalf("accepted a study without a graph or meshes: %+v", s)
		}
	})
}
