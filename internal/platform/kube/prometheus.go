package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
)

// promMatrix is a Prometheus range query's answer.
type promMatrix struct {
	Status string `json:"status"`
	Error  string `json:"error"`
	Data   struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	} `json:"data"`
}

// promSelectors returns the raw cAdvisor CPU-counter and working-set
// selectors for the namespaces' containers over the last rng: range
// vectors, whose instant query answers every scrape as stored, so that
// meshbench computes CPU between consecutive scrapes itself rather than
// from rate()'s extrapolated window.
func promSelectors(namespaces []string, rng time.Duration) (cpu, mem string) {
	quoted := make([]string, len(namespaces))
	for i, ns := range namespaces {
		quoted[i] = regexp.QuoteMeta(ns)
	}
	sel := fmt.Sprintf(`{namespace=~"%s",container!="",container!="POD"}`, strings.Join(quoted, "|"))
	secs := int(math.Ceil(rng.Seconds()))
	return fmt.Sprintf("container_cpu_usage_seconds_total%s[%ds]", sel, secs),
		fmt.Sprintf("container_memory_working_set_bytes%s[%ds]", sel, secs)
}

// prometheusSamples reads every scrape of CPU and memory from the
// measured window [start, end] (and the one CPU scrape before it, the
// counter's base) and turns them into readings: CPU as the counter's
// increase between two consecutive scrapes over their interval, kept only
// when both scrapes lie inside the window, and the working set scraped
// within that interval. An interval without a memory scrape, or across a
// counter reset, gives no reading: a gap, never a zero.
func (p *kubePlatform) prometheusSamples(ctx context.Context, namespaces []string, start, end time.Time) (samples, error) {
	// One scrape interval of margin, so that the counter's last value
	// before the window is there.
	cpuQ, memQ := promSelectors(namespaces, end.Sub(start)+p.opts.SampleInterval)
	cpu, err := promRaw(ctx, p.opts.Prometheus, cpuQ, end)
	if err != nil {
		return nil, err
	}
	mem, err := promRaw(ctx, p.opts.Prometheus, memQ, end)
	if err != nil {
		return nil, err
	}
	out := samples{}
	for key, pts := range cpu {
		ms := mem[key]
		for i := 1; i < len(pts); i++ {
			a, b := pts[i-1], pts[i]
			if b.v < a.v || !b.t.After(a.t) {
				continue // a counter reset: no figure for this interval
			}
			ws, ok := lastIn(ms, a.t, b.t)
			if !ok {
				continue
			}
			out[key] = append(out[key], reading{
				Sample: metrics.Sample{Time: b.t, CPUCores: (b.v - a.v) / b.t.Sub(a.t).Seconds(), WorkingSet: int64(ws)},
				From:   a.t,
			})
		}
	}
	return out, nil
}

// point is one stored Prometheus sample.
type point struct {
	t time.Time
	v float64
}

// lastIn is the last point in (from, to].
func lastIn(pts []point, from, to time.Time) (float64, bool) {
	for i := len(pts) - 1; i >= 0; i-- {
		if !pts[i].t.After(to) && pts[i].t.After(from) {
			return pts[i].v, true
		}
	}
	return 0, false
}

// promRaw runs an instant query of a range vector at time at and returns
// the stored samples by component key, in time order. Where several series
// share a key (two jobs scraping the same cAdvisor), the longest is kept.
func promRaw(ctx context.Context, base, query string, at time.Time) (map[string][]point, error) {
	q := url.Values{}
	q.Set("query", query)
	q.Set("time", strconv.FormatFloat(float64(at.UnixNano())/1e9, 'f', 3, 64))
	m, err := promGet(ctx, strings.TrimRight(base, "/")+"/api/v1/query?"+q.Encode())
	if err != nil {
		return nil, err
	}
	out := map[string][]point{}
	for _, r := range m.Data.Result {
		var pts []point
		for _, pt := range r.Values {
			ts, ok1 := pt[0].(float64)
			vs, ok2 := pt[1].(string)
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("prometheus: malformed point %v", pt)
			}
			v, err := strconv.ParseFloat(vs, 64)
			if err != nil {
				return nil, fmt.Errorf("prometheus: value %q: %w", vs, err)
			}
			pts = append(pts, point{t: time.UnixMilli(int64(math.Round(ts * 1000))).UTC(), v: v})
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].t.Before(pts[j].t) })
		key := componentKey(r.Metric["namespace"], r.Metric["pod"], r.Metric["container"])
		if len(pts) > len(out[key]) {
			out[key] = pts
		}
	}
	return out, nil
}

// promGet runs one query and decodes its matrix.
func promGet(ctx context.Context, u string) (promMatrix, error) {
	var m promMatrix
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return m, fmt.Errorf("prometheus: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return m, fmt.Errorf("prometheus: %w", err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(bounded(resp.Body, maxPrometheusAnswer, "the answer")).Decode(&m); err != nil {
		return m, fmt.Errorf("prometheus: %s: %w", resp.Status, err)
	}
	if m.Status != "success" {
		return m, fmt.Errorf("prometheus: %s: %s", resp.Status, m.Error)
	}
	return m, nil
}
