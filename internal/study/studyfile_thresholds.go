package study

import (
	"fmt"
	"slices"

	"github.com/meshbench/meshbench/internal/analysis"
)

// validateThresholds checks every threshold, each error at its line: its
// form, its metric (analysis.ThresholdMetrics), its mesh, and that the
// study measures the figure at all, so that a threshold that could never
// be met is refused before anything runs rather than failing the run.
func (s *Study) validateThresholds() FieldErrors {
	var errs FieldErrors
	names := make([]string, len(s.Meshes))
	for i, m := range s.Meshes {
		names[i] = m.Name
	}
	hasBaseline := slices.ContainsFunc(s.Meshes, func(m Mesh) bool {
		return m.Name == analysis.DefaultBaseline || m.Profile == BaselineProfile
	})
	for i, text := range s.Thresholds {
		path := fmt.Sprintf("thresholds[%d]", i)
		add := func(format string, a ...any) { errs = append(errs, asFieldError(fieldError(path, format, a...))) }
		t, err := analysis.ParseThreshold(string(text))
		if err != nil {
			add("%v", err)
			continue
		}
		m, ok := analysis.LookupThresholdMetric(t.Metric)
		if !ok {
			known := analysis.ThresholdMetricNames()
			if c := closest(t.Metric, known); c != "" {
				add("unknown metric %q; did you mean %s? known: %s", t.Metric, c, joinNames(known))
			} else {
				add("unknown metric %q; known: %s", t.Metric, joinNames(known))
			}
			continue
		}
		if t.Mesh != "" {
			j := slices.Index(names, t.Mesh)
			switch {
			case j < 0:
				if c := closest(t.Mesh, names); c != "" {
					add("%q is not a mesh of the study; did you mean %s? meshes: %s", t.Mesh, c, joinNames(names))
				} else {
					add("%q is not a mesh of the study; meshes: %s", t.Mesh, joinNames(names))
				}
				continue
			case s.Meshes[j].Profile == BaselineProfile && !m.OfBaseline:
				add("%s runs the baseline profile, with no mesh to measure, so no %s; of a baseline only %s applies", t.Mesh, t.Metric, joinNames(baselineMetrics()))
				continue
			}
		}
		switch {
		case m.Added && !hasBaseline:
			add("%s is measured against a baseline mesh (profile %s), and this study runs none", t.Metric, BaselineProfile)
		case !m.Search && !s.HasCells():
			add("%s is measured by cells at a fixed load, and this study runs a capacity search alone", t.Metric)
		case !m.Cells && s.Search == nil:
			add("%s is measured by a capacity search, and this study runs none (add a search section)", t.Metric)
		case t.Metric == "capacity_rps" && s.Search != nil && s.Search.overConnections():
			add("capacity_rps is a rate, and this study's search finds a connection ceiling; use capacity_ratio")
		}
	}
	return errs
}

// thresholdOf is the mesh a threshold names, "" for every mesh or for a
// threshold that does not parse (validateThresholds says why).
func thresholdOf(text analysis.ThresholdText) string {
	t, err := analysis.ParseThreshold(string(text))
	if err != nil {
		return ""
	}
	return t.Mesh
}

// thresholdsOnPlatform leaves out the thresholds of meshes left out of
// the study on its platform (Mesh.Platforms), as their published figures
// are.
func (s *Study) thresholdsOnPlatform(left map[string]bool) {
	s.Thresholds = slices.DeleteFunc(s.Thresholds, func(t analysis.ThresholdText) bool { return left[thresholdOf(t)] })
}

// baselineMetrics are the threshold metrics a baseline mesh has.
func baselineMetrics() []string {
	var out []string
	for _, m := range analysis.ThresholdMetrics {
		if m.OfBaseline {
			out = append(out, m.Name)
		}
	}
	return out
}
