package study

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestParseRejectsAliasBomb gives Parse a study whose sweep values are a
// billion laughs (nine levels of ten aliases each, 10^9 strings once
// expanded) inside a valid field: it is refused, within a second, by the
// YAML library's limit on alias expansion, before anything is decoded.
func TestParseRejectsAliasBomb(t *testing.T) {
	t.Parallel()
	// Every anchor is defined inside the one field, sweeps[0].values.
	var b strings.Builder
	b.WriteString("apiVersion: meshbench.dev/v1alpha1\nkind: Study\nname: bomb\nworkload: {graph: small-graph.yaml}\nmeshes: [baseline]\n")
	b.WriteString("sweeps:\n- param: connections\n  values:\n  - &a0 [16,16,16,16,16,16,16,16,16,16]\n")
	for i := 1; i <= 8; i++ {
		p := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "  - &a%d [%s,%s,%s,%s,%s,%s,%s,%s,%s,%s]\n", i, p, p, p, p, p, p, p, p, p, p)
	}
	start := time.Now()
	_, err := Parse([]byte(b.String()), "testdata")
	took := time.Since(start)
	if err == nil {
		t.Fatal("Parse accepted an alias bomb")
	}
	if took > time.Second {
		t.Fatalf("Parse took %s to refuse an alias bomb, want under a second", took)
	}
	if !strings.Contains(err.Error(), "sweeps[0].values[8]: yaml: document contains excessive aliasing") {
		t.Errorf("Parse: %v, want the alias limit named at sweeps[0].values[8]", err)
	}
}
