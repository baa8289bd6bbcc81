package cost

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func cpuPods(name string, milli int64, count int) Shape {
	return Shape{Name: name, Requests: Resources{MilliCPU: milli, Bytes: MiB}, Count: count}
}

func TestPack(t *testing.T) {
	t.Parallel()
	node := Bin{Capacity: Resources{MilliCPU: 7910, Bytes: 28 * GiB}, Pods: 110}
	tests := []struct {
		name    string
		shapes  []Shape
		bin     Bin
		want    int
		wantLB  int
		optimal bool
	}{
		{name: "nothing to place", bin: node, want: 0, wantLB: 0, optimal: true},
		{
			// 11 pods of 700m fit on 7910m: 200 pods need 19 nodes, while
			// the summed requests (140 cores) alone would allow 18.
			name:   "identical pods, cpu bound",
			shapes: []Shape{cpuPods("app", 700, 200)},
			bin:    node, want: 19, wantLB: 19, optimal: true,
		},
		{
			// 8 pods of 950m per node leave 310m, too little for a 500m
			// pod: 25 full nodes cannot take it, a 26th is needed.
			name:   "sidecars and a control plane",
			shapes: []Shape{cpuPods("app", 950, 200), cpuPods("istiod", 500, 1)},
			bin:    node, want: 26, wantLB: 25, optimal: true,
		},
		{
			name:   "memory bound",
			shapes: []Shape{{Name: "big", Requests: Resources{MilliCPU: 100, Bytes: 10 * GiB}, Count: 7}},
			bin:    node, want: 4, wantLB: 4, optimal: true,
		},
		{
			name:   "pod slots bound",
			shapes: []Shape{cpuPods("tiny", 1, 30)},
			bin:    Bin{Capacity: node.Capacity, Pods: 10}, want: 3, wantLB: 3, optimal: true,
		},
		{
			// First-fit decreasing opens 3 nodes here ({10,6}, {6,6,5,1},
			// {5}), and so do the other heuristics; the optimum is 2
			// ({10,5,5}, {6,6,6,1}).
			name: "heuristics are not optimal",
			shapes: []Shape{
				cpuPods("a", 10, 1), cpuPods("b", 6, 3), cpuPods("c", 5, 2), cpuPods("d", 1, 1),
			},
			bin:  Bin{Capacity: Resources{MilliCPU: 20, Bytes: GiB}},
			want: 2, wantLB: 2, optimal: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Pack(tc.shapes, tc.bin)
			if err != nil {
				t.Fatal(err)
			}
			if got.Nodes != tc.want || got.LowerBound != tc.wantLB || got.Optimal != tc.optimal {
				t.Errorf("Pack = %+v, want nodes %d, lower bound %d, optimal %v", got, tc.want, tc.wantLB, tc.optimal)
			}
		})
	}
}

func TestHeuristicsAloneAreWorse(t *testing.T) {
	t.Parallel()
	// The same instance as above: the search, not the heuristics, finds 2.
	shapes := []Shape{cpuPods("a", 10, 1), cpuPods("b", 6, 3), cpuPods("c", 5, 2), cpuPods("d", 1, 1)}
	if got := heuristic(shapes, Bin{Capacity: Resources{MilliCPU: 20, Bytes: GiB}}); got != 3 {
		t.Fatalf("heuristic = %d, want 3", got)
	}
}

// heuristic runs Pack's quick heuristics alone.
func heuristic(shapes []Shape, bin Bin) int {
	p, counts := newPacker(shapes, bin)
	return p.heuristic(counts)
}

func TestPackErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		shapes []Shape
		bin    Bin
		want   string
	}{
		{"pod larger than a node", []Shape{cpuPods("huge", 9000, 1)}, Bin{Capacity: Resources{MilliCPU: 8000, Bytes: GiB}}, "does not fit on an empty node"},
		{"negative count", []Shape{cpuPods("x", 1, -1)}, Bin{Capacity: Resources{MilliCPU: 8000, Bytes: GiB}}, "must not be negative"},
		{"negative slots", []Shape{cpuPods("x", 1, 1)}, Bin{Capacity: Resources{MilliCPU: 8000, Bytes: GiB}, Pods: -1}, "must not be negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Pack(tc.shapes, tc.bin)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Pack error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestPackMatchesExhaustiveSearch compares Pack with a brute-force search
// over every assignment of pods to nodes, on random instances of up to 10
// pods in two resources and pod slots. Some of them defeat the quick
// heuristics; the test checks that it met some, so that it does test the
// exact search.
func TestPackMatchesExhaustiveSearch(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 2024))
	beatHeuristics := 0
	for i := range 4000 {
		c, m := 20+rng.Int64N(30), 20+rng.Int64N(30)
		bin := Bin{Capacity: Resources{MilliCPU: c, Bytes: m}, Pods: rng.IntN(6)}
		var shapes []Shape
		total := 0
		for k := range 1 + rng.IntN(5) {
			n := 1 + rng.IntN(4)
			if total+n > 10 {
				break
			}
			total += n
			shapes = append(shapes, Shape{Name: string(rune('a' + k)), Requests: Resources{MilliCPU: 1 + rng.Int64N(c/2), Bytes: 1 + rng.Int64N(m/2)}, Count: n})
		}
		got, err := Pack(shapes, bin)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		want := exhaustive(shapes, bin)
		if got.Nodes != want || !got.Optimal || got.LowerBound > want {
			t.Fatalf("case %d: shapes %+v bin %+v: Pack = %+v, exhaustive search = %d", i, shapes, bin, got, want)
		}
		if heuristic(shapes, bin) > want {
			beatHeuristics++
		}
	}
	t.Logf("heuristics beaten in %d instances", beatHeuristics)
	if beatHeuristics == 0 {
		t.Fatal("the heuristics alone solved every instance; the test exercises nothing beyond them")
	}
}

// exhaustive tries every placement of every pod, pruning only placements
// no better than the best found.
func exhaustive(shapes []Shape, bin Bin) int {
	var pods []Resources
	for _, s := range shapes {
		for range s.Count {
			pods = append(pods, s.Requests)
		}
	}
	slots := bin.Pods
	if slots == 0 {
		slots = len(pods)
	}
	type node struct {
		used Resources
		pods int
	}
	best := len(pods)
	var place func(i int, nodes []node)
	place = func(i int, nodes []node) {
		if len(nodes) >= best {
			return
		}
		if i == len(pods) {
			best = len(nodes)
			return
		}
		for j := range nodes {
			u := nodes[j].used.Add(pods[i])
			if u.MilliCPU <= bin.Capacity.MilliCPU && u.Bytes <= bin.Capacity.Bytes && nodes[j].pods < slots {
				old := nodes[j]
				nodes[j] = node{u, old.pods + 1}
				place(i+1, nodes)
				nodes[j] = old
			}
		}
		place(i+1, append(nodes, node{pods[i], 1}))
	}
	place(0, nil)
	return best
}
