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

// promQueries returns the cAdvisor CPU-rate and working-set queries for
// the namespaces' containers. The rate's range spans several scrapes.
func promQueries(namespaces []string, step time.Duration) (cpu, mem string) {
	quoted := make([]string, len(namespaces))
	for i, ns := range namespaces {
		quoted[i] = regexp.QuoteMeta(ns)
	}
	sel := fmt.Sprintf(`{namespace=~"%s",container!="",container!="POD"}`, strings.Join(quoted, "|"))
	window := max(4*step, time.Minute)
	by := "sum by (namespace, pod, container)"
	cpu = fmt.Sprintf("%s (rate(container_cpu_usage_seconds_total%s[%ds]))", by, sel, int(window/time.Second))
	mem = fmt.Sprintf("%s (container_memory_working_set_bytes%s)", by, sel)
	return cpu, mem
}

// prometheusSamples range-queries CPU and memory for [start, end] and
// joins them by timestamp into samples per component.
func (p *kubePlatform) prometheusSamples(ctx context.Context, namespaces []string, start, end time.Time) (samples, error) {
	step := p.opts.SampleInterval
	cpuQ, memQ := promQueries(namespaces, step)
	cpu, err := promRange(ctx, p.opts.Prometheus, cpuQ, start, end, step)
	if err != nil {
		return nil, err
	}
	mem, err := promRange(ctx, p.opts.Prometheus, memQ, start, end, step)
	if err != nil {
		return nil, err
	}
	out := samples{}
	for key, points := range cpu {
		for t, v := range points {
			out[key] = append(out[key], metrics.Sample{Time: t, CPUCores: v, WorkingSet: int64(mem[key][t])})
		}
	}
	for key, points := range mem {
		for t, v := range points {
			if _, ok := cpu[key][t]; !ok {
				out[key] = append(out[key], metrics.Sample{Time: t, WorkingSet: int64(v)})
			}
		}
	}
	for _, s := range out {
		sort.Slice(s, func(i, j int) bool { return s[i].Time.Before(s[j].Time) })
	}
	return out, nil
}

// promRange runs one range query and returns values by component key and
// time.
func promRange(ctx context.Context, base, query string, start, end time.Time, step time.Duration) (map[string]map[time.Time]float64, error) {
	q := url.Values{}
	q.Set("query", query)
	q.Set("start", strconv.FormatFloat(float64(start.UnixNano())/1e9, 'f', 3, 64))
	q.Set("end", strconv.FormatFloat(float64(end.UnixNano())/1e9, 'f', 3, 64))
	q.Set("step", strconv.FormatFloat(step.Seconds(), 'f', -1, 64))
	u := strings.TrimRight(base, "/") + "/api/v1/query_range?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	defer resp.Body.Close()
	var m promMatrix
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return nil, fmt.Errorf("prometheus: %s: %w", resp.Status, err)
	}
	if m.Status != "success" {
		return nil, fmt.Errorf("prometheus: %s: %s", resp.Status, m.Error)
	}
	out := map[string]map[time.Time]float64{}
	for _, r := range m.Data.Result {
		key := componentKey(r.Metric["namespace"], r.Metric["pod"], r.Metric["container"])
		if out[key] == nil {
			out[key] = map[time.Time]float64{}
		}
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
			out[key][time.UnixMilli(int64(math.Round(ts*1000))).UTC()] = v
		}
	}
	return out, nil
}
