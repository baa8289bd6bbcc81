package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
)

// rawCell is what this test reads of a cell file, decoded on its own so
// that the check does not share the analysis package's reading code.
type rawCell struct {
	ID           string            `json:"id"`
	Mesh         string            `json:"mesh"`
	Params       map[string]string `json:"params"`
	Repetition   int               `json:"repetition"`
	Status       string            `json:"status"`
	Verification []struct {
		Pass bool `json:"pass"`
	} `json:"verification"`
	Load struct {
		Options struct {
			Timeout time.Duration `json:"timeout"`
		} `json:"options"`
	} `json:"load"`
	Merged *struct {
		Start       time.Time          `json:"start"`
		End         time.Time          `json:"end"`
		Requests    int64              `json:"requests"`
		Errors      int64              `json:"errors"`
		StatusCodes map[int]int64      `json:"status_codes"`
		Latency     *metrics.Histogram `json:"latency"`
		Distorted   bool               `json:"distorted"`
	} `json:"merged"`
	Resources []metrics.Series `json:"resources"`
}

// rawFigures recomputes, straight from the cell files, each (mesh,
// configuration label) group's per-run figures, leaving out failed,
// unverified and distorted cells.
func rawFigures(t *testing.T, dir string) (map[string]map[string][]float64, map[string]int) {
	t.Helper()
	var ix struct {
		Cells []struct {
			File string `json:"file"`
		} `json:"cells"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "study.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ix); err != nil {
		t.Fatal(err)
	}
	figs := map[string]map[string][]float64{}
	excluded := map[string]int{}
	for _, s := range ix.Cells {
		b, err := os.ReadFile(filepath.Join(dir, s.File))
		if err != nil {
			t.Fatal(err)
		}
		var c rawCell
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		key := c.Mesh + "|connections=" + c.Params["connections"] + ", replicas.productpage=" + c.Params["replicas.productpage"]
		ok := c.Status == "ok" && c.Merged != nil && !c.Merged.Distorted
		for _, v := range c.Verification {
			ok = ok && v.Pass
		}
		if !ok {
			excluded[key]++
			continue
		}
		if figs[key] == nil {
			figs[key] = map[string][]float64{}
		}
		f := figs[key]
		// The percentiles count every failed request (no response, or a
		// 5xx) at the cell's timeout.
		h := metrics.NewHistogram()
		h.Merge(c.Merged.Latency)
		failed := c.Merged.Errors
		for code, n := range c.Merged.StatusCodes {
			if code >= 500 {
				failed += n
			}
		}
		h.RecordN(c.Load.Options.Timeout, failed)
		secs := c.Merged.End.Sub(c.Merged.Start).Seconds()
		f["round"] = append(f["round"], float64(c.Repetition))
		f["Time (s)"] = append(f["Time (s)"], secs)
		f["Completed (req/s)"] = append(f["Completed (req/s)"], float64(c.Merged.Requests)/secs)
		for name, p := range map[string]float64{"p50": 50, "p90": 90, "p95": 95, "p99": 99, "p99.9": 99.9} {
			f[name] = append(f[name], float64(h.Percentile(p))/float64(time.Millisecond))
		}
		var dpCPU float64
		for _, r := range c.Resources {
			if r.Component.Role.DataPlane() {
				var sum float64
				for _, x := range r.Samples {
					sum += x.CPUCores
				}
				dpCPU += sum / float64(len(r.Samples))
			}
		}
		f["dp-cpu"] = append(f["dp-cpu"], dpCPU)
		f["dp-cpu-per-1k"] = append(f["dp-cpu-per-1k"], dpCPU/(float64(c.Merged.Requests)/secs)*1000)
	}
	return figs, excluded
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// parseEstimate reads "208 [203, 209]" into its three numbers.
func parseEstimate(t *testing.T, cell string) (m, lo, hi float64) {
	t.Helper()
	f := strings.FieldsFunc(cell, func(r rune) bool { return r == ' ' || r == '[' || r == ']' || r == ',' })
	// An interval below 95% carries its level after it.
	if len(f) == 4 && strings.HasSuffix(f[3], "%") {
		f = f[:3]
	}
	if len(f) != 3 {
		t.Fatalf("cell %q is not a median with an interval", cell)
	}
	var v [3]float64
	for i, s := range f {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("cell %q: %v", cell, err)
		}
		v[i] = x
	}
	return v[0], v[1], v[2]
}

// near reports whether a figure printed with three significant digits
// stands for want.
func near(got, want float64) bool {
	return math.Abs(got-want) <= 0.006*math.Abs(want)+1e-4
}

// TestTablesMatchTheRawCells recomputes every latency and throughput table
// of the Markdown report, and the summary's overheads and data-plane CPU,
// from the cell files, independently of the analysis package.
func TestTablesMatchTheRawCells(t *testing.T) {
	t.Parallel()
	figs, excluded := rawFigures(t, fixtureDir)
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, Build(loadFixture(t))); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	latency := md[strings.Index(md, "## Latency and throughput"):strings.Index(md, "## Overhead over baseline")]
	checked := 0
	var config string
	var header []string
	for _, line := range strings.Split(latency, "\n") {
		switch {
		case strings.HasPrefix(line, "### "):
			config = strings.TrimPrefix(line, "### ")
		case strings.HasPrefix(line, "| Service mesh"):
			header = cells(line)
		case strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| ---"):
			row := cells(line)
			key := row[0] + "|" + config
			f := figs[key]
			if f == nil {
				t.Fatalf("table row for %s has no cells behind it", key)
			}
			for i, col := range header {
				want, ok := f[strings.TrimSuffix(col, " (ms)")]
				if !ok {
					continue
				}
				m, lo, hi := parseEstimate(t, row[i])
				if !near(m, median(want)) {
					t.Errorf("%s %s: table says %v, the cells' median is %v", key, col, m, median(want))
				}
				if lo > m || hi < m || lo < slices.Min(want)*0.994 || hi > slices.Max(want)*1.006 {
					t.Errorf("%s %s: interval [%v, %v] around %v outside the runs' range %v", key, col, lo, hi, m, want)
				}
				checked++
			}
			runs := strconv.Itoa(len(f["p50"]))
			if n := excluded[key]; n > 0 {
				runs += " (" + strconv.Itoa(n) + " excluded)"
			}
			if row[len(row)-1] != runs {
				t.Errorf("%s: runs %q, want %q", key, row[len(row)-1], runs)
			}
		}
	}
	if want := 6 * 3 * 6; checked != want {
		t.Errorf("checked %d figures, want %d", checked, want)
	}
	checkVerdict(t, md[:strings.Index(md, "## Summary")], figs)
	summary := md[strings.Index(md, "## Summary"):strings.Index(md, "## Latency and throughput")]
	if !strings.Contains(summary, "| Mesh | connections / replicas.productpage |") {
		t.Fatal("the summary does not name its configuration columns as expected")
	}
	rows := 0
	for _, line := range strings.Split(summary, "\n") {
		if !strings.HasPrefix(line, "| istio-") {
			continue
		}
		row := cells(line)
		// The summary names configurations by their values alone.
		v := strings.Split(row[1], " / ")
		cfg := "connections=" + v[0] + ", replicas.productpage=" + v[1]
		key, base := row[0]+"|"+cfg, "baseline|"+cfg
		// A closed loop: throughput, its ratio to the baseline's paired
		// by round, and the mesh's own p50 and p99, never an added
		// latency.
		for i, p := range map[int]string{2: "Completed (req/s)", 4: "p50", 5: "p99", 6: "dp-cpu"} {
			if m, _, _ := parseEstimate(t, row[i]); !near(m, median(figs[key][p])) {
				t.Errorf("%s %s: table says %q, the cells give %v", key, p, row[i], median(figs[key][p]))
			}
		}
		want := 1 + pairedPctHL(figs[key], figs[base], "Completed (req/s)")/100
		got, err := strconv.ParseFloat(strings.TrimSuffix(strings.Fields(row[3])[0], "x"), 64)
		if err != nil || !near(got, want) {
			t.Errorf("%s throughput over the baseline's: table says %q, the cells give %vx", key, row[3], want)
		}
		rows++
	}
	if rows != 12 {
		t.Errorf("checked %d summary rows, want 12", rows)
	}
}

func cells(line string) []string {
	parts := strings.Split(strings.Trim(line, "|"), " | ")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// pairedPctHL is the Hodges-Lehmann estimate of mesh's figure p over
// base's in percent, paired by round.
func pairedPctHL(mesh, base map[string][]float64, p string) float64 {
	byRound := map[float64]float64{}
	for i, r := range base["round"] {
		byRound[r] = base[p][i]
	}
	var ds []float64
	for i, r := range mesh["round"] {
		if b, ok := byRound[r]; ok {
			ds = append(ds, 100*(mesh[p][i]-b)/b)
		}
	}
	var w []float64
	for i := range ds {
		for j := i; j < len(ds); j++ {
			w = append(w, (ds[i]+ds[j])/2)
		}
	}
	return median(w)
}

func checkVerdict(t *testing.T, verdict string, figs map[string]map[string][]float64) {
	t.Helper()
	const cfg = "connections=128, replicas.productpage=4"
	// The fixture's cells are a closed loop: the verdict gives each mesh's
	// own latency and throughput, not an added latency (Little's law).
	if !strings.Contains(verdict, "| Mesh | p50 (ms) | p95 / p99 (ms) | Throughput (req/s) | Data-plane CPU (cores) |") {
		t.Fatalf("the verdict's header is not as expected:\n%s", verdict)
	}
	rows := 0
	for _, line := range strings.Split(verdict, "\n") {
		if !strings.HasPrefix(line, "| istio-") && !strings.HasPrefix(line, "| baseline |") {
			continue
		}
		row := cells(line)
		key := row[0] + "|" + cfg
		if m, lo, hi := parseEstimate(t, row[1]); !near(m, median(figs[key]["p50"])) || lo > m || hi < m {
			t.Errorf("%s p50: verdict says %q, the cells give %v", row[0], row[1], median(figs[key]["p50"]))
		}
		rows++
		if row[0] == "baseline" {
			continue
		}
		if m, _, _ := parseEstimate(t, row[4]); !near(m, median(figs[key]["dp-cpu"])) {
			t.Errorf("%s data-plane CPU: verdict says %q, the cells give %v", row[0], row[4], median(figs[key]["dp-cpu"]))
		}
		// bookinfo's 3.67 calls a request (productpage, details, reviews,
		// and ratings from two of reviews' three versions), two proxies
		// each under both meshes.
		const passes = (1 + 1 + 1 + 2.0/3) * 2
		want := median(figs[key]["dp-cpu-per-1k"]) / passes
		if m, _, _ := parseEstimate(t, strings.TrimSuffix(row[5], " over 7.33 passes")); !near(m, want) || !strings.HasSuffix(row[5], " over 7.33 passes") {
			t.Errorf("%s CPU per proxy pass: verdict says %q, the cells give %v over 7.33 passes", row[0], row[5], want)
		}
	}
	if rows != 3 {
		t.Errorf("checked %d verdict rows, want 3", rows)
	}
}
