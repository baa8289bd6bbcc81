package cluster

import (
	"sort"
	"sync"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
)

// DefaultSampleInterval is twice a second, finer than cAdvisor's default.
const DefaultSampleInterval = 500 * time.Millisecond

// Sampler records every container's CPU (cores, from its cumulative CPU
// time) and memory working set, as cAdvisor does, at a fixed interval.
// Containers that appear while it runs are picked up at the next tick.
type Sampler struct {
	l        *Lab
	interval time.Duration
	quit     chan struct{}
	done     chan struct{}

	mu     sync.Mutex
	tracks map[string]*track
}

type track struct {
	series  metrics.Series
	lastCPU uint64
	lastT   time.Time
}

// StartSampler starts sampling every interval (DefaultSampleInterval when
// zero) until Stop.
func (l *Lab) StartSampler(interval time.Duration) *Sampler {
	if interval <= 0 {
		interval = DefaultSampleInterval
	}
	s := &Sampler{l: l, interval: interval, quit: make(chan struct{}), done: make(chan struct{}), tracks: map[string]*track{}}
	s.tick()
	go s.loop()
	return s
}

func (s *Sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			s.tick()
		}
	}
}

func (s *Sampler) tick() {
	for _, p := range s.l.Pods() {
		for _, c := range p.Containers {
			u, err := s.l.cg.read(c.Cgroup)
			if err != nil {
				continue // removed meanwhile
			}
			now := time.Now()
			s.mu.Lock()
			tr, ok := s.tracks[c.Cgroup]
			if !ok {
				tr = &track{series: metrics.Series{Component: component(p, c)}}
				s.tracks[c.Cgroup] = tr
			} else if dt := now.Sub(tr.lastT).Seconds(); dt > 0 && u.CPUNanos >= tr.lastCPU {
				tr.series.Samples = append(tr.series.Samples, metrics.Sample{Time: now,
					CPUCores: float64(u.CPUNanos-tr.lastCPU) / 1e9 / dt, WorkingSet: u.WorkingSet})
			}
			tr.lastCPU, tr.lastT = u.CPUNanos, now
			s.mu.Unlock()
		}
	}
}

// component describes a container for the results.
func component(p Pod, c Container) metrics.Component {
	role := c.Role
	if role == "" {
		role = metrics.RoleApp
	}
	return metrics.Component{Role: role, Node: p.Node, Namespace: p.Namespace, Pod: p.Name, Container: c.Name,
		Requirements: c.Resources.Effective()}
}

// Stop ends sampling after one last sample; Window still reads the
// samples afterwards.
func (s *Sampler) Stop() {
	close(s.quit)
	<-s.done
	s.tick()
}

// Window returns the samples whose interval is centred inside [start,
// end], a zero time leaving that side open, for every container with at
// least one such sample. A sample's interval runs from the one before it
// (the first's, one interval back): the last one Stop takes is short and
// mostly after the load, and read as a full interval it would be centred
// inside the window and pull the mean towards idle. Series are sorted by
// namespace, pod and container.
func (s *Sampler) Window(start, end time.Time) []metrics.Series {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]metrics.Series, 0, len(s.tracks))
	for _, tr := range s.tracks {
		cut := metrics.Series{Component: tr.series.Component}
		var from time.Time
		for i, x := range tr.series.Samples {
			if i == 0 {
				from = x.Time.Add(-s.interval)
			}
			mid := from.Add(x.Time.Sub(from) / 2)
			from = x.Time
			if (start.IsZero() || !mid.Before(start)) && (end.IsZero() || !mid.After(end)) {
				cut.Samples = append(cut.Samples, x)
			}
		}
		if len(cut.Samples) > 0 {
			out = append(out, cut)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Component, out[j].Component
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Pod != b.Pod {
			return a.Pod < b.Pod
		}
		return a.Container < b.Container
	})
	return out
}
