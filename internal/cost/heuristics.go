package cost

import "sort"

// heuristic is the fewest nodes any of the quick heuristics finds: first
// fit decreasing with "largest" taken three ways (the scarcest resource's
// share, CPU, memory), dot product, and interleaved first fit.
func (p *packer) heuristic(counts []int) int {
	best := 0
	for _, key := range []func(v vec) float64{
		func(vec) float64 { return 0 }, // the packer's own order
		func(v vec) float64 { return float64(v[0]) },
		func(v vec) float64 { return float64(v[1]) },
	} {
		order := make([]int, len(counts))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(i, j int) bool { return key(p.size[order[i]]) > key(p.size[order[j]]) })
		if n := p.firstFit(order, counts); best == 0 || n < best {
			best = n
		}
	}
	return min(best, p.dotProduct(counts), p.interleaved(counts))
}

// interleaved places pods one at a time by first fit, the kinds mixed in
// proportion to their counts rather than one kind after another, so that
// each node gets a share of each: what packs nodes full when the pod limit,
// not CPU or memory, binds.
func (p *packer) interleaved(counts []int) int {
	total := 0
	for _, n := range counts {
		total += n
	}
	placed := make([]int, len(counts))
	var free []vec
	for i := range total {
		// The kind furthest behind its proportional share goes next.
		next, behind := 0, -1.0
		for t, n := range counts {
			if d := float64(n)*float64(i+1)/float64(total) - float64(placed[t]); placed[t] < n && d > behind {
				next, behind = t, d
			}
		}
		placed[next]++
		size := p.size[next]
		j := 0
		for j < len(free) && !size.fits(free[j]) {
			j++
		}
		if j == len(free) {
			free = append(free, p.capacity)
		}
		free[j] = free[j].minus(size, 1)
	}
	return len(free)
}

// dotProduct fills one node at a time, each time adding the pod whose
// requests, as shares of a node, best match the room left (the largest dot
// product), so that pods heavy in different resources share nodes. It
// often beats first fit when pods are many and small.
func (p *packer) dotProduct(counts []int) int {
	left := append([]int(nil), counts...)
	remaining := 0
	for _, n := range left {
		remaining += n
	}
	nodes := 0
	for remaining > 0 {
		nodes++
		free := p.capacity
		for {
			best, bestScore := -1, -1.0
			for t, n := range left {
				if n == 0 || !p.size[t].fits(free) {
					continue
				}
				var score float64
				for d := range free {
					if p.capacity[d] > 0 {
						score += float64(p.size[t][d]) * float64(free[d]) / (float64(p.capacity[d]) * float64(p.capacity[d]))
					}
				}
				if score > bestScore {
					best, bestScore = t, score
				}
			}
			if best < 0 {
				break
			}
			free = free.minus(p.size[best], 1)
			left[best]--
			remaining--
		}
	}
	return nodes
}

// firstFit places each kind's pods in the given order of kinds, each on
// the first node with room, opening a node when none has. Identical pods
// are placed as many at a time as fit, which is what placing them one by
// one does.
func (p *packer) firstFit(order, counts []int) int {
	var free []vec
	for _, t := range order {
		n := counts[t]
		for i := range free {
			k := min(n, maxFit(free[i], p.size[t]))
			free[i] = free[i].minus(p.size[t], int64(k))
			n -= k
		}
		for n > 0 {
			k := min(n, maxFit(p.capacity, p.size[t]))
			free = append(free, p.capacity.minus(p.size[t], int64(k)))
			n -= k
		}
	}
	return len(free)
}
