package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// A threshold is a pass-or-fail check a study file sets on one figure of
// its verdict, in k6's spirit: "p99_added_ms < 5" for every mesh but the
// baseline, "sidecar: capacity_ratio > 0.5" for one mesh. meshbench run
// and meshbench report judge each against the verdict's estimate and
// exit with a code of their own when one is not met.

// ThresholdMetric is one figure of the verdict a threshold can test.
type ThresholdMetric struct {
	Name string
	// Unit is the figure's, as the docs' table and the judged lines give it.
	Unit string
	// Reads says what the figure is, in the docs' words (docs/results.md
	// has this table, checked against it).
	Reads string
	// Cells and Search say what measures the figure: the cells at fixed
	// loads, a capacity search, or either.
	Cells, Search bool
	// Added says the figure is a difference from the baseline mesh, which
	// the study must run.
	Added bool
	// OfBaseline says the figure exists for the baseline itself; an added
	// latency, a ratio to the baseline and the data plane's figures do not.
	OfBaseline bool
}

// ThresholdMetrics are the figures a threshold can test: the verdict's
// columns, each once.
var ThresholdMetrics = []ThresholdMetric{
	{Name: "p50_added_ms", Unit: "ms", Cells: true, Added: true,
		Reads: "added p50: the mesh's p50 less the baseline's in the same rounds, at the verdict's load configuration (an open loop; a closed loop has none, Little's law)"},
	{Name: "p95_added_ms", Unit: "ms", Cells: true, Added: true,
		Reads: "added p95: the mesh's p95 less the baseline's in the same rounds, at the verdict's load configuration (an open loop; a closed loop has none, Little's law)"},
	{Name: "p99_added_ms", Unit: "ms", Cells: true, Added: true,
		Reads: "added p99: the mesh's p99 less the baseline's in the same rounds, at the verdict's load configuration (an open loop; a closed loop has none, Little's law)"},
	{Name: "capacity_rps", Unit: "req/s", Search: true, OfBaseline: true,
		Reads: "capacity at the SLO: the highest open-loop rate the capacity search found the mesh to sustain within it (not a connection ceiling)"},
	{Name: "capacity_ratio", Unit: "×", Search: true,
		Reads: "the capacity at the SLO, or the connection ceiling, over the baseline's: the ratio beside the verdict's throughput (`throughput_ratio` in `report -o json`)"},
	{Name: "cpu_cores_per_1000rps", Unit: "cores", Cells: true, Search: true,
		Reads: "the data plane's CPU (sidecars, node proxies, waypoints) per 1,000 completed req/s at the verdict's load configuration (`data_plane_cpu_per_1000rps` in `report -o json`; the verdict's table shows it per proxy pass); in a study of a capacity search alone, from its fitted lines at the capacity"},
	{Name: "memory_mib_per_1000rps", Unit: "MiB", Cells: true,
		Reads: "the data plane's memory per 1,000 completed req/s at the verdict's load configuration"},
	{Name: "usd_per_month", Unit: "USD", Cells: true,
		Reads: "the data plane's price a month, at the verdict's price table"},
	{Name: "usd_per_million_requests", Unit: "USD", Cells: true,
		Reads: "the data plane's price of a million requests at the rate the cells served"},
}

// LookupThresholdMetric finds a threshold's metric by name.
func LookupThresholdMetric(name string) (ThresholdMetric, bool) {
	for _, m := range ThresholdMetrics {
		if m.Name == name {
			return m, true
		}
	}
	return ThresholdMetric{}, false
}

// ThresholdMetricNames are the metrics' names, in the table's order.
func ThresholdMetricNames() []string {
	names := make([]string, len(ThresholdMetrics))
	for i, m := range ThresholdMetrics {
		names[i] = m.Name
	}
	return names
}

// Threshold operators.
const (
	OpLess      = "<"
	OpLessEq    = "<="
	OpGreater   = ">"
	OpGreaterEq = ">="
)

// Threshold is one threshold as a study file writes it,
// "[<mesh>:] <metric> <op> <number>".
type Threshold struct {
	// Text is the threshold as written.
	Text string `json:"threshold"`
	// Mesh is the mesh it is for; empty for every mesh but the baseline.
	Mesh   string  `json:"mesh,omitempty"`
	Metric string  `json:"metric"`
	Op     string  `json:"op"`
	Limit  float64 `json:"limit"`
}

// ThresholdText is a threshold as a study file writes it: a string or,
// for YAML reads "sidecar: capacity_ratio > 0.5" unquoted as a mapping,
// a mapping of one mesh to its threshold, which means the same.
type ThresholdText string

// UnmarshalJSON reads a string, or a mapping of one mesh to a string.
func (t *ThresholdText) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = ThresholdText(s)
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err == nil && len(m) == 1 {
		for mesh, rest := range m {
			*t = ThresholdText(mesh + ": " + rest)
		}
		return nil
	}
	return fmt.Errorf("want a string, %s, got %s", ThresholdForm, b)
}

// ThresholdForm is the form a threshold takes, for error messages.
const ThresholdForm = `"<metric> <op> <number>" or "<mesh>: <metric> <op> <number>", op one of <, <=, >, >=, such as "p99_added_ms < 5"`

var thresholdRE = regexp.MustCompile(`^\s*(?:([^\s:]+)\s*:\s*)?([A-Za-z0-9_.]+)\s*(<=|>=|<|>)\s*(\S+)\s*$`)

// ParseThreshold reads a threshold's syntax: an optional mesh, a metric,
// an operator and a finite number. Whether the metric and the mesh exist
// is the caller's to check (LookupThresholdMetric, the study's meshes).
func ParseThreshold(s string) (Threshold, error) {
	m := thresholdRE.FindStringSubmatch(s)
	if m == nil {
		return Threshold{}, fmt.Errorf("%q: want %s", s, ThresholdForm)
	}
	limit, err := strconv.ParseFloat(m[4], 64)
	if err != nil || math.IsNaN(limit) || math.IsInf(limit, 0) {
		return Threshold{}, fmt.Errorf("%q: %q is not a number (the metric's unit is implied); want %s", s, m[4], ThresholdForm)
	}
	return Threshold{Text: strings.TrimSpace(s), Mesh: m[1], Metric: m[2], Op: m[3], Limit: limit}, nil
}

// Holds reports whether v meets the threshold.
func (t Threshold) Holds(v float64) bool {
	switch t.Op {
	case OpLess:
		return v < t.Limit
	case OpLessEq:
		return v <= t.Limit
	case OpGreater:
		return v > t.Limit
	case OpGreaterEq:
		return v >= t.Limit
	}
	return false
}

// Above reports whether the threshold asks for a figure above its limit
// (> or >=), which a lower bound can show to be met.
func (t Threshold) Above() bool { return t.Op == OpGreater || t.Op == OpGreaterEq }
