package analysis

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestParseThreshold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     Threshold
		err      string
	}{
		{name: "every mesh", in: "p99_added_ms < 5", want: Threshold{Metric: "p99_added_ms", Op: OpLess, Limit: 5}},
		{name: "one mesh", in: "sidecar: capacity_ratio > 0.5", want: Threshold{Mesh: "sidecar", Metric: "capacity_ratio", Op: OpGreater, Limit: 0.5}},
		{name: "no spaces", in: "p50_added_ms<=2.5", want: Threshold{Metric: "p50_added_ms", Op: OpLessEq, Limit: 2.5}},
		{name: "spaces around", in: "  ambient :usd_per_month >= 1e2 ", want: Threshold{Mesh: "ambient", Metric: "usd_per_month", Op: OpGreaterEq, Limit: 100}},
		{name: "negative limit", in: "p50_added_ms > -1", want: Threshold{Metric: "p50_added_ms", Op: OpGreater, Limit: -1}},
		{name: "words for the operator", in: "p99_added_ms less than 5", err: "want " + ThresholdForm},
		{name: "no operator", in: "p99_added_ms 5", err: "want " + ThresholdForm},
		{name: "equality", in: "p99_added_ms == 5", err: "want " + ThresholdForm},
		{name: "a unit", in: "p99_added_ms < 5ms", err: `"5ms" is not a number`},
		{name: "not finite", in: "p99_added_ms < Inf", err: `"Inf" is not a number`},
		{name: "empty", in: "", err: "want " + ThresholdForm},
		{name: "two meshes", in: "a: b: p99_added_ms < 5", err: "want " + ThresholdForm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseThreshold(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseThreshold(%q) = %+v, %v; want an error with %q", tc.in, got, err, tc.err)
				}
				return
			}
			tc.want.Text = strings.TrimSpace(tc.in)
			if err != nil || got != tc.want {
				t.Fatalf("ParseThreshold(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestThresholdHolds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		op          string
		v           float64
		want, above bool
	}{
		{OpLess, 4.9, true, false}, {OpLess, 5, false, false},
		{OpLessEq, 5, true, false}, {OpLessEq, 5.1, false, false},
		{OpGreater, 5, false, true}, {OpGreater, 5.1, true, true},
		{OpGreaterEq, 5, true, true}, {OpGreaterEq, 4.9, false, true},
	} {
		th := Threshold{Metric: "p99_added_ms", Op: tc.op, Limit: 5}
		if got := th.Holds(tc.v); got != tc.want {
			t.Errorf("%g %s 5: %t, want %t", tc.v, tc.op, got, tc.want)
		}
		if th.Above() != tc.above {
			t.Errorf("%s: Above %t, want %t", tc.op, th.Above(), tc.above)
		}
	}
}

// TestThresholdText: a threshold is a string, or the mapping YAML makes
// of "mesh: threshold" unquoted; anything else is refused with the form.
func TestThresholdText(t *testing.T) {
	t.Parallel()
	var got []ThresholdText
	if err := json.Unmarshal([]byte(`["p99_added_ms < 5", {"sidecar": "capacity_ratio > 0.5"}]`), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "p99_added_ms < 5" || got[1] != "sidecar: capacity_ratio > 0.5" {
		t.Errorf("got %q", got)
	}
	for _, bad := range []string{`5`, `{"sidecar": 5}`, `{"a": "p50_added_ms < 1", "b": "p50_added_ms < 1"}`, `["p50_added_ms < 1"]`} {
		var th ThresholdText
		if err := json.Unmarshal([]byte(bad), &th); err == nil || !strings.Contains(err.Error(), ThresholdForm) {
			t.Errorf("%s: %v; want an error giving the form", bad, err)
		}
	}
}

// TestThresholdMetricsDocumented: docs/results.md's table of threshold
// metrics says what ThresholdMetrics says, metric for metric.
func TestThresholdMetricsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/results.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ThresholdMetrics {
		row := fmt.Sprintf("| `%s` | %s | %s |", m.Name, m.Unit, m.Reads)
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/results.md's table of threshold metrics lacks %q", row)
		}
		if !m.Cells && !m.Search {
			t.Errorf("%s: measured by neither cells nor a search", m.Name)
		}
		if m.Added && m.OfBaseline {
			t.Errorf("%s: an added figure of the baseline itself", m.Name)
		}
	}
}
