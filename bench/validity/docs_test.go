package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocsQuoteEveryRow runs the bench briefly and checks that
// docs/statistics.md's measured block has a row for every row it prints
// (the interval and its design, the series, the method): a case added to
// the bench must be measured into the docs.
func TestDocsQuoteEveryRow(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulation (seconds)")
	}
	var out bytes.Buffer
	if _, err := run(&out, config{trials: 100, seed: 1}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../docs/statistics.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	begin, end := strings.Index(doc, "<!-- validity:figures:begin -->"), strings.Index(doc, "<!-- validity:figures:end -->")
	if begin < 0 || end < begin {
		t.Fatal("statistics.md has no validity:figures block")
	}
	block := doc[begin:end]
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	key := regexp.MustCompile(`^(.*?)\s+-?\d+(\.\d+)?[%x]`)
	for _, l := range strings.Split(out.String(), "\n") {
		m := key.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		k := strings.Join(strings.Fields(m[1]), " ")
		found := false
		for _, dl := range lines {
			if strings.HasPrefix(dl, k) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("statistics.md's measured block has no row %q", k)
		}
	}
}
