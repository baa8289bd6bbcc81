package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshbench/meshbench/internal/metrics"
)

// podMetricsList is the part of metrics.k8s.io/v1beta1 PodMetricsList
// meshbench reads; decoding it here spares a client module.
type podMetricsList struct {
	Items []struct {
		Metadata  metav1.ObjectMeta `json:"metadata"`
		Timestamp metav1.Time       `json:"timestamp"`
		// Window is the span the usage was averaged over, ending at
		// Timestamp.
		Window     metav1.Duration `json:"window"`
		Containers []struct {
			Name  string `json:"name"`
			Usage struct {
				CPU    resource.Quantity `json:"cpu"`
				Memory resource.Quantity `json:"memory"`
			} `json:"usage"`
		} `json:"containers"`
	} `json:"items"`
}

// reading is one resource sample with the span its CPU figure covers
// (its rate's start), so that a window keeps only readings measured
// wholly inside it.
type reading struct {
	metrics.Sample
	From time.Time
}

// samples are resource readings by component key.
type samples map[string][]reading

// add appends a reading unless the component already has one at that
// time (the metrics API answers the same reading until its next scrape).
func (s samples) add(key string, x reading) {
	if n := len(s[key]); n > 0 && s[key][n-1].Time.Equal(x.Time) {
		return
	}
	s[key] = append(s[key], x)
}

// recorder samples the cluster while load runs: the pods of the watched
// namespaces (which components exist, with their requests) and, without
// Prometheus, the metrics API's readings.
type recorder struct {
	p          *kubePlatform
	namespaces []string
	metricsAPI bool

	mu         sync.Mutex
	comps      map[string]metrics.Component
	samples    samples
	metricsErr error
}

func (p *kubePlatform) newRecorder(namespaces []string) *recorder {
	return &recorder{p: p, namespaces: namespaces, metricsAPI: p.opts.Prometheus == "",
		comps: map[string]metrics.Component{}, samples: samples{}}
}

// run samples every interval until ctx ends.
func (r *recorder) run(ctx context.Context) {
	t := time.NewTicker(r.p.opts.SampleInterval)
	defer t.Stop()
	for {
		r.tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *recorder) tick(ctx context.Context) {
	for _, ns := range r.namespaces {
		pods, err := r.p.c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue // a missed tick only thins the series
		}
		r.addComponents(pods.Items)
		var pm podMetricsList
		if r.metricsAPI {
			pm, err = r.p.podMetrics(ctx, ns)
		}
		r.mu.Lock()
		if err != nil && r.metricsErr == nil && ctx.Err() == nil {
			r.metricsErr = err
		}
		for _, item := range pm.Items {
			for _, c := range item.Containers {
				r.samples.add(componentKey(item.Metadata.Namespace, item.Metadata.Name, c.Name), reading{
					Sample: metrics.Sample{Time: item.Timestamp.Time, CPUCores: c.Usage.CPU.AsApproximateFloat64(), WorkingSet: c.Usage.Memory.Value()},
					From:   item.Timestamp.Add(-item.Window.Duration),
				})
			}
		}
		r.mu.Unlock()
	}
}

// addComponents records the measured containers of pods.
func (r *recorder) addComponents(pods []corev1.Pod) {
	comps := components(pods)
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, c := range comps {
		r.comps[k] = c
	}
}

// podMetrics reads one namespace's pod metrics from metrics.k8s.io.
func (p *kubePlatform) podMetrics(ctx context.Context, ns string) (podMetricsList, error) {
	var pm podMetricsList
	raw, err := readStream(ctx, p.c.kube.Discovery().RESTClient().Get().
		AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces", ns, "pods"), maxMetricsList, "the metrics API's answer for "+ns)
	if err != nil {
		return pm, fmt.Errorf("metrics API (metrics.k8s.io; is metrics-server installed? or name a Prometheus in the study): %w", err)
	}
	if err := json.Unmarshal(raw, &pm); err != nil {
		return pm, fmt.Errorf("metrics API: %w", err)
	}
	return pm, nil
}

// series returns every component's readings measured wholly within
// [start, end] (a CPU figure averaged over a span that began before start,
// in the warm-up or the cell before, is left out), in a stable order; src
// holds the readings (the recorder's, or Prometheus's). Spans longer than
// two sampling intervals without a reading are recorded as gaps.
func (r *recorder) series(src samples, start, end time.Time) []metrics.Series {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := make([]string, 0, len(r.comps))
	for k := range r.comps {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []metrics.Series
	for _, k := range keys {
		s := metrics.Series{Component: r.comps[k]}
		for _, x := range src[k] {
			if !x.From.Before(start) && !x.Time.After(end) {
				s.Samples = append(s.Samples, x.Sample)
			}
		}
		s.Gaps = gaps(s.Samples, start, end, 2*r.p.opts.SampleInterval)
		out = append(out, s)
	}
	return out
}

// gaps are the spans of [start, end] longer than limit without a sample.
func gaps(xs []metrics.Sample, start, end time.Time, limit time.Duration) []metrics.Gap {
	var out []metrics.Gap
	prev := start
	for _, x := range xs {
		if x.Time.Sub(prev) > limit {
			out = append(out, metrics.Gap{From: prev, To: x.Time})
		}
		prev = x.Time
	}
	if end.Sub(prev) > limit {
		out = append(out, metrics.Gap{From: prev, To: end})
	}
	return out
}
