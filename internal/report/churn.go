package report

import (
	"fmt"
	"iter"
	"slices"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
)

// churnParam is the sweep parameter that sets how many requests a
// connection carries; its value "0" keeps connections open, the reference
// each other value is read against.
const (
	churnParam = "conn_requests"
	keptOpen   = "0"
)

// churnParts are the components whose CPU a new connection may cost, in
// the order the table lists them, the data plane's sum last.
var churnParts = []analysis.Part{
	analysis.RolePart(metrics.RoleApp), analysis.RolePart(metrics.RoleSidecar), analysis.RolePart(metrics.RoleNodeProxy),
	analysis.RolePart(metrics.RoleWaypoint), analysis.RolePart(metrics.RoleIngress), analysis.PartDataPlane,
}

// churn reads a sweep over conn_requests as the cost of a new connection:
// each mesh at each setting against itself with its connections kept open,
// at the same rate. What a request that opens a connection adds is the
// connection's set-up at every proxy it reaches; what a component's CPU
// adds, over the connections opened a second, is its CPU per new
// connection, set beside its CPU per request.
func (b *builder) churn() Section {
	s := Section{ID: "churn", Title: "Connection churn"}
	d := b.d
	i := slices.IndexFunc(d.Params, func(p analysis.Param) bool { return p.Name == churnParam })
	if i < 0 || !slices.Contains(d.Params[i].Values, keptOpen) || len(d.Params[i].Values) < 2 {
		return s
	}
	var settings []string
	for _, v := range d.Params[i].Values {
		if v != keptOpen {
			settings = append(settings, v)
		}
	}
	s.Blocks = append(s.Blocks, text("Each mesh at each number of requests a connection carries (conn_requests; 1 opens a connection for every request) against itself with its connections kept open (conn_requests 0), at the same offered rate. "+
		"The added latency is what opening a connection adds to the requests that open one: its TCP handshake, its acceptance by each proxy it reaches, and whatever upstream connection or mTLS handshake those proxies open for it (an HTTP proxy pools its upstream connections, and an ambient node proxy its HBONE tunnels, where a new connection is one CONNECT stream on an open mTLS connection, so a new client connection need not mean a new handshake between proxies; the node proxy at the destination opens a TCP connection to the pod for each); "+
		"\"beyond the baseline\" subtracts what the baseline's own TCP handshakes add. "+
		"A component's CPU per new connection is its added CPU (cores) over the new connections the generators opened a second; its CPU per request is its CPU with connections kept open over the request rate. "+
		"Medians over the units, and differences paired by round, with their distribution-free 95% intervals (the level after an interval that cannot reach 95%)."))
	tables := []struct {
		title string
		build func(analysis.LoadConfig, []string) *Table
	}{
		{"Per mesh", b.churnSummary},
		{"Latency per new connection", b.churnLatency},
		{"CPU per new connection beside CPU per request", b.churnCPU},
	}
	for _, slice := range d.Slices(churnParam) {
		for _, tb := range tables {
			if t := tb.build(slice, settings); t != nil {
				s.Blocks = append(s.Blocks, heading(sliced(tb.title, slice)), table(t))
			}
		}
	}
	return s
}

