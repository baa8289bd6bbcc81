package cpstudy

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/cost"
	"github.com/meshbench/meshbench/internal/report/chart"
	"github.com/meshbench/meshbench/internal/results"
)

// Istio's published control-plane point, with the conditions it was
// measured under, shown beside the study's curves.
const (
	publishedSidecars = 2000
	publishedCores    = 1.0
	publishedGB       = 1.5
	publishedSource   = "Istio's performance and scalability page (istio.io, releases 1.12 to 1.16): istiod used 1 vCPU and 1.5 GB " +
		"in Istio's load-test mesh of 1,000 services and 2,000 sidecars carrying 70,000 requests a second mesh-wide; " +
		"its churn and push settings are not stated"
)

// Summary is one point's figures, computed from its raw data.
type Summary struct {
	Mode     Mode `json:"mode"`
	Pods     int  `json:"pods"`
	Services int  `json:"services"`
	Proxies  int  `json:"proxies"`
	// CPU is istiod's mean cores while the churn ran; Idle before it;
	// each with its batch-means interval (the samples are a time series,
	// each correlated with the next).
	CPU  analysis.Estimate `json:"cpu_cores"`
	Idle analysis.Estimate `json:"idle_cpu_cores"`
	// Memory is istiod's mean working set (GiB) while idle and churning;
	// Peak the most it held at any sample.
	Memory   analysis.Estimate `json:"memory_gib"`
	PeakGiB  float64           `json:"peak_memory_gib"`
	BytesP50 Float             `json:"config_bytes_p50"`
	BytesP99 Float             `json:"config_bytes_p99"`
	// ConvergeP50 and ConvergeP99 are over changes: the time until every
	// affected proxy ACKed; TimedOut counts changes some proxy never
	// ACKed within the timeout. A timed-out change is censored at the
	// timeout: it took at least that long, so it counts in the
	// percentiles, and a percentile that falls on one is the timeout, a
	// lower bound (the AtLeast fields say so).
	ConvergeP50        Float   `json:"converge_p50_s"`
	ConvergeP99        Float   `json:"converge_p99_s"`
	ConvergeP50AtLeast bool    `json:"converge_p50_at_least,omitempty"`
	ConvergeP99AtLeast bool    `json:"converge_p99_at_least,omitempty"`
	Changes            int     `json:"changes"`
	TimedOut           int     `json:"timed_out"`
	InitialSync        float64 `json:"initial_sync_s"`
	RestartSync        float64 `json:"restart_sync_s"`
	// istiod's own view: mean push time per proxy and type, p99 of its
	// proxy convergence time, mean config size per push.
	PushTimeMean   Float   `json:"istiod_push_time_mean_s"`
	ConvergenceP99 Float   `json:"istiod_convergence_p99_s"`
	ConfigSizeMean Float   `json:"istiod_config_size_mean_bytes"`
	MonthlyUSD     float64 `json:"monthly_usd"`
}

// Summarize computes every point's figures; prices turn cores and GiB
// into monthly dollars.
func Summarize(r *Results, prices cost.UnitPrices) []Summary {
	var out []Summary
	for _, p := range r.Points {
		s := Summary{Mode: p.Mode, Pods: p.Pods, Services: p.Services, Proxies: p.Proxies,
			InitialSync: p.InitialSync, RestartSync: p.RestartSync}
		var churn, idle, mem []float64
		for _, x := range p.Samples {
			gib := float64(x.WorkingSet) / (1 << 30)
			s.PeakGiB = math.Max(s.PeakGiB, gib)
			switch x.Phase {
			case "churn":
				churn = append(churn, x.CPUCores)
				mem = append(mem, gib)
			case "idle":
				idle = append(idle, x.CPUCores)
				mem = append(mem, gib)
			}
		}
		s.CPU, s.Idle, s.Memory = analysis.BatchMeansCI(churn, minBatchSamples), analysis.BatchMeansCI(idle, minBatchSamples), analysis.BatchMeansCI(mem, minBatchSamples)
		bytes := make([]float64, len(p.ConfigBytes))
		for i, b := range p.ConfigBytes {
			bytes[i] = float64(b)
		}
		s.BytesP50, s.BytesP99 = Float(percentile(bytes, 0.5)), Float(percentile(bytes, 0.99))
		var conv []float64
		timeout := r.Config.ChangeTimeout.Seconds()
		for _, c := range p.Changes {
			if c.Affected == 0 {
				continue
			}
			s.Changes++
			if c.Converged == nil {
				s.TimedOut++
				conv = append(conv, math.Inf(1)) // censored at the timeout
				continue
			}
			conv = append(conv, *c.Converged)
		}
		censored := func(v float64) (Float, bool) {
			if math.IsInf(v, 1) {
				return Float(timeout), true
			}
			return Float(v), false
		}
		s.ConvergeP50, s.ConvergeP50AtLeast = censored(percentile(conv, 0.5))
		s.ConvergeP99, s.ConvergeP99AtLeast = censored(percentile(conv, 0.99))
		s.PushTimeMean = Float(p.IstiodMetrics["pilot_xds_push_time"].Mean())
		s.ConvergenceP99 = Float(p.IstiodMetrics["pilot_proxy_convergence_time"].Quantile(0.99))
		s.ConfigSizeMean = Float(p.IstiodMetrics["pilot_xds_config_size_bytes"].Mean())
		// Priced at the mean CPU, the use a bill is paid on.
		s.MonthlyUSD = s.CPU.Median*prices.PerVCPUMonth + s.PeakGiB*prices.PerGBMonth
		out = append(out, s)
	}
	return out
}

