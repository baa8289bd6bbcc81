package cost

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Write writes the estimate as text, a table with its assumptions, or,
// when format is "json", as the list of rows.
func (e *AllocationEstimate) Write(w io.Writer, format string) error {
	if format == "json" {
		return writeJSON(w, e.Rows)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nAssumptions\n", e.Title)
	for _, a := range e.Assumptions {
		fmt.Fprintf(&b, "  %s\n", a)
	}
	b.WriteString("\n")
	published, unproven := false, false
	for _, r := range e.Rows {
		published = published || r.PublishedIncreasePct != nil
		unproven = unproven || !r.PackingOptimal
	}
	head := []string{"MESH", "NODES", "IDEAL NODES", "MONTHLY", "INCREASE", "IDEAL MONTHLY", "IDEAL INCREASE"}
	if published {
		head = append(head, "STUDY")
	}
	cells := [][]string{head}
	for i, r := range e.Rows {
		nodes := strconv.Itoa(r.Nodes)
		if !r.PackingOptimal {
			nodes += "*"
		}
		line := []string{r.Mesh, nodes, fmt.Sprintf("%.2f", r.IdealNodes), dollars(r.MonthlyCost),
			increase(i == 0, r.IncreasePct), dollars(r.IdealMonthlyCost), increase(i == 0, r.IdealIncreasePct)}
		if published {
			s := ""
			if r.PublishedIncreasePct != nil {
				s = fmt.Sprintf("+%g%%", *r.PublishedIncreasePct)
			}
			line = append(line, s)
		}
		cells = append(cells, line)
	}
	table(&b, cells)
	if unproven {
		b.WriteString("\n* the exact search ran out of budget: the fewest nodes may be lower\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Write writes the consumption as a text table or, when format is "json",
// as the list of rows.
func (e *ConsumptionEstimate) Write(w io.Writer, format string) error {
	if format == "json" {
		return writeJSON(w, e.Rows)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Data plane at measured consumption: %s per vCPU-month, %s per GB-month (%s)\n\n",
		dollars(e.Prices.PerVCPUMonth), dollars(e.Prices.PerGBMonth), e.Prices.Source)
	head := []string{"MESH", "CPU CORES", "MEMORY GB", "MONTHLY", "CORES/1000 RPS AT RUN RATE"}
	if p := e.Projection; p != nil {
		cpu, mem := "CPU", "MEMORY GB"
		if p.RequestRate > 0 {
			cpu = fmt.Sprintf("AT %g RPS: CPU", p.RequestRate)
		}
		if p.Nodes > 0 {
			mem = fmt.Sprintf("%d NODES: MEMORY GB", p.Nodes)
		}
		head = append(head, cpu, mem, "MONTHLY")
	}
	withCP := slices.ContainsFunc(e.Rows, func(r ConsumptionRow) bool { return r.ControlPlane != nil })
	if withCP {
		head = append(head, "CONTROL PLANE CPU", "CONTROL PLANE GB", "CONTROL PLANE MONTHLY")
	}
	cells := [][]string{head}
	for _, r := range e.Rows {
		line := []string{r.Mesh, fmt.Sprintf("%.3f", r.CPUCores), fmt.Sprintf("%.3f", r.MemoryGB), dollars(r.MonthlyCost), fmt.Sprintf("%.3f", r.CPUPer1000RPS)}
		if p := r.Projected; p != nil {
			line = append(line, fmt.Sprintf("%.3f", p.CPUCores), fmt.Sprintf("%.3f", p.MemoryGB), dollars(p.MonthlyCost))
		}
		switch c := r.ControlPlane; {
		case c != nil:
			line = append(line, fmt.Sprintf("%.3f", c.CPUCores), fmt.Sprintf("%.3f", c.MemoryGB), dollars(c.MonthlyCost))
		case withCP:
			line = append(line, "-", "-", "-")
		}
		cells = append(cells, line)
	}
	table(&b, cells)
	b.WriteString("\n" + averageCPUNote + "\n")
	if p := e.Projection; p != nil && p.RequestRate > 0 {
		b.WriteString(projectionNote(e.Rows, p.RequestRate))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// averageCPUNote says what cores per 1000 req/s at one rate is not: the
// data plane's idle CPU divided by a low rate reads as a large cost per
// request that no request causes.
const averageCPUNote = `CORES/1000 RPS AT RUN RATE is the data plane's whole CPU, idle included, divided by the run's request rate: ` +
	`at a low rate it is mostly idle CPU, not the marginal cost of a request. ` +
	`A capacity study (meshbench run --study capacity) fits each component's CPU as an idle part plus a per-request part ` +
	`and reports cores per 1000 req/s and dollars per million requests at the SLO.`

// projectionNote says where the CPU at the projected rate comes from: a
// results directory's fit, per mesh, with the range it was measured
// over, or (a usage file, which holds no split) the whole CPU scaled.
func projectionNote(rows []ConsumptionRow, rate float64) string {
	var b strings.Builder
	for _, r := range rows {
		f := r.ProjectedFrom
		if f == nil {
			continue
		}
		fmt.Fprintf(&b, "  %s: %.3f idle cores + %.3f cores per 1000 req/s (%d trials, R² %.2f), ", r.Mesh, f.IdleCores, f.CoresPerRPS*1000, f.Trials, f.R2)
		if f.Extrapolated {
			fmt.Fprintf(&b, "extrapolated beyond its measured capacity, %.0f req/s (--extrapolate)\n", f.CapacityRPS)
		} else {
			fmt.Fprintf(&b, "measured up to its capacity, %.0f req/s\n", f.CapacityRPS)
		}
	}
	if b.Len() == 0 {
		return fmt.Sprintf("AT %g RPS scales the whole CPU with the rate, its idle part too: a usage file holds no split (cost --results of a study with a capacity search projects by its fit).\n", rate)
	}
	return fmt.Sprintf("AT %g RPS: CPU is each data plane's CPU as its capacity search fitted it, idle cores plus cores per request a second times the rate:\n", rate) + b.String()
}

// table writes cells in columns two spaces apart: the first column
// aligned left, the others right.
func table(b *strings.Builder, cells [][]string) {
	var width []int
	for _, row := range cells {
		for i, c := range row {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(c))
		}
	}
	for _, row := range cells {
		var line strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-len(c))
			if i == 0 {
				line.WriteString(c + pad)
			} else {
				line.WriteString("  " + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// increase formats a row's increase; the first row is the baseline.
func increase(baseline bool, pct float64) string {
	switch {
	case baseline:
		return "-"
	case math.IsInf(pct, 0) || math.IsNaN(pct):
		return "n/a" // over a baseline that costs nothing
	}
	return fmt.Sprintf("%+.1f%%", pct)
}

// dollars writes an amount as "$5,388.02".
func dollars(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	out := "$" + b.String() + "." + frac
	if neg {
		out = "-" + out
	}
	return out
}
