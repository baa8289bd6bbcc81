package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// leafCommands lists every runnable command meshbench has, as the words
// that name it, from the same tree Run builds.
func leafCommands() [][]string {
	root := &cobra.Command{Use: "meshbench"}
	s := Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	g := &globals{}
	root.AddCommand(newLoadCmd(s, g), newAppCmd(s, g), newLabCmd(s, g), newKubernetesCmd(s, g), newImageCmd(s),
		newDoctorCmd(s, g), newRunCmd(s, g), newStudiesCmd(s, g), newReportCmd(s, g), newCostCmd(s, g),
		newProfileCmd(s, g), newPredictCmd(s, g), newXDSLoadCmd(s, g), newCompareCmd(s, g), newVersionCmd(s))
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.Runnable() && c != root {
			out = append(out, path)
		}
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(root, nil)
	return out
}

func runMain(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return code, errOut.String()
}

// TestBadOutputEveryCommand: a -o no command offers is the same usage
// error, exit 2, from every command, refused before the command runs.
func TestBadOutputEveryCommand(t *testing.T) {
	cmds := leafCommands()
	if len(cmds) < 15 {
		t.Fatalf("found only %d commands: %v", len(cmds), cmds)
	}
	for _, c := range cmds {
		args := append(append([]string(nil), c...), "-o", "yaml")
		code, stderr := runMain(t, args...)
		if code != ExitUsage {
			t.Errorf("meshbench %s: exit %d, want %d (usage); stderr %q", strings.Join(args, " "), code, ExitUsage, stderr)
		}
	}
}

// TestUnknownStudyOrFile: a built-in study that does not exist, or a file
// or directory the command line names that does not exist, is exit 2
// from every command that takes one.
func TestUnknownStudyOrFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nosuch")
	cases := [][]string{
		{"run", "--study", "nosuch"},
		{"run", "--study", "nosuch", "--plan"},
		{"run", missing},
		{"run", "--validate", missing},
		{"run", "--resume", missing},
		{"doctor", "--study", "nosuch"},
		{"doctor", missing},
		{"kubernetes", "rbac", "--study", "nosuch", "--user", "u"},
		{"kubernetes", "rbac", missing, "--user", "u"},
		{"report", missing},
		{"compare", missing, missing},
		{"cost", "--results", missing},
		{"cost", "--usage", missing},
		{"cost", "--catalog", missing},
		{"profile", missing},
		{"predict", "--profile", missing, "--graph", "tiered", "--rate", "1"},
		{"load", "merge", missing},
		{"lab", "up", "-f", missing},
	}
	for _, args := range cases {
		code, stderr := runMain(t, args...)
		if code != ExitUsage {
			t.Errorf("meshbench %s: exit %d, want %d (usage); stderr %q", strings.Join(args, " "), code, ExitUsage, stderr)
		}
		if !strings.Contains(stderr, "nosuch") {
			t.Errorf("meshbench %s: stderr %q does not name what is missing", strings.Join(args, " "), stderr)
		}
	}
}

// TestExitCodesDocumented: --help and the README's "Exit codes" table say
// what exitCodes says, code for code.
func TestExitCodesDocumented(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out}, []string{"--help"}); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exitCodes {
		help := fmt.Sprintf("%3d  %s", e.code, strings.ReplaceAll(e.meaning, "`", ""))
		if !strings.Contains(out.String(), help) {
			t.Errorf("--help lacks %q", help)
		}
		row := fmt.Sprintf("| %d | %s |", e.code, e.meaning)
		if !strings.Contains(string(readme), row) {
			t.Errorf("README.md's Exit codes table lacks %q", row)
		}
	}
}
