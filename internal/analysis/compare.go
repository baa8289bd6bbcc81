package analysis

// Verdict is what a difference with its interval allows one to say.
type Verdict int

// Verdicts.
const (
	// TooFewRuns: a side has fewer than two usable repetitions, so the
	// difference has no interval.
	TooFewRuns Verdict = iota
	// NoDifference: the interval includes zero. It is not a win for
	// either side.
	NoDifference
	Higher
	Lower
)

// Judge reads a difference.
func Judge(d Diff) Verdict {
	switch {
	case !d.Delta.Interval():
		return TooFewRuns
	case d.Delta.Lo > 0:
		return Higher
	case d.Delta.Hi < 0:
		return Lower
	}
	return NoDifference
}

// Change is one figure of one group compared between two runs of a study:
// Diff is run B minus run A.
type Change struct {
	Mesh   string
	Config LoadConfig
	Metric Metric
	Diff   Diff
}

// Regressed reports whether B is measurably worse than A.
func (c Change) Regressed() bool {
	v := Judge(c.Diff)
	return (v == Higher && !c.Metric.HigherIsBetter()) || (v == Lower && c.Metric.HigherIsBetter())
}

// Improved reports whether B is measurably better than A.
func (c Change) Improved() bool {
	v := Judge(c.Diff)
	return (v == Lower && !c.Metric.HigherIsBetter()) || (v == Higher && c.Metric.HigherIsBetter())
}

// Comparison is two runs of a study compared group by group.
type Comparison struct {
	A, B    *Dataset
	Changes []Change // in B's mesh and configuration order, then metric order
	// OnlyA and OnlyB name the groups ("mesh at config") one run lacks.
	OnlyA, OnlyB []string
}

// Compare compares every group the two runs share on the given metrics;
// metrics a group lacks in either run are skipped.
func Compare(a, b *Dataset, ms []Metric) *Comparison {
	c := &Comparison{A: a, B: b}
	for _, mesh := range b.Meshes {
		for _, cfg := range b.Configs {
			gb := b.Group(mesh, cfg)
			if gb == nil {
				continue
			}
			ga := a.Group(mesh, cfg)
			if ga == nil {
				c.OnlyB = append(c.OnlyB, mesh+" at "+cfg.Label())
				continue
			}
			for _, m := range ms {
				va, vb := ga.Values(m), gb.Values(m)
				if len(va) == 0 || len(vb) == 0 {
					continue
				}
				c.Changes = append(c.Changes, Change{Mesh: mesh, Config: cfg, Metric: m, Diff: Difference(va, vb)})
			}
		}
	}
	for _, mesh := range a.Meshes {
		for _, cfg := range a.Configs {
			if a.Group(mesh, cfg) != nil && b.Group(mesh, cfg) == nil {
				c.OnlyA = append(c.OnlyA, mesh+" at "+cfg.Label())
			}
		}
	}
	return c
}
