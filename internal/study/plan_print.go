package study

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/search"
)

// WriteText prints the plan for a person: what runs, how it is scaled, one
// line per cell in run order, and the estimated duration.
func (p *Plan) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "study %s (sha256 %.12s) on the %s platform\n", p.Study, p.StudySHA256, p.Platform)
	order := "in the order written"
	if p.Shuffle {
		order = fmt.Sprintf("shuffled within each round (seed %d)", p.Seed)
	}
	if c := p.Search; c != nil {
		budget := ""
		if c.Budget > 0 {
			budget = fmt.Sprintf(", at most %s of trials per mesh", c.Budget)
		}
		unit := "req/s"
		if p.SearchOver == results.OverConnections {
			unit = "connections held open"
		}
		from := fmt.Sprintf("%g %s", c.Start, unit)
		if f := p.SearchStartFraction; f > 0 {
			from = fmt.Sprintf("%g of each mesh's capacity as the first deployment calibrates it (at least %g %s)", f, c.Start, unit)
		}
		line := fmt.Sprintf("capacity search at %s: from %s, x%g until the SLO has been met and broken, then %d trials where a fit of every trial puts the capacity (the rate a trial breaks the SLO with probability %g), each at least %s and %d requests; a 95%% interval from %d bootstrap resamples of the whole search, a bound if it stops short%s",
			c.SLO, from, c.Growth, c.Trials, search.BreachProbability, c.Trial, c.MinRequests, c.Resamples, budget)
		if len(p.Cells) == 0 {
			fmt.Fprintf(&b, "meshes: %s, their trials interleaved, %s\n", strings.Join(p.Meshes, ", "), order)
			fmt.Fprintf(&b, "%s; estimated %s\n", line, round(p.Estimate))
			_, err := io.WriteString(w, b.String())
			return err
		}
		fmt.Fprintf(&b, "after the cells below, a %s; estimated with the cells\n", line)
	}
	reps := fmt.Sprintf("%d repetitions", p.Repetitions)
	if p.MaxRepetitions > p.Repetitions {
		reps = fmt.Sprintf("a pilot of %d repetitions, whose spread plans the total, at most %d, for every mesh's p50 overhead to have a 95%% interval within ±%.0f%% of itself (the cells below are the pilot's)",
			p.Repetitions, p.MaxRepetitions, 100*p.CI)
	}
	reps += ", in " + plural(p.Deployments, "independent deployment") + " (each its own platform, installs and calibration)"
	fmt.Fprintf(&b, "meshes: %s, %s; %s\n", strings.Join(p.Meshes, ", "), order, reps)
	fmt.Fprintf(&b, "scaling: %s\n", p.scalingText())
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	fmt.Fprintf(&b, "%d cells, %s, estimated %s\n\n", len(p.Cells), plural(p.Groups, "workload shape"), round(p.Estimate))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tMESH\tDEP\tREP\tPARAMS\tWORKLOAD\tLOAD\tEST")
	for i, c := range p.Cells {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", i+1, c.Mesh.Name, c.Deployment, c.Repetition, paramsText(c.Params),
			workloadText(c), loadText(c.Load), round(c.Estimate))
	}
	return tw.Flush()
}

func (p *Plan) scalingText() string {
	sc := p.Scaling
	switch {
	case sc.Mode == results.ScaleNone:
		return "none: the study runs as written"
	case sc.Mode == results.ScaleFactor:
		return fmt.Sprintf("open-loop rates, their connections and request counts x %g (--scale)", sc.Factor)
	case sc.Mode == results.ScaleTenants && sc.TenantRate == 0:
		deployed := "only those deployed"
		if sc.Deployed == DeployAll {
			deployed = "all deployed"
		}
		return fmt.Sprintf("tenants: %s of the study's %d tenants loaded (%s), each at the study's rate unless the largest count would offer more than %.0f%% of the slowest mesh's capacity, measured at run time; rates below are as written, durations as capped",
			tenantsText(sc.Tenants), sc.StudyTenants, deployed, 100*sc.Fraction)
	case sc.Mode == results.ScaleTenants:
		return fmt.Sprintf("tenants: %s", sc.Note)
	case sc.Factor == 0:
		return fmt.Sprintf("calibrated at run time: short closed-loop measurements find each mesh's capacity, and open-loop rates are scaled to offer %.0f%% of the slowest's; rates and request counts below are as written, durations as capped", 100*sc.Fraction)
	}
	return fmt.Sprintf("calibrated: x %.4g (%s)", sc.Factor, sc.Note)
}

func paramsText(params map[string]string) string {
	if len(params) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		parts = append(parts, k+"="+params[k])
	}
	return strings.Join(parts, " ")
}

func workloadText(c Cell) string {
	s := fmt.Sprintf("g%d ns=%d", c.Group, c.Namespaces)
	for _, svc := range slices.Sorted(maps.Keys(c.Replicas)) {
		s += fmt.Sprintf(" %s=%d", svc, c.Replicas[svc])
	}
	return s + fmt.Sprintf(" pods=%d", c.Pods)
}

// loadText describes a cell's load in one short phrase.
func loadText(l infra.LoadSpec) string {
	o := l.Options
	var parts []string
	if o.Rate > 0 {
		parts = append(parts, fmt.Sprintf("open %g req/s", o.Rate))
	} else {
		parts = append(parts, "closed")
	}
	parts = append(parts, fmt.Sprintf("c=%d", o.Connections))
	if o.Requests > 0 {
		parts = append(parts, fmt.Sprintf("n=%d", o.Requests))
	} else {
		parts = append(parts, o.Duration.String())
	}
	if o.Warmup > 0 {
		parts = append(parts, "+"+o.Warmup.String()+" warm-up")
	}
	if l.PerNamespace {
		parts = append(parts, "per namespace")
	}
	if o.NoKeepAlive {
		parts = append(parts, "no keep-alive")
	}
	if o.ConnRequests > 0 {
		parts = append(parts, fmt.Sprintf("%d req/conn", o.ConnRequests))
	}
	if o.HTTP2 {
		parts = append(parts, "h2")
	}
	if o.GRPC {
		parts = append(parts, "grpc")
	}
	return strings.Join(append(parts, string(l.Path)), " ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
