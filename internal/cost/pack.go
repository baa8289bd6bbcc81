package cost

import (
	"fmt"
	"sort"
)

// Shape is a kind of pod and how many of them there are.
type Shape struct {
	Name     string    `json:"name"`
	Requests Resources `json:"requests"`
	Count    int       `json:"count"`
}

// Bin is what one node offers pods once its DaemonSets are on it. Every
// node carries every DaemonSet, the nodes added for more pods included, so
// subtracting them from each node's allocatable is exact.
type Bin struct {
	Capacity Resources
	// Pods is how many more pods the node takes; 0 means no limit.
	Pods int
}

// Packing is how many nodes a set of pods needs.
type Packing struct {
	Nodes int `json:"nodes"`
	// LowerBound is the fewest nodes the summed requests, or any one kind
	// of pod alone, allow.
	LowerBound int `json:"lower_bound"`
	// Optimal is true when Nodes is proven to be the fewest possible.
	Optimal bool `json:"optimal"`
}

// searchBudget bounds the exact search, in steps of filling a node (about
// a tenth of a second); past it the best packing found so far is returned,
// not proven optimal.
const searchBudget = 200_000

// vec is a pod or a free space in three dimensions: millicores, bytes and
// pod slots.
type vec [3]int64

func (v vec) fits(free vec) bool { return v[0] <= free[0] && v[1] <= free[1] && v[2] <= free[2] }

func (v vec) minus(o vec, n int64) vec {
	return vec{v[0] - o[0]*n, v[1] - o[1]*n, v[2] - o[2]*n}
}

// maxFit is how many pods of this size fit in free. Every pod takes a slot,
// so the answer is finite.
func maxFit(free, size vec) int {
	best := int64(-1)
	for d := range size {
		if size[d] > 0 && (best < 0 || free[d]/size[d] < best) {
			best = free[d] / size[d]
		}
	}
	return int(max(best, 0))
}

// Pack finds the fewest nodes that hold every pod: pods do not split, and
// each node holds pods whose requests and count fit its Bin. Quick
// heuristics give a first answer; an exact search (bin completion over pod
// kinds, with memoized failures) then tries to do with fewer, down to the
// lower bound, within searchBudget.
func Pack(shapes []Shape, bin Bin) (Packing, error) {
	if bin.Pods < 0 {
		return Packing{}, fmt.Errorf("pod slots per node must not be negative")
	}
	for _, s := range shapes {
		if s.Count < 0 || s.Requests.MilliCPU < 0 || s.Requests.Bytes < 0 {
			return Packing{}, fmt.Errorf("pod %s: count and requests must not be negative", s.Name)
		}
		if s.Count > 0 && (s.Requests.MilliCPU > bin.Capacity.MilliCPU || s.Requests.Bytes > bin.Capacity.Bytes) {
			return Packing{}, fmt.Errorf("pod %s (%v) does not fit on an empty node, which offers %v", s.Name, s.Requests, bin.Capacity)
		}
	}
	p, counts := newPacker(shapes, bin)
	res := Packing{Nodes: p.heuristic(counts), LowerBound: p.lowerBound(counts)}
	res.Optimal = res.Nodes == res.LowerBound
	for k := res.Nodes - 1; k >= res.LowerBound && !res.Optimal; k-- {
		ok := p.feasible(k, counts)
		if p.aborted {
			break
		}
		if !ok {
			res.Optimal = true
			break
		}
		res.Nodes, res.Optimal = k, k == res.LowerBound
	}
	return res, nil
}

// newPacker merges pods of equal requests into kinds, orders the kinds
// largest first, by the share of a node a pod's scarcest resource takes,
// and returns their counts in that order.
func newPacker(shapes []Shape, bin Bin) (*packer, []int) {
	// Pods of equal requests are one kind to the search, whatever their
	// names, so that it does not try their permutations.
	var kinds []Shape
	index := map[Resources]int{}
	total := 0
	for _, s := range shapes {
		if s.Count <= 0 {
			continue
		}
		total += s.Count
		if i, ok := index[s.Requests]; ok {
			kinds[i].Count += s.Count
			continue
		}
		index[s.Requests] = len(kinds)
		kinds = append(kinds, s)
	}
	slots := int64(bin.Pods)
	if slots == 0 {
		slots = int64(max(total, 1))
	}
	p := &packer{capacity: vec{bin.Capacity.MilliCPU, bin.Capacity.Bytes, slots}, failed: map[string]int{}}
	sort.SliceStable(kinds, func(i, j int) bool {
		return p.share(kinds[i].Requests) > p.share(kinds[j].Requests)
	})
	counts := make([]int, len(kinds))
	for i, s := range kinds {
		p.size = append(p.size, vec{s.Requests.MilliCPU, s.Requests.Bytes, 1})
		counts[i] = s.Count
	}
	return p, counts
}

type packer struct {
	capacity vec
	size     []vec // per pod kind, largest first
	steps    int
	aborted  bool
	// failed maps remaining pod counts to the most nodes known not to
	// hold them.
	failed map[string]int
}

func (p *packer) share(r Resources) float64 {
	var s float64
	for d, v := range [3]int64{r.MilliCPU, r.Bytes, 1} {
		if p.capacity[d] > 0 {
			s = max(s, float64(v)/float64(p.capacity[d]))
		}
	}
	return s
}

// lowerBound is the most nodes any one resource's total needs, or any one
// kind of pod alone needs (when, say, only 10 fit on a node, 1200 need 120
// nodes whatever else has room).
func (p *packer) lowerBound(counts []int) int {
	var sum vec
	lb := 0
	for t, n := range counts {
		if n > 0 {
			sum = sum.minus(p.size[t], -int64(n))
			per := maxFit(p.capacity, p.size[t])
			lb = max(lb, (n+per-1)/per)
		}
	}
	for d := range sum {
		if p.capacity[d] > 0 {
			lb = max(lb, int((sum[d]+p.capacity[d]-1)/p.capacity[d]))
		}
	}
	return lb
}
