package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/testenv"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// counts is one package's integration tests by outcome; missing counts
// the failures that were a missing prerequisite (strict mode).
type counts struct{ passed, failed, missing, skipped int }

// outcome is one finished top-level integration test.
type outcome struct {
	pkg, test, action string
	// reason is the test's last output line before it ended: for a skip,
	// the message given to t.Skip.
	reason  string
	elapsed time.Duration
}

// summary accumulates the run's events.
type summary struct {
	byPkg    map[string]*counts
	outcomes []outcome
	// output buffers each running test's (and package's) lines, printed
	// only when it fails.
	output     map[string][]string
	pkgFailed  []string
	pkgOutputs map[string][]string
}

func newSummary() *summary {
	return &summary{byPkg: map[string]*counts{}, output: map[string][]string{}, pkgOutputs: map[string][]string{}}
}

// isIntegration reports whether name is a top-level integration test.
func isIntegration(name string) bool {
	return strings.HasPrefix(name, "TestIntegration") && !strings.Contains(name, "/")
}

// read consumes `go test -json` from r, writing a line per finished
// integration test to progress, and the output of failed tests as they
// fail.
func (s *summary) read(r io.Reader, progress io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event (go build's own output): pass it on.
			fmt.Fprintln(progress, string(line))
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			if e.Test == "" {
				s.pkgOutputs[e.Package] = append(s.pkgOutputs[e.Package], e.Output)
			} else {
				s.output[key] = append(s.output[key], e.Output)
			}
		case "pass", "fail", "skip":
			if e.Test == "" {
				if e.Action == "fail" {
					s.pkgFailed = append(s.pkgFailed, e.Package)
					fmt.Fprintf(progress, "FAIL package %s\n%s", e.Package, strings.Join(s.pkgOutputs[e.Package], ""))
				}
				delete(s.pkgOutputs, e.Package)
				continue
			}
			if e.Action == "fail" && !strings.Contains(e.Test, "/") {
				fmt.Fprintf(progress, "%s", strings.Join(s.output[key], ""))
			}
			if isIntegration(e.Test) {
				s.add(outcome{pkg: e.Package, test: e.Test, action: e.Action,
					reason:  lastLine(s.output[key]),
					elapsed: time.Duration(e.Elapsed * float64(time.Second))})
				fmt.Fprintf(progress, "--- %s %s %s (%s)\n", strings.ToUpper(e.Action), e.Package, e.Test, time.Duration(e.Elapsed*float64(time.Second)).Round(time.Millisecond))
			}
			if !strings.Contains(e.Test, "/") {
				// A top-level test's subtests end before it does.
				for k := range s.output {
					if strings.HasPrefix(k, key) {
						delete(s.output, k)
					}
				}
			}
		}
	}
	return sc.Err()
}

func (s *summary) add(o outcome) {
	c := s.byPkg[o.pkg]
	if c == nil {
		c = &counts{}
		s.byPkg[o.pkg] = c
	}
	switch o.action {
	case "pass":
		c.passed++
	case "fail":
		c.failed++
		if strings.Contains(o.reason, testenv.MissingPrefix) {
			c.missing++
		}
	case "skip":
		c.skipped++
	}
	s.outcomes = append(s.outcomes, o)
}

// lastLine is the last non-blank output line that is not go test's own
// "--- SKIP" or "=== RUN" framing.
func lastLine(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "---") || strings.HasPrefix(l, "===") {
			continue
		}
		return l
	}
	return ""
}

// report writes the per-package table and returns an error naming what
// failed, or, when strict, what skipped.
func (s *summary) report(w io.Writer, strict bool) error {
	pkgs := make([]string, 0, len(s.byPkg))
	for p := range s.byPkg {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	width := len("total")
	for _, p := range pkgs {
		width = max(width, len(p))
	}
	var total counts
	fmt.Fprintf(w, "\nintegration tests by package (ran = passed + failed; could not run = failed for a missing prerequisite):\n")
	fmt.Fprintf(w, "%-*s %4s %6s %6s %13s %7s\n", width, "package", "ran", "passed", "failed", "could not run", "skipped")
	row := func(name string, c counts) {
		fmt.Fprintf(w, "%-*s %4d %6d %6d %13d %7d\n", width, name, c.passed+c.failed, c.passed, c.failed, c.missing, c.skipped)
	}
	for _, p := range pkgs {
		c := s.byPkg[p]
		row(p, *c)
		total.passed += c.passed
		total.failed += c.failed
		total.missing += c.missing
		total.skipped += c.skipped
	}
	row("total", total)
	var problems []string
	for _, o := range s.outcomes {
		switch {
		case o.action == "fail" && strings.Contains(o.reason, testenv.MissingPrefix):
			problems = append(problems, fmt.Sprintf("COULD NOT RUN %s %s: %s", o.pkg, o.test, o.reason))
		case o.action == "fail":
			problems = append(problems, fmt.Sprintf("FAILED  %s %s: %s", o.pkg, o.test, o.reason))
		case o.action == "skip" && strict:
			problems = append(problems, fmt.Sprintf("SKIPPED %s %s: %s", o.pkg, o.test, o.reason))
		}
	}
	for _, p := range s.pkgFailed {
		if s.byPkg[p] == nil || s.byPkg[p].failed == 0 {
			problems = append(problems, "FAILED  package "+p+" (build, TestMain or a non-integration test)")
		}
	}
	if len(pkgs) == 0 {
		problems = append(problems, "no integration test ran at all")
	}
	if len(problems) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s\n", strings.Join(problems, "\n"))
	if strict && total.skipped > 0 {
		fmt.Fprintf(w, "\nMESHBENCH_REQUIRE_INTEGRATION=1: every integration test must run; install what the skipped ones name (scripts/setup.sh).\n")
	}
	return fmt.Errorf("%d integration test(s) or package(s) did not pass", len(problems))
}
