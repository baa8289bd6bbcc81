package cluster

import (
	"math"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	in := "cpu  300 0 60 900 5 0 10 4 0 0\ncpu0 100 0 20 400 1 0 5 2 0 0\ncpu1 200 0 40 500 4 1 4 2 0 0\nintr 1 2 3\n"
	got, err := parseProcStat([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	const tick = 1e9 / userHZ
	want := map[int]cpuTimes{0: {busy: 125 * tick, softirq: 5 * tick, steal: 2 * tick}, 1: {busy: 245 * tick, softirq: 4 * tick, steal: 2 * tick}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := parseProcStat([]byte("intr 1\n")); err == nil {
		t.Error("no per-CPU lines parsed")
	}
}

// TestAccountHostNoise checks the noise accounting on made-up counters: per
// CPU, busy time less the lab's own time, less the runner's, plus steal.
func TestAccountHostNoise(t *testing.T) {
	t.Parallel()
	const s = uint64(1e9) // one CPU-second in ns
	t0 := time.Unix(1000, 0)
	before := cpuSnapshot{t: t0,
		host: map[int]cpuTimes{0: {busy: 10 * s}, 1: {busy: 10 * s}},
		lab:  map[int]uint64{0: 5 * s, 1: 5 * s}, self: 1 * s}
	tests := []struct {
		name    string
		after   cpuSnapshot
		perCPU  bool
		noise   float64 // cores
		load    NodeCPU // node "load" on CPU 0
		appBusy float64 // node "app" on CPU 1
	}{
		{
			name: "quiet: the lab is all that ran",
			after: cpuSnapshot{t: t0.Add(10 * time.Second),
				host: map[int]cpuTimes{0: {busy: 15 * s}, 1: {busy: 18 * s}},
				lab:  map[int]uint64{0: 10 * s, 1: 13 * s}, self: 1 * s},
			noise: 0, load: NodeCPU{Name: "load", Role: "load", CPUs: 1, Busy: 0.5}, appBusy: 0.8,
		},
		{
			name: "a hog on the app CPU for half the window, and steal",
			after: cpuSnapshot{t: t0.Add(10 * time.Second),
				host: map[int]cpuTimes{0: {busy: 15 * s}, 1: {busy: 23 * s, steal: 1 * s}},
				lab:  map[int]uint64{0: 10 * s, 1: 13 * s}, self: 1 * s},
			noise: 0.6, load: NodeCPU{Name: "load", Role: "load", CPUs: 1, Busy: 0.5}, appBusy: 1.3,
		},
		{
			name: "the runner's own CPU is not noise",
			after: cpuSnapshot{t: t0.Add(10 * time.Second),
				host: map[int]cpuTimes{0: {busy: 17 * s}, 1: {busy: 18 * s}},
				lab:  map[int]uint64{0: 10 * s, 1: 13 * s}, self: 3 * s},
			noise: 0, load: NodeCPU{Name: "load", Role: "load", CPUs: 1, Busy: 0.7, Outside: 0.2}, appBusy: 0.8,
		},
		{
			// At a high rate the kernel carries the lab's packets in
			// softirq, charged to no cgroup: 0.3 cores on the app CPU.
			name: "the lab's softirq network work is not noise",
			after: cpuSnapshot{t: t0.Add(10 * time.Second),
				host: map[int]cpuTimes{0: {busy: 15 * s}, 1: {busy: 21 * s, softirq: 3 * s}},
				lab:  map[int]uint64{0: 10 * s, 1: 13 * s}, self: 1 * s},
			noise: 0, load: NodeCPU{Name: "load", Role: "load", CPUs: 1, Busy: 0.5}, appBusy: 1.1,
		},
		{
			// A hog's own CPU time is user time: charging softirq to the
			// lab leaves it counted.
			name: "a hog beside the lab's softirq is still noise",
			after: cpuSnapshot{t: t0.Add(10 * time.Second),
				host: map[int]cpuTimes{0: {busy: 15 * s}, 1: {busy: 25 * s, softirq: 3 * s}},
				lab:  map[int]uint64{0: 10 * s, 1: 13 * s}, self: 1 * s},
			noise: 0.4, load: NodeCPU{Name: "load", Role: "load", CPUs: 1, Busy: 0.5}, appBusy: 1.5,
		},
	}
	nodes := []nodeCPUs{{name: "load", role: "load", cpus: []int{0}}, {name: "app", role: "app", cpus: []int{1}}}
	for _, tt := range tests {
		h := account(before, tt.after, []int{0, 1}, nodes)
		if math.Abs(h.Noise()-tt.noise) > 1e-9 {
			t.Errorf("%s: noise %v cores, want %v (%+v)", tt.name, h.Noise(), tt.noise, h)
		}
		if h.CPUs != 2 || len(h.Nodes) != 2 {
			t.Fatalf("%s: %+v", tt.name, h)
		}
		if got := h.Nodes[0]; math.Abs(got.Busy-tt.load.Busy) > 1e-9 || math.Abs(got.Outside-tt.load.Outside) > 1e-9 || got.CPUs != 1 {
			t.Errorf("%s: load node %+v, want %+v", tt.name, got, tt.load)
		}
		if got := h.Nodes[1].Busy; math.Abs(got-tt.appBusy) > 1e-9 {
			t.Errorf("%s: app node busy %v, want %v", tt.name, got, tt.appBusy)
		}
	}
	// Where the lab's time is known only in total (cgroup v2), it comes off
	// the sum.
	after := cpuSnapshot{t: t0.Add(10 * time.Second), host: map[int]cpuTimes{0: {busy: 15 * s}, 1: {busy: 23 * s}}, labTotal: 10 * s, self: 1 * s}
	b2 := before
	b2.lab, b2.labTotal = nil, 0
	if h := account(b2, after, []int{0, 1}, nil); math.Abs(h.Noise()-0.8) > 1e-9 {
		t.Errorf("v2 accounting: noise %v, want 0.8", h.Noise())
	}
	after.host[1] = cpuTimes{busy: 23 * s, softirq: 5 * s}
	if h := account(b2, after, []int{0, 1}, nil); math.Abs(h.Noise()-0.3) > 1e-9 || math.Abs(h.Softirq-0.5) > 1e-9 {
		t.Errorf("v2 accounting with softirq: noise %v, softirq %v; want 0.3 and 0.5", h.Noise(), h.Softirq)
	}
}

// On cgroup v2 the kernel keeps no per-CPU time for a cgroup, so a node's
// time outside the lab comes from its own cgroup's total, for a node
// whose CPUs no other node shares; nodes sharing CPUs are not told apart.
func TestAccountHostNoiseV2Nodes(t *testing.T) {
	t.Parallel()
	const s = uint64(1e9)
	t0 := time.Unix(1000, 0)
	before := cpuSnapshot{t: t0, host: map[int]cpuTimes{0: {busy: 10 * s}, 1: {busy: 10 * s}},
		labTotal: 5 * s, nodes: map[string]uint64{"load": 2 * s, "app-1": 1 * s, "app-2": 2 * s}}
	// 10 s: the load node's cgroup used 6 s of CPU 0's 9 busy seconds (1 of
	// them softirq), so 2 s ran outside the lab there.
	after := cpuSnapshot{t: t0.Add(10 * time.Second), host: map[int]cpuTimes{0: {busy: 19 * s, softirq: 1 * s}, 1: {busy: 18 * s}},
		labTotal: 19 * s, nodes: map[string]uint64{"load": 8 * s, "app-1": 4 * s, "app-2": 7 * s}}
	nodes := []nodeCPUs{{name: "load", role: "load", cpus: []int{0}}, {name: "app-1", role: "app", cpus: []int{1}}, {name: "app-2", role: "app", cpus: []int{1}}}
	h := account(before, after, []int{0, 1}, nodes)
	if math.Abs(h.Noise()-0.2) > 1e-9 {
		t.Errorf("noise %v, want 0.2 (%+v)", h.Noise(), h)
	}
	if got := h.Nodes[0]; math.Abs(got.Outside-0.2) > 1e-9 || math.Abs(got.Busy-0.9) > 1e-9 {
		t.Errorf("load node %+v, want 0.9 busy, 0.2 outside", got)
	}
	for _, n := range h.Nodes[1:] {
		if n.Outside != 0 {
			t.Errorf("node %s sharing CPUs: outside %v, want none counted", n.Name, n.Outside)
		}
	}
}