// churnSummary is the section's answer per mesh: what a new connection
// adds to p50 and costs the data plane in CPU, at each setting, and the
// concurrent-connection ceiling with its interval where the study
// searched for it (the churn preset does, after its cells).
func (b *builder) churnSummary(slice analysis.LoadConfig, settings []string) *Table {
	d := b.d
	ceiling := connectionCeiling(d.Capacity)
	header := []string{"Mesh", "Requests per connection", "p50 added per new connection (ms)", "Data-plane CPU per new connection (µs)"}
	if ceiling {
		header = append(header, "Connection ceiling (connections)", "95% interval")
	}
	t := &Table{Header: header}
	for m, ref := range b.churnRefs(slice) {
		for v, g := range b.churnAt(m, slice, settings) {
			row := []string{m, v, deltaText(analysis.Paired(ref.Sample(analysis.P50), g.Sample(analysis.P50))), "—"}
			if rate := g.Estimate(analysis.ConnRate).Median; d.HasPart(m, analysis.PartDataPlane) && rate > 0 {
				if added := analysis.Paired(ref.Sample(analysis.CPU(analysis.PartDataPlane)), g.Sample(analysis.CPU(analysis.PartDataPlane))); added.Delta.Valid() {
					row[3] = deltaScaled(added.Delta, 1e6/rate)
				}
			}
			if ceiling {
				row = append(row, "—", "—")
				if c := b.capacityOf(m); c != nil && c.Status == results.StatusOK && c.RPS > 0 {
					row[4], row[5] = capacityNum(c), intervalText(c)
				}
			}
			t.Rows = append(t.Rows, row)
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	t.Notes = []string{"The added p50 is the mesh's at that setting minus its own with connections kept open, and the CPU per new connection the data plane's added cores over the new connections opened a second; the tables below split both by component."}
	if ceiling {
		t.Notes = append(t.Notes, "The connection ceiling is the search's after the cells, on the same workload with connections held open: see Concurrent-connection ceiling at the SLO for its trials.")
	}
	return t
}

// churnLatency tabulates, per mesh and setting, the new connections a
// second, the latency added against kept-open connections, and errors.
func (b *builder) churnLatency(slice analysis.LoadConfig, settings []string) *Table {
	d := b.d
	t := &Table{Header: []string{"Mesh", "Requests per connection", "New connections/s", "p50 (ms)", "p50 added (ms)", "p50 added beyond the baseline (ms)", "p99 added (ms)", "Errors (%)", "Runs"}}
	for m, ref := range b.churnRefs(slice) {
		for v, g := range b.churnAt(m, slice, settings) {
			p50 := analysis.Paired(ref.Sample(analysis.P50), g.Sample(analysis.P50))
			p99 := analysis.Paired(ref.Sample(analysis.P99), g.Sample(analysis.P99))
			beyond := "—"
			if base := d.Group(d.Baseline, slice.With(churnParam, v)); m != d.Baseline && base != nil {
				if bref := d.Group(d.Baseline, slice.With(churnParam, keptOpen)); bref != nil {
					bd := analysis.Paired(bref.Sample(analysis.P50), base.Sample(analysis.P50))
					if bd.Delta.Valid() && p50.Delta.Valid() {
						beyond = signed(p50.Delta.Median - bd.Delta.Median)
					}
				}
			}
			t.Rows = append(t.Rows, []string{m, v, est(g.Estimate(analysis.ConnRate), 1), est(g.Estimate(analysis.P50), 1),
				deltaText(p50), beyond, deltaText(p99), est(g.Estimate(analysis.ErrorPct), 1), runs(g)})
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// churnCPU tabulates, per mesh, component and setting, the CPU per new
// connection beside the CPU per request with connections kept open, in
// microseconds of CPU.
func (b *builder) churnCPU(slice analysis.LoadConfig, settings []string) *Table {
	d := b.d
	t := &Table{Header: []string{"Mesh", "Component", "Requests per connection", "CPU per request, kept open (µs)", "CPU per new connection (µs)", "New connection / request"}}
	for m, ref := range b.churnRefs(slice) {
		for _, p := range churnParts {
			if !d.HasPart(m, p) {
				continue
			}
			perReq := ref.Estimate(analysis.CPU(p)).Median / ref.Estimate(analysis.QPS).Median * 1e6
			for v, g := range b.churnAt(m, slice, settings) {
				added := analysis.Paired(ref.Sample(analysis.CPU(p)), g.Sample(analysis.CPU(p)))
				rate := g.Estimate(analysis.ConnRate).Median
				perConn, ratio := "—", "—"
				if added.Delta.Valid() && rate > 0 {
					scale := 1e6 / rate
					perConn = deltaScaled(added.Delta, scale)
					if perReq > 0 {
						ratio = num(added.Delta.Median*scale/perReq) + "x"
					}
				}
				t.Rows = append(t.Rows, []string{m, p.Label(), v, num(perReq), perConn, ratio})
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// churnRefs yields each mesh that ran slice with its connections kept
// open, with that group: the reference its other settings are read
// against.
func (b *builder) churnRefs(slice analysis.LoadConfig) iter.Seq2[string, *analysis.Group] {
	return func(yield func(string, *analysis.Group) bool) {
		open := slice.With(churnParam, keptOpen)
		for _, m := range b.d.Meshes {
			if ref := b.d.Group(m, open); ref != nil && !yield(m, ref) {
				return
			}
		}
	}
}

// churnAt yields each of settings at which the mesh ran slice, in order,
// with its group there.
func (b *builder) churnAt(mesh string, slice analysis.LoadConfig, settings []string) iter.Seq2[string, *analysis.Group] {
	return func(yield func(string, *analysis.Group) bool) {
		for _, v := range settings {
			if g := b.d.Group(mesh, slice.With(churnParam, v)); g != nil && !yield(v, g) {
				return
			}
		}
	}
}

// deltaText is a difference's median with its interval, unscaled.
func deltaText(d analysis.Diff) string {
	if !d.Delta.Valid() {
		return "—"
	}
	return deltaScaled(d.Delta, 1)
}

// deltaScaled is a signed estimate, scaled, with its interval when it has
// one.
func deltaScaled(e analysis.Estimate, scale float64) string {
	if !e.Interval() {
		return signed(e.Median*scale) + " (too few runs for an interval)"
	}
	return fmt.Sprintf("%s [%s, %s]%s", signed(e.Median*scale), signed(e.Lo*scale), signed(e.Hi*scale), levelText(e))
}
