package analysis

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/meshbench/meshbench/internal/results"
)

// Exclusion is a cell left out of every figure, and why.
type Exclusion struct {
	Summary results.Summary `json:"summary"`
	// Kind is "failed", "distorted", "noisy" or "unusable".
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
	// Distorted holds the figures of a cell whose load generator set its
	// pace (Kind "distorted"), when it has any: what the path did is at
	// least what they show, never the figure itself.
	Distorted *Rep `json:"-"`
}

// KindNoisy is the exclusion of a cell measured while the host was busy
// with something else.
const KindNoisy = "noisy"

// exclusion decides whether a cell's numbers may be used. A cell is left
// out when it failed, when any verification check failed (the mesh was not
// what it claimed to be), when its load generator distorted the result, or
// when it holds no latency data. c is nil when the cell file is unreadable.
func exclusion(s results.Summary, c *cellFile, readErr error) *Exclusion {
	var failed []string
	for _, ch := range s.Verification {
		if !ch.Pass {
			f := ch.Name
			if ch.Detail != "" {
				f += " (" + ch.Detail + ")"
			}
			failed = append(failed, f)
		}
	}
	switch {
	case len(failed) > 0:
		r := "verification failed: " + strings.Join(failed, ", ")
		if s.Reason != "" && !strings.HasPrefix(s.Reason, "verification failed") {
			r = s.Reason + "; " + r
		}
		return &Exclusion{Summary: s, Kind: results.StatusFailed, Reason: r}
	case s.Status == results.StatusFailed:
		return &Exclusion{Summary: s, Kind: results.StatusFailed, Reason: cmp.Or(s.Reason, "failed")}
	case readErr != nil:
		return &Exclusion{Summary: s, Kind: "unusable", Reason: fmt.Sprintf("cell file unreadable: %v", readErr)}
	case s.Status == results.StatusDistorted || (c.Merged != nil && c.Merged.Distorted):
		var why []string
		if s.Reason != "" {
			why = append(why, s.Reason)
		}
		if c.Merged != nil {
			for _, w := range c.Merged.Warnings {
				why = addReason(why, w)
			}
		}
		if len(why) == 0 {
			why = append(why, "the load generator shaped the result")
		}
		return &Exclusion{Summary: s, Kind: results.StatusDistorted, Reason: strings.Join(why, "; ")}
	case s.Noisy:
		r := "a noisy host: " + s.NoiseReason()
		if n := 1 + len(s.Attempts); n > 1 {
			r += fmt.Sprintf("; still noisy after %d attempts", n)
		}
		return &Exclusion{Summary: s, Kind: KindNoisy, Reason: r}
	case s.Status != results.StatusOK:
		return &Exclusion{Summary: s, Kind: "unusable", Reason: fmt.Sprintf("status %q", s.Status)}
	case c.Merged == nil || c.Merged.Latency == nil || c.Merged.Latency.Count() == 0:
		return &Exclusion{Summary: s, Kind: "unusable", Reason: "no latency data"}
	case !c.Merged.End.After(c.Merged.Start):
		return &Exclusion{Summary: s, Kind: "unusable", Reason: "measured phase has no duration"}
	}
	return nil
}

// addReason adds r to the reasons unless one already says it; a longer
// reason that says more replaces a shorter one it contains.
func addReason(reasons []string, r string) []string {
	for i, x := range reasons {
		switch {
		case strings.Contains(x, r):
			return reasons
		case strings.Contains(r, x):
			reasons[i] = r
			return reasons
		}
	}
	return append(reasons, r)
}