// minBatchSamples is the shortest batch of samples a batch mean takes: 5
// s of 1-s samples, longer than istiod's pushes, which debounce for 100
// ms to 10 s and then run for a second or two.
const minBatchSamples = 5

// Float is a figure that may be missing (NaN), written to JSON as null.
type Float float64

// MarshalJSON writes NaN as null.
func (f Float) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

// percentile is the nearest-rank percentile, NaN when xs is empty.
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// WriteReport computes the report from a results directory's raw data and
// writes report.md and its charts there.
func WriteReport(dir string) error {
	r, err := ReadResults(dir)
	if err != nil {
		return err
	}
	catalog, err := cost.LoadCatalog("")
	if err != nil {
		return err
	}
	prices, err := cost.DefaultUnitPrices(catalog)
	if err != nil {
		return err
	}
	sums := Summarize(r, prices)
	charts := map[string]string{
		"cpu.svg":         curve(sums, "istiod CPU while churning", "cores", func(s Summary) chart.Point { return est(s.Pods, s.CPU) }, publishedCores),
		"memory.svg":      curve(sums, "istiod working set while idle and churning", "GiB", func(s Summary) chart.Point { return est(s.Pods, s.Memory) }, publishedGB*1e9/(1<<30)),
		"convergence.svg": curve(sums, "change to every affected proxy's ACK, p50 over changes", "seconds", func(s Summary) chart.Point { return chart.Point{X: float64(s.Pods), Y: float64(s.ConvergeP50)} }, math.NaN()),
	}
	for name, svg := range charts {
		if err := results.WriteFile(dir, name, []byte(svg)); err != nil {
			return err
		}
	}
	if err := results.WriteJSON(dir, "summary.json", sums); err != nil {
		return err
	}
	return results.WriteFile(dir, "report.md", []byte(markdown(r, sums, prices)))
}

func est(pods int, e analysis.Estimate) chart.Point {
	if !e.Valid() {
		return chart.Point{X: float64(pods), Y: math.NaN()}
	}
	return chart.Point{X: float64(pods), Y: e.Median, Lo: e.Lo, Hi: e.Hi}
}

// curve draws one line per mode against pods, with the published point
// as a series of its own when y is a number.
func curve(sums []Summary, title, unit string, f func(Summary) chart.Point, published float64) string {
	l := chart.Line{Title: title, X: chart.Axis{Label: "pods", Scale: chart.Log}, Y: chart.Axis{Label: unit}}
	for _, m := range Modes {
		sr := chart.Series{Name: string(m)}
		for _, s := range sums {
			if s.Mode == m {
				sr.Points = append(sr.Points, f(s))
			}
		}
		if len(sr.Points) > 0 {
			l.Series = append(l.Series, sr)
		}
	}
	if !math.IsNaN(published) {
		l.Series = append(l.Series, chart.Series{Name: "Istio published (2,000 sidecars)", Dashed: true,
			Points: []chart.Point{{X: publishedSidecars, Y: published}}})
	}
	return l.SVG()
}

