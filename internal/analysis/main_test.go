package analysis

import (
	"fmt"
	"os"
	"testing"

	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// fixtureDir holds one fixture results directory that every test reads;
// writing it takes a second, loading it a fraction of that.
var fixtureDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "meshbench-analysis-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if _, err := resultstest.Write(dir, resultstest.Options{Seed: 1}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	fixtureDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
