package report

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixtureDir is one fixture results directory every test reads: a
// closed loop. openFixtureDir is the same study as an open loop, whose
// overheads are added latencies.
var fixtureDir, openFixtureDir string

// openRate is the open-loop fixture's offered rate, in req/s.
const openRate = 100

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "meshbench-report-test-")
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
	open, err := os.MkdirTemp("", "meshbench-report-test-open-")
	if err == nil {
		_, err = resultstest.Write(open, resultstest.Options{Seed: 1, Rate: openRate})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.RemoveAll(open)
		os.Exit(1)
	}
	openFixtureDir = open
	code := m.Run()
	os.RemoveAll(dir)
	os.RemoveAll(open)
	os.Exit(code)
}

// loadOpenFixture is the open-loop fixture (openFixtureDir).
func loadOpenFixture(t *testing.T) *analysis.Dataset {
	t.Helper()
	d, err := analysis.Load(openFixtureDir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func loadFixture(t *testing.T) *analysis.Dataset {
	t.Helper()
	d, err := analysis.Load(fixtureDir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		lg, lw := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := range min(len(lg), len(lw)) {
			if !bytes.Equal(lg[i], lw[i]) {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(run go test -update if the change is intended)", name, i+1, lg[i], lw[i])
			}
		}
		t.Fatalf("%s differs in length: %d lines, want %d", name, len(lg), len(lw))
	}
}