func markdown(r *Results, sums []Summary, prices cost.UnitPrices) string {
	var b strings.Builder
	f := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	f("# What the control plane costs\n\n")
	f("istiod %s (istio.io/istio module version), Kubernetes %s with kwok; istiod pinned to CPU %s, everything else on CPU %s.\n\n",
		r.Settings.IstiodVersion, r.Settings.KubernetesBuild, r.Settings.IstiodCPUs, r.Settings.OtherCPUs)
	f("Push settings: PILOT_DEBOUNCE_AFTER=%s, PILOT_DEBOUNCE_MAX=%s, PILOT_ENABLE_EDS_DEBOUNCE=%s, PILOT_PUSH_THROTTLE=%s, "+
		"PILOT_MAX_REQUESTS_PER_SECOND=%s, GOMAXPROCS=%s. Churn: one change every %s (pod added, AuthorizationPolicy changed, "+
		"Service added, pod removed, in turn), %d per point, each timing out after %s.\n\n",
		r.Settings.DebounceAfter, r.Settings.DebounceMax, r.Settings.EDSDebounce, r.Settings.PushThrottle,
		r.Settings.RequestsPerSec, r.Settings.GOMAXPROCS, r.Settings.ChangeInterval, r.Config.Changes, r.Settings.ChangeTimeout)
	f("| mode | pods | services | proxies | istiod CPU (cores, churn) | idle CPU | working set (GiB) | peak GiB | config bytes/proxy p50 | p99 | change→ACK p50 (s) | p99 (s) | timed out | initial push (s) | push after restart (s) | $/month |\n")
	f("|---|---:|---:|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range sums {
		f("| %s | %d | %d | %d | %s | %s | %s | %.2f | %s | %s | %s | %s | %d/%d | %.1f | %.1f | %.2f |\n",
			s.Mode, s.Pods, s.Services, s.Proxies, ci(s.CPU, 2), ci(s.Idle, 2), ci(s.Memory, 2), s.PeakGiB,
			chart.Number(float64(s.BytesP50)), chart.Number(float64(s.BytesP99)), atLeast(s.ConvergeP50, s.ConvergeP50AtLeast), atLeast(s.ConvergeP99, s.ConvergeP99AtLeast),
			s.TimedOut, s.Changes, s.InitialSync, s.RestartSync, s.MonthlyUSD)
	}
	f("\nCPU and working set are means over %s samples, with 95%% batch-means intervals: the samples of a phase cut into at most %d consecutive batches of at least %d, Student's t over the batch means (calibrated, as a price's is), since each sample is correlated with the next (docs/statistics.md). "+
		"Change→ACK percentiles count the changes that timed out as taking at least the timeout (%s): a percentile that falls on one reads ≥ the timeout. "+
		"Monthly dollars price the mean churn CPU and the peak working set at $%.2f per vCPU-month and $%.2f per GB-month (%s).\n\n",
		r.Settings.SampleInterval, analysis.MaxBatches, minBatchSamples, r.Settings.ChangeTimeout, prices.PerVCPUMonth, prices.PerGBMonth, prices.Source)
	f("## istiod's own metrics\n\n| mode | pods | pilot_xds_push_time mean (s) | pilot_proxy_convergence_time p99 (s) | pilot_xds_config_size_bytes mean |\n|---|---:|---:|---:|---:|\n")
	for _, s := range sums {
		f("| %s | %d | %s | %s | %s |\n", s.Mode, s.Pods, num(s.PushTimeMean), num(s.ConvergenceP99), chart.Number(float64(s.ConfigSizeMean)))
	}
	f("\n![istiod CPU](cpu.svg)\n\n![istiod memory](memory.svg)\n\n![convergence](convergence.svg)\n\n")
	f("The dashed point is %s.\n\n", publishedSource)
	f("The synthetic proxies ACK configuration but apply none: these figures are what istiod spends, not what Envoy or ztunnel would spend applying it. " +
		"Ambient rows have ztunnels only; ambient-waypoint rows add a waypoint per namespace, counted among the proxies and in the config bytes.\n")
	return b.String()
}

func ci(e analysis.Estimate, digits int) string {
	if !e.Valid() {
		return "–"
	}
	if !e.Interval() {
		return fmt.Sprintf("%.*f", digits, e.Median)
	}
	return fmt.Sprintf("%.*f [%.*f, %.*f]", digits, e.Median, digits, e.Lo, digits, e.Hi)
}

// atLeast is a percentile that may be censored: "≥ 20.000" when it fell
// on a change that timed out.
func atLeast(v Float, censored bool) string {
	if censored {
		return "≥ " + num(v)
	}
	return num(v)
}

func num(v Float) string {
	if math.IsNaN(float64(v)) {
		return "–"
	}
	return fmt.Sprintf("%.3f", v)
}
