package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/cost"
	"github.com/meshbench/meshbench/internal/metrics"
)

// cost prices the representative configuration two ways: by requests,
// packing the measured pods' requests onto nodes (the 50-tenant study's
// model), and by consumption, pricing the data plane's measured usage per
// vCPU-month and GB-month (the Online Boutique study's), with an interval
// from the repetitions.
func (b *builder) cost() Section {
	s := Section{ID: "cost", Title: "Cost"}
	d := b.d
	if !b.anyResources() {
		return s
	}
	rep := d.Representative()
	catalog, err := cost.LoadCatalog("")
	if err != nil {
		return Section{ID: "cost", Title: "Cost", Blocks: []Block{text("No cost: " + err.Error())}}
	}
	s.Blocks = append(s.Blocks, text("At "+rep.Label()+". Prices are list prices from meshbench's built-in catalog; `meshbench cost --results` prints the same figures and prices other machine types, unit prices and request rates."))
	s.Blocks = append(s.Blocks, b.costByRequests(rep, catalog)...)
	s.Blocks = append(s.Blocks, b.costByConsumption(rep, catalog)...)
	return s
}

// costByRequests renders the cost package's recorded allocation, the one
// `meshbench cost --results` prints.
func (b *builder) costByRequests(rep analysis.LoadConfig, catalog *cost.Catalog) []Block {
	out := []Block{heading("By requests: nodes to hold what the pods ask for")}
	m, err := catalog.Machine(cost.DefaultNode)
	var e *cost.AllocationEstimate
	if err == nil {
		e, err = cost.RecordedAllocation(b.d, rep, m, catalog.PricesNote)
	}
	switch {
	case err != nil:
		return append(out, text("Not priced: "+err.Error()))
	case e == nil:
		return append(out, text("The results hold no application pods to pack."))
	}
	t := &Table{Header: []string{"Mesh", "Nodes", "Ideal nodes", "Monthly cost (USD)", "Increase (%)", "Ideal monthly cost (USD)", "Ideal increase (%)"}}
	for i, r := range e.Rows {
		nodes := fmt.Sprint(r.Nodes)
		if !r.PackingOptimal {
			nodes += " (or fewer)"
		}
		inc, idealInc := percent(r.IncreasePct), percent(r.IdealIncreasePct)
		if i == 0 {
			inc, idealInc = "—", "—" // the baseline, which the others are measured from
		}
		t.Rows = append(t.Rows, []string{r.Mesh, nodes, num(r.IdealNodes), fmt.Sprintf("%.2f", r.MonthlyCost),
			inc, fmt.Sprintf("%.2f", r.IdealMonthlyCost), idealInc})
	}
	return append(out,
		text(fmt.Sprintf("Every pod as the results recorded it, in every namespace: the application's pods (each with its own sidecar under a sidecar mesh) "+
			"and each mesh's %s, packed onto the fewest %s nodes. "+
			"Ideal nodes split pods as if they could be cut.", b.meshPodsText(), m.Name)),
		table(t),
		Block{Heading: "Assumptions", Code: strings.Join(e.Assumptions, "\n"), Collapsed: true})
}

// costByConsumption renders the cost package's per-repetition pricing, the
// medians of which `meshbench cost --results` prints, with intervals.
func (b *builder) costByConsumption(rep analysis.LoadConfig, catalog *cost.Catalog) []Block {
	out := []Block{heading("By consumption: the data plane's measured usage")}
	prices, err := cost.DefaultUnitPrices(catalog)
	if err != nil {
		return append(out, text("Not priced: "+err.Error()))
	}
	t := &Table{Header: []string{"Mesh", "Data plane CPU (cores)", "Data plane memory (MiB)", "Monthly cost (USD)", "CPU per 1000 req/s (cores)"}}
	withCP := len(b.meshesWith(analysis.RolePart(metrics.RoleControlPlane))) > 0
	if withCP {
		t.Header = append(t.Header, "Control plane CPU (cores)", "Control plane memory (MiB)", "Control plane monthly cost (USD)")
	}
	for _, mesh := range b.d.Meshes {
		g := b.d.Group(mesh, rep)
		if g == nil || len(g.Reps) == 0 || !b.d.HasPart(mesh, analysis.PartDataPlane) {
			continue
		}
		rows, err := cost.GroupConsumption(g, prices, nil)
		if err != nil {
			return append(out, text("Not priced: "+err.Error()))
		}
		var cores, gb, usd, per, cpCores, cpGB, cpUSD []float64
		for _, r := range rows {
			cores, gb, usd, per = append(cores, r.CPUCores), append(gb, r.MemoryGB), append(usd, r.MonthlyCost), append(per, r.CPUPer1000RPS)
			if c := r.ControlPlane; c != nil {
				cpCores, cpGB, cpUSD = append(cpCores, c.CPUCores), append(cpGB, c.MemoryGB), append(cpUSD, c.MonthlyCost)
			}
		}
		// A bill is paid on mean use: each figure is the mean over the
		// deployments, with MeanCI's calibrated Student's t interval.
		mean := func(xs []float64) analysis.Estimate {
			return analysis.MeanCI(analysis.RepSample(g.Reps, xs).MeanUnits())
		}
		row := []string{mesh, est(mean(cores), 1), est(mean(gb), 1024), est(mean(usd), 1), est(mean(per), 1)}
		if withCP {
			cp := []string{"—", "—", "—"}
			if len(cpCores) == len(g.Reps) {
				cp = []string{est(mean(cpCores), 1), est(mean(cpGB), 1024), est(mean(cpUSD), 1)}
			}
			row = append(row, cp...)
		}
		t.Rows = append(t.Rows, row)
	}
	if len(t.Rows) == 0 {
		return nil
	}
	cpNote := ""
	if withCP {
		cpNote = " The control plane (istiod on the lab under control_plane istiod) is priced alike, apart from the data plane's cost: it follows configuration, not traffic."
	}
	return append(out, text(fmt.Sprintf("Sidecars, node proxies and waypoints at their measured mean usage, priced at %s per vCPU-month and %s per GB-month (%s); "+
		"priced per repetition, and each figure is the mean over the deployments (a bill is paid on mean use, not median use) with its 95%% interval (Student's t, calibrated to cover 95%% on skewed data: docs/statistics.md).%s", dollars(prices.PerVCPUMonth), dollars(prices.PerGBMonth), prices.Source, cpNote)), table(t))
}

func dollars(v float64) string { return fmt.Sprintf("$%.2f", v) }

// percent formats an increase; one over a zero baseline has none.
func percent(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", v)
}

// meshPodsText names the mesh pods the results hold beyond sidecars, so
// that no text claims a control plane that was never measured.
func (b *builder) meshPodsText() string {
	var parts []string
	for _, p := range []struct {
		part analysis.Part
		name string
	}{
		{analysis.RolePart(metrics.RoleNodeProxy), "per-node proxies"},
		{analysis.RolePart(metrics.RoleCNI), "CNI agents"},
		{analysis.RolePart(metrics.RoleControlPlane), "control plane"},
		{analysis.RolePart(metrics.RoleWaypoint), "waypoints"},
	} {
		if len(b.meshesWith(p.part)) > 0 {
			parts = append(parts, p.name)
		}
	}
	if len(parts) == 0 {
		return "other pods (none recorded)"
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
