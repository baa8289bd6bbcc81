package cpstudy

import (
	"bufio"
	"math"
	"slices"
	"strconv"
	"strings"
)

// istiodHistograms are istiod's own push metrics the report puts beside
// the clients' figures.
var istiodHistograms = []string{"pilot_xds_push_time", "pilot_proxy_convergence_time", "pilot_xds_config_size_bytes"}

// Histogram is a Prometheus histogram summed over its labels.
type Histogram struct {
	Sum     float64  `json:"sum"`
	Count   float64  `json:"count"`
	Buckets []Bucket `json:"buckets"` // cumulative, by upper bound
}

// Bucket is a cumulative count of observations at or below LE.
type Bucket struct {
	LE    float64 `json:"le"` // +Inf is encoded as math.MaxFloat64
	Count float64 `json:"count"`
}

// Mean is the histogram's mean, NaN when it is empty.
func (h Histogram) Mean() float64 {
	if h.Count == 0 {
		return math.NaN()
	}
	return h.Sum / h.Count
}

// Quantile interpolates linearly within the bucket that holds q, as
// Prometheus's histogram_quantile does; NaN when empty.
func (h Histogram) Quantile(q float64) float64 {
	if h.Count == 0 || len(h.Buckets) == 0 {
		return math.NaN()
	}
	rank := q * h.Count
	prevLE, prevCount := 0.0, 0.0
	for _, b := range h.Buckets {
		if b.Count >= rank {
			if b.LE == math.MaxFloat64 {
				return prevLE
			}
			if b.Count == prevCount {
				return b.LE
			}
			return prevLE + (b.LE-prevLE)*(rank-prevCount)/(b.Count-prevCount)
		}
		prevLE, prevCount = b.LE, b.Count
	}
	return prevLE
}

// parseHistograms reads the named histograms from Prometheus text.
func parseHistograms(text string, names []string) map[string]Histogram {
	out := map[string]Histogram{}
	buckets := map[string]map[float64]float64{}
	s := bufio.NewScanner(strings.NewReader(text))
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		metric, value, ok := cutLast(line)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		name, labels, _ := strings.Cut(metric, "{")
		for _, n := range names {
			h := out[n]
			switch name {
			case n + "_sum":
				h.Sum += v
			case n + "_count":
				h.Count += v
			case n + "_bucket":
				le := labelValue(labels, "le")
				b, err := strconv.ParseFloat(le, 64)
				if le == "+Inf" {
					b, err = math.MaxFloat64, nil
				}
				if err != nil {
					continue
				}
				if buckets[n] == nil {
					buckets[n] = map[float64]float64{}
				}
				buckets[n][b] += v
			default:
				continue
			}
			out[n] = h
		}
	}
	for n, bs := range buckets {
		h := out[n]
		les := make([]float64, 0, len(bs))
		for le := range bs {
			les = append(les, le)
		}
		slices.Sort(les)
		for _, le := range les {
			h.Buckets = append(h.Buckets, Bucket{LE: le, Count: bs[le]})
		}
		out[n] = h
	}
	return out
}

// cutLast splits a sample line into its metric (with labels) and value,
// ignoring a trailing timestamp.
func cutLast(line string) (string, string, bool) {
	i := strings.LastIndexByte(line, '}')
	rest := line
	metric := ""
	if i >= 0 {
		metric, rest = line[:i+1], line[i+1:]
	}
	f := strings.Fields(rest)
	if metric == "" {
		if len(f) < 2 {
			return "", "", false
		}
		return f[0], f[1], true
	}
	if len(f) < 1 {
		return "", "", false
	}
	return metric, f[0], true
}

func labelValue(labels, key string) string {
	for _, kv := range strings.Split(strings.TrimSuffix(labels, "}"), ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.TrimSpace(k) == key {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}
