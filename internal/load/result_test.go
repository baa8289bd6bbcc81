package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
)

// fakeResult builds a result from n random latencies, as a generator would,
// and returns the latencies of the requests that succeeded.
func fakeResult(seed uint64, n int, rate float64) (*Result, []time.Duration) {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := newResult(Options{URL: "http://x", Connections: 4, Rate: rate, Duration: time.Second})
	r.Uncorrected = metrics.NewHistogram()
	var values []time.Duration
	hists := newSink(rate > 0)
	rec := newRecorder(hists)
	for range n {
		lat := time.Duration(rng.ExpFloat64() * float64(time.Millisecond))
		lag := time.Duration(rng.IntN(2000)) * time.Microsecond
		status := 200
		if rng.IntN(10) == 0 {
			status = 503
		}
		rec.record(0, lag, lag+lat, status, nil)
		if status < 500 {
			values = append(values, lag+lat)
		}
	}
	rec.addTo(r)
	hists.addTo(r)
	r.Start = time.Unix(1000, 0)
	r.End = r.Start.Add(time.Second)
	r.AchievedRate = rate
	r.ClientCores = 2
	r.ClientCPU = 100 * time.Millisecond
	return r, values
}

func TestResultMergeIsExact(t *testing.T) {
	t.Parallel()
	a, va := fakeResult(1, 5000, 1000)
	b, vb := fakeResult(2, 3000, 500)
	b.Start, b.End = a.Start.Add(-time.Second), a.End.Add(time.Second)
	b.Warnings = []string{"from b"}

	var merged Result
	merged.Merge(a)
	merged.Merge(b)

	want := metrics.NewHistogram()
	for _, v := range append(va, vb...) {
		want.Record(v)
	}
	if !merged.Latency.Equal(want) {
		t.Fatal("merged latency differs from one histogram of every value")
	}
	if merged.Requests != 8000 || merged.StatusCodes[200]+merged.StatusCodes[503] != 8000 {
		t.Errorf("requests %d, status codes %v", merged.Requests, merged.StatusCodes)
	}
	if got := merged.ByClass["2xx"].Count() + merged.ByClass["5xx"].Count(); got != 8000 {
		t.Errorf("by-class histograms hold %d", got)
	}
	if merged.AchievedRate != 1500 || merged.Options.Rate != 1500 || merged.Options.Connections != 8 {
		t.Errorf("rates %v/%v, connections %d: side-by-side generators add", merged.AchievedRate, merged.Options.Rate, merged.Options.Connections)
	}
	if !merged.Start.Equal(b.Start) || !merged.End.Equal(b.End) {
		t.Errorf("window %v–%v, want the union", merged.Start, merged.End)
	}
	if merged.ClientCPU != 200*time.Millisecond || len(merged.Warnings) != 1 {
		t.Errorf("cpu %v, warnings %v", merged.ClientCPU, merged.Warnings)
	}

	// Merging must also be exact after a trip through the JSON report.
	var buf bytes.Buffer
	if err := WriteJSON(&buf, a); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResult(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Latency.Equal(a.Latency) || !back.SendLag.Equal(a.SendLag) || !back.Uncorrected.Equal(a.Uncorrected) ||
		!back.ByClass["5xx"].Equal(a.ByClass["5xx"]) || back.Requests != a.Requests {
		t.Error("a result read back from JSON differs from the one written")
	}
}

func TestWriteJSONFields(t *testing.T) {
	t.Parallel()
	r, _ := fakeResult(3, 1000, 1000)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"requests", "errors", "status_codes", "duration_s", "achieved_rate", "latency_ms",
		"send_lag_ms", "client_cpu_s", "histogram", "result", "distorted"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("no %q in the JSON output", k)
		}
	}
	lat, _ := doc["latency_ms"].(map[string]any)
	for _, k := range []string{"min", "mean", "p50", "p90", "p95", "p99", "p999", "max"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("no latency_ms.%s", k)
		}
	}
	lag, _ := doc["send_lag_ms"].(map[string]any)
	for _, k := range []string{"p50", "p99", "max"} {
		if _, ok := lag[k]; !ok {
			t.Errorf("no send_lag_ms.%s", k)
		}
	}
	if doc["requests"].(float64) != 1000 || doc["duration_s"].(float64) != 1 || doc["client_cpu_s"].(float64) != 0.1 {
		t.Errorf("requests %v duration_s %v client_cpu_s %v", doc["requests"], doc["duration_s"], doc["client_cpu_s"])
	}
	p99 := lat["p99"].(float64)
	if want := float64(r.Latency.Percentile(99)) / 1e6; p99 != want {
		t.Errorf("latency_ms.p99 %v, want %v", p99, want)
	}
	h, err := metrics.DecodeHistogram(doc["histogram"].(string))
	if err != nil || !h.Equal(r.Latency) {
		t.Errorf("histogram field does not decode to the latency histogram: %v", err)
	}
}

