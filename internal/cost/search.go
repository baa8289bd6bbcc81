package cost

import (
	"strconv"
	"strings"
)

// feasible reports whether the pods fit on k nodes. It fills one node at a
// time: the node holding a pod of the largest remaining kind, with only
// maximal fillings (a pod that still fits could be moved onto the node
// without needing more nodes), then recurses on the rest.
func (p *packer) feasible(k int, counts []int) bool {
	first := -1
	for t, n := range counts {
		if n > 0 {
			first = t
			break
		}
	}
	if first < 0 {
		return true
	}
	if k == 0 || p.lowerBound(counts) > k {
		return false
	}
	key := countsKey(counts)
	if f, ok := p.failed[key]; ok && k <= f {
		return false
	}
	ok := p.fill(k, counts, make([]int, len(counts)), first, first, p.capacity)
	if !ok && !p.aborted {
		p.failed[key] = max(p.failed[key], k)
	}
	return ok
}

// fill chooses how many pods of kind t and later go on the node being
// filled, free being the room left on it, and recurses on the rest with
// k-1 nodes. Every call counts against the budget.
func (p *packer) fill(k int, counts, take []int, first, t int, free vec) bool {
	if p.steps++; p.steps > searchBudget {
		p.aborted = true
	}
	if p.aborted {
		return false
	}
	if t == len(counts) {
		for u := range counts {
			if counts[u] > take[u] && p.size[u].fits(free) {
				return false // not maximal
			}
		}
		for u := range counts {
			counts[u] -= take[u]
		}
		ok := p.feasible(k-1, counts)
		for u := range counts {
			counts[u] += take[u]
		}
		return ok
	}
	hi := min(counts[t], maxFit(free, p.size[t]))
	lo := 0
	switch {
	case t == len(counts)-1:
		lo = hi // leaving out a last-kind pod that fits is never maximal
	case t == first:
		lo = 1
	}
	for n := hi; n >= lo; n-- {
		take[t] = n
		if p.fill(k, counts, take, first, t+1, free.minus(p.size[t], int64(n))) {
			return true
		}
	}
	take[t] = 0
	return false
}

func countsKey(counts []int) string {
	var b strings.Builder
	for _, n := range counts {
		b.WriteString(strconv.Itoa(n))
		b.WriteByte(',')
	}
	return b.String()
}
