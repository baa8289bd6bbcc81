package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// studyFlag is a built-in study the docs run: "--study NAME".
var studyFlag = regexp.MustCompile(`--study ([a-z][a-z0-9-]*)`)

// TestStudiesListsWhatRunRuns: `meshbench studies` lists every built-in
// study `meshbench run --study NAME` runs, the control-plane study among
// them (issue 44: it was left out), and each study the README and docs
// run by name is one it lists.
func TestStudiesListsWhatRunRuns(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out}, []string{"studies", "-o", "json"}); err != nil {
		t.Fatal(err)
	}
	var listed []struct{ Name string }
	if err := json.Unmarshal(out.Bytes(), &listed); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var names []string
	for _, l := range listed {
		names = append(names, l.Name)
		if code, stderr := runMain(t, "run", "--study", l.Name, "--validate"); code != ExitOK {
			t.Errorf("studies lists %s, but run --study %s --validate exits %d: %s", l.Name, l.Name, code, stderr)
		}
	}
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	run := map[string]string{}
	for _, p := range append(docs, "../../README.md") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range studyFlag.FindAllStringSubmatch(string(b), -1) {
			run[m[1]] = p
		}
	}
	if run[controlPlaneStudy] == "" {
		t.Fatalf("no doc runs --study %s: is the pattern blind?", controlPlaneStudy)
	}
	for name, doc := range run {
		if _, ok := controlPlaneInfo(); name == controlPlaneStudy && !ok {
			continue // a lab-only meshbench runs no control-plane study
		}
		if !slices.Contains(names, name) {
			t.Errorf("%s runs --study %s, which meshbench studies does not list (it lists %v)", doc, name, names)
		}
	}
}