func TestWriteText(t *testing.T) {
	t.Parallel()
	r, _ := fakeResult(4, 100, 1000)
	r.Errors, r.ErrorKinds = 1, map[string]int64{KindTimeout: 1}
	r.Distorted, r.Warnings = true, []string{"generator CPU saturated"}
	var buf bytes.Buffer
	if err := WriteText(&buf, r); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"Requests", "Latencies", "Uncorrected", "Send lag", "Status Codes", "200:", "Client CPU",
		"timeout: 1", "generator CPU saturated", "DISTORTED"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
}

func TestAssess(t *testing.T) {
	t.Parallel()
	start := time.Unix(0, 0)
	tests := []struct {
		name      string
		res       Result
		distorted bool
		warning   string
	}{
		{name: "healthy open loop", res: Result{Options: Options{Rate: 1000}, Requests: 10000, AchievedRate: 995, ClientCPU: time.Second, ClientCores: 2}},
		{name: "rate short", res: Result{Options: Options{Rate: 1000}, Requests: 10000, AchievedRate: 980, ClientCores: 2}, distorted: true, warning: "short of the target"},
		{name: "CPU saturated", res: Result{Requests: 10000, ClientCPU: 19 * time.Second, ClientCores: 2}, distorted: true, warning: "saturated"},
		{name: "busy but not saturated", res: Result{Requests: 10000, ClientCPU: 17 * time.Second, ClientCores: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.res
			r.Start, r.End = start, start.Add(10*time.Second)
			r.assess()
			if r.Distorted != tt.distorted {
				t.Errorf("distorted %v, want %v (%v)", r.Distorted, tt.distorted, r.Warnings)
			}
			if tt.warning != "" && (len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], tt.warning)) {
				t.Errorf("warnings %q, want one with %q", r.Warnings, tt.warning)
			}
		})
	}
}

// A request that fails is counted, not timed: failures that come back fast
// must not make a failing system look faster.
func TestFailuresStayOutOfLatency(t *testing.T) {
	t.Parallel()
	r := newResult(Options{URL: "http://x", Connections: 1})
	hists := newSink(false)
	rec := newRecorder(hists)
	for i := range 100 {
		switch {
		case i%5 < 2 && i%2 == 0: // 20 resets after 100µs
			rec.record(0, 0, 100*time.Microsecond, 0, errors.New("connection reset by peer"))
		case i%5 < 2: // 20 quick 503s
			rec.record(0, 0, 200*time.Microsecond, 503, nil)
		default: // 60 successes at 10ms
			rec.record(0, 0, 10*time.Millisecond, 200, nil)
		}
	}
	rec.addTo(r)
	hists.addTo(r)
	if r.Requests != 100 || r.Failed() != 40 || r.ErrorRate() != 0.4 {
		t.Fatalf("requests %d, failed %d, rate %g; want 100, 40, 0.4", r.Requests, r.Failed(), r.ErrorRate())
	}
	if r.Latency.Count() != 60 || r.Latency.Min() < 9*time.Millisecond {
		t.Errorf("latency holds %d samples, min %s; want the 60 successes only, none under 10ms", r.Latency.Count(), r.Latency.Min())
	}
	if r.ByClass["error"].Count()+r.ByClass["5xx"].Count() != 40 {
		t.Errorf("failures by class: %d errors, %d 5xx; want 40 in all", r.ByClass["error"].Count(), r.ByClass["5xx"].Count())
	}
}
