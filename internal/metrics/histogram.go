package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: values are microseconds from 1 µs to one hour, at three
// significant digits. Memory is fixed (about 40 KiB) whatever the count.
const (
	lowestMicros  = 1
	highestMicros = int64(time.Hour / time.Microsecond)
	sigFigs       = 3
)

// Histogram is an HDR latency histogram with microsecond resolution. The zero
// value is not usable; call NewHistogram. It is not safe for concurrent use:
// keep one per goroutine and Merge them.
type Histogram struct {
	h *hdrhistogram.Histogram
}

// NewHistogram returns an empty histogram covering 1 µs to one hour.
func NewHistogram() *Histogram {
	return &Histogram{h: hdrhistogram.New(lowestMicros, highestMicros, sigFigs)}
}

// Record adds one duration. Values below 1 µs count as 1 µs and values above
// the range as the highest trackable value, so that no sample is lost.
func (h *Histogram) Record(d time.Duration) {
	v := int64(d / time.Microsecond)
	if v < lowestMicros {
		v = lowestMicros
	}
	if v > highestMicros {
		v = highestMicros
	}
	// The value is clamped into range, so RecordValue cannot fail.
	_ = h.h.RecordValue(v)
}

// RecordN adds n occurrences of one duration.
func (h *Histogram) RecordN(d time.Duration, n int64) {
	v := int64(d / time.Microsecond)
	v = max(lowestMicros, min(v, highestMicros))
	_ = h.h.RecordValues(v, n)
}

// Merge adds every value of o into h.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil {
		return
	}
	h.h.Merge(o.h)
}

// Reset empties the histogram.
func (h *Histogram) Reset() { h.h.Reset() }

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Min is the smallest recorded value, or 0 when empty.
func (h *Histogram) Min() time.Duration { return micros(h.h.Min()) }

// Max is the largest recorded value (to the histogram's precision).
func (h *Histogram) Max() time.Duration { return micros(h.h.Max()) }

// Mean is the mean of the recorded values.
func (h *Histogram) Mean() time.Duration {
	return time.Duration(h.h.Mean() * float64(time.Microsecond))
}

// Percentile returns the value at percentile p, 0 < p <= 100.
func (h *Histogram) Percentile(p float64) time.Duration {
	return micros(h.h.ValueAtQuantile(p))
}

// Point is one point of a percentile spectrum.
type Point struct {
	Percentile float64       `json:"percentile"`
	Value      time.Duration `json:"value"`
}

// Spectrum returns the latency at each percentile of a log-spaced ladder
// (50, 75, 87.5, ... up to 100), as HdrHistogram's percentile plots use.
func (h *Histogram) Spectrum() []Point {
	var pts []Point
	for i := 1; i <= 20; i++ {
		p := 100 * (1 - math.Pow(2, -float64(i)))
		pts = append(pts, Point{Percentile: p, Value: h.Percentile(p)})
		if h.Count() > 0 && float64(h.Count())*math.Pow(2, -float64(i)) < 1 {
			break
		}
	}
	return append(pts, Point{Percentile: 100, Value: h.Max()})
}

// Equal reports whether two histograms hold the same counts.
func (h *Histogram) Equal(o *Histogram) bool { return h.h.Equals(o.h) }

// Encode returns the histogram in HdrHistogram's compressed base64 form, the
// format other HDR tools read.
func (h *Histogram) Encode() (string, error) {
	b, err := h.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram parses the output of Encode.
func DecodeHistogram(s string) (*Histogram, error) {
	hh, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	// Re-home the counts in a histogram of the standard range, so that
	// merging histograms from any source is exact.
	h := NewHistogram()
	h.h.Merge(hh)
	return h, nil
}

// MarshalJSON encodes the histogram as its compressed base64 string.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	s, err := h.Encode()
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// UnmarshalJSON decodes a string written by MarshalJSON.
func (h *Histogram) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("histogram: %w", err)
	}
	d, err := DecodeHistogram(s)
	if err != nil {
		return err
	}
	h.h = d.h
	return nil
}

func micros(v int64) time.Duration { return time.Duration(v) * time.Microsecond }

// TailSamples is how many samples must lie beyond a percentile before it
// is read off a sample: with fewer, the figure is one or two requests'
// latency, not a property of the distribution.
const TailSamples = 10

// MinSamples is the smallest sample percentile p (in percent, below 100)
// may be read from, TailSamples beyond it: p50 needs 20 requests, p99
// 1,000 and p99.9 10,000.
func MinSamples(p float64) int64 {
	return int64(math.Ceil(TailSamples/(1-p/100) - 1e-6))
}
