package predict

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/topology"
)

// The profiling graph's services (the chain built-in): the generator calls
// front, front calls back, so one request crosses hopsPerRequest hops.
const (
	frontService   = "front"
	backService    = "back"
	hopsPerRequest = 2
)

// The reference variant: the rates are fitted at it, the other variants
// read against its idle.
const (
	refProtocol    = string(topology.ProtocolHTTP)
	refPayload     = 1000
	refConnections = 8
)

// variant is one profiling cell's sweep values.
type variant struct {
	protocol    string
	payload     int
	rate        float64
	connections int
	namespaces  int
	fanout      int
}

// measured is one cell read for the profile.
type measured struct {
	variant
	mesh    string
	profile string
	cell    *results.Cell
}

// Extract reads a profiling run's results directory (the profile preset,
// or a study with its sweeps) into a profile. Failed and distorted cells
// are left out; a variant the profile needs and lacks is an error naming
// it. Noisy cells are kept, for a profile of one repetition has no other
// cell of their variant, and listed in the profile's Noisy, which predict
// reports.
func Extract(dir string) (*UnitCosts, error) {
	ix, err := results.ReadIndex(dir)
	if err != nil {
		return nil, err
	}
	if damaged := results.CheckCells(dir, ix); len(damaged) > 0 {
		return nil, &results.DamagedError{Dir: dir, Cells: damaged}
	}
	// The fan-out cells (front calls back more than once in parallel)
	// are read only for what parallel calls add: their proxies carry
	// more than one hop per request.
	var cells, fans []measured
	var noisy []string
	for _, s := range ix.Cells {
		if s.Status != results.StatusOK {
			continue
		}
		if s.Noisy {
			noisy = append(noisy, s.ID)
		}
		v, err := variantOf(s.Params)
		if err != nil {
			return nil, fmt.Errorf("%s: cell %s: %w (is this a profile run? see 'meshbench run --study profile')", dir, s.ID, err)
		}
		c, err := results.ReadCell(dir, s)
		if err != nil {
			return nil, err
		}
		m := measured{variant: v, mesh: s.Mesh, profile: s.Profile, cell: c}
		if v.fanout > 1 {
			fans = append(fans, m)
			continue
		}
		cells = append(cells, m)
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("%s: no usable cells (every cell failed, was noisy or distorted)", dir)
	}
	p := &UnitCosts{Version: FormatVersion, Study: ix.Study, Source: dir, Start: ix.Start, Provenance: ix.Provenance,
		Reference: refProtocol, Nodes: 1, Noisy: noisy}
	// A protocol is covered when every mesh has a usable cell over it: a
	// mesh whose cells over it failed leaves it out of the profile.
	byMesh := map[string]map[string]bool{}
	var meshes []string
	for _, c := range cells {
		if !slices.Contains(meshes, c.mesh) {
			meshes = append(meshes, c.mesh)
			byMesh[c.mesh] = map[string]bool{}
		}
		byMesh[c.mesh][c.protocol] = true
		if !slices.Contains(p.Protocols, c.protocol) {
			p.Protocols = append(p.Protocols, c.protocol)
		}
		if c.protocol == refProtocol && !slices.Contains(p.Payloads, c.payload) {
			p.Payloads = append(p.Payloads, c.payload)
		}
	}
	p.Protocols = slices.DeleteFunc(p.Protocols, func(pr string) bool {
		for _, m := range meshes {
			if !byMesh[m][pr] {
				p.Uncovered = append(p.Uncovered, fmt.Sprintf("%s: no usable cell over %s", m, pr))
				return true
			}
		}
		return false
	})
	slices.Sort(p.Payloads)
	if !slices.Contains(meshes, mesh.ProfileBaseline) {
		return nil, fmt.Errorf("%s: no baseline cells: the latency a hop adds is read against the baseline", dir)
	}
	for _, name := range meshes {
		m, err := extractMesh(name, cells)
		if err != nil {
			return nil, fmt.Errorf("%s: mesh %s: %w", dir, name, err)
		}
		m.extractParallel(fans)
		p.Meshes = append(p.Meshes, m)
		for _, r := range m.Roles {
			if r.Role == string(metrics.RoleNodeProxy) {
				p.Nodes = max(p.Nodes, r.Instances)
			}
		}
	}
	return p, nil
}

func variantOf(params map[string]string) (variant, error) {
	v := variant{protocol: refProtocol, payload: refPayload, connections: refConnections, namespaces: 1, fanout: 1}
	if s, ok := params[results.ParamProtocol]; ok {
		v.protocol = s
	}
	var err error
	num := func(name string, dst *int) {
		if s, ok := params[name]; ok && err == nil {
			*dst, err = strconv.Atoi(s)
		}
	}
	num(results.ParamPayload, &v.payload)
	num("connections", &v.connections)
	num("namespaces", &v.namespaces)
	num(results.ParamFanout, &v.fanout)
	if err != nil {
		return v, err
	}
	s, ok := params["rate"]
	if !ok {
		return v, errors.New("no rate among its sweep values")
	}
	v.rate, err = strconv.ParseFloat(s, 64)
	return v, err
}

// side is which end of a hop a proxy series sits at.
type side int

const (
	sideServer side = iota // back's: receives only
	sideFront              // front's: receives and calls
	sideEntry              // the generator's: calls only
	sideAll                // a shared proxy: every hop of the request
)

func sideOf(c metrics.Component) side {
	if c.Role != metrics.RoleSidecar {
		return sideAll
	}
	switch {
	case strings.HasPrefix(c.Pod, backService):
		return sideServer
	case strings.HasPrefix(c.Pod, frontService):
		return sideFront
	}
	return sideEntry
}

func scopeOf(r metrics.Role) string {
	switch r {
	case metrics.RoleSidecar:
		return ScopePod
	case metrics.RoleNodeProxy, metrics.RoleCNI:
		return ScopeNode
	case metrics.RoleWaypoint:
		return ScopeNamespace
	}
	return ScopeCluster
}

// meshRoles are the roles a mesh adds: the application, the generators
// and the ingress gateway (which every profile runs, unused on the service
// path) are not its cost.
func meshRole(r metrics.Role) bool {
	return r != metrics.RoleApp && r != metrics.RoleLoad && r != metrics.RoleIngress
}

// usage is one cell's CPU (mean cores, with its standard error) and
// memory (mean bytes) of one role, by side.
type usage struct {
	rate      float64
	cpu, se   map[side]float64
	count     map[side]int // instances by side; instances is their sum
	mem       float64
	memSE     float64
	instances int
}

func usageOf(c *results.Cell, role metrics.Role) (usage, bool) {
	u := usage{rate: c.AchievedRate, cpu: map[side]float64{}, se: map[side]float64{}, count: map[side]int{}}
	var memVar float64
	for _, s := range c.Resources {
		if s.Component.Role != role || len(s.Samples) == 0 {
			continue
		}
		sd := sideOf(s.Component)
		mc, sec := meanSE(s.Samples, func(x metrics.Sample) float64 { return x.CPUCores })
		mm, sem := meanSE(s.Samples, func(x metrics.Sample) float64 { return float64(x.WorkingSet) })
		u.cpu[sd] += mc
		u.se[sd] = math.Hypot(u.se[sd], sec)
		u.count[sd]++
		u.mem += mm
		memVar += sem * sem
		u.instances++
	}
	u.memSE = math.Sqrt(memVar)
	return u, u.instances > 0
}

// meanSE is a series' mean with the standard error its batch means give
// (analysis.BatchMeansCI): samples every half second are correlated with
// their neighbours, so their spread over √n understates the mean's
// uncertainty. The error is the batch-means interval's half-width over
// z95, so that the predictor's normal intervals (around) reproduce
// BatchMeansCI's (calibrated) Student's t on the batches' degrees of
// freedom; 0 for a series too
// short for two batches.
func meanSE(xs []metrics.Sample, f func(metrics.Sample) float64) (mean, se float64) {
	vs := make([]float64, len(xs))
	for i, x := range xs {
		vs[i] = f(x)
	}
	e := analysis.BatchMeansCI(vs, batchSamples)
	if !e.Interval() {
		return e.Median, 0
	}
	return e.Median, (e.Hi - e.Lo) / 2 / z95
}

// batchSamples is the shortest batch the predictor's means take: two
// seconds of the lab's half-second samples, so a 4-second cell's 8 are
// two batches of 4. Batches of a second (2 samples) do not outlast a
// lag-one correlation of 0.5 (neighbouring batch means then correlate
// 0.375, against 0.21 for batches of 4): their four batch means covered
// 92.7% of AR(1) series, the two longer ones cover 95% or more, at the
// price of Student's t on one degree of freedom (bench/validity,
// docs/statistics.md).
const batchSamples = 4

// z95 is the normal quantile of a two-sided 95% interval.
const z95 = 1.96

func around(v, se float64) Interval { return Interval{v, v - z95*se, v + z95*se} }

func extractMesh(name string, cells []measured) (Mesh, error) {
	var mine []measured
	for _, c := range cells {
		if c.mesh == name {
			mine = append(mine, c)
		}
	}
	m := Mesh{Name: name, Profile: mine[0].profile}
	roles := map[metrics.Role]bool{}
	for _, c := range mine {
		for _, s := range c.cell.Resources {
			if meshRole(s.Component.Role) {
				roles[s.Component.Role] = true
			}
		}
	}
	for _, r := range slices.Sorted(maps.Keys(roles)) {
		role, err := extractRole(r, mine)
		if err != nil {
			return m, fmt.Errorf("role %s: %w", r, err)
		}
		m.Roles = append(m.Roles, role)
	}
	if name == mesh.ProfileBaseline {
		return m, nil
	}
	m.Hops = extractHops(mine, cells)
	return m, nil
}

// pick returns the cells of one variant, rates aside.
func pick(cells []measured, protocol string, payload, connections, namespaces int) []measured {
	var out []measured
	for _, c := range cells {
		if c.protocol == protocol && c.payload == payload && c.connections == connections && c.namespaces == namespaces {
			out = append(out, c)
		}
	}
	return out
}

func extractRole(r metrics.Role, cells []measured) (Role, error) {
	role := Role{Role: string(r), Scope: scopeOf(r)}
	byRate := map[float64][]usage{}
	var us []usage
	for _, c := range pick(cells, refProtocol, refPayload, refConnections, 1) {
		if u, ok := usageOf(c.cell, r); ok {
			byRate[c.rate] = append(byRate[c.rate], u)
			us = append(us, u)
		}
	}
	rates := slices.Sorted(maps.Keys(byRate))
	if len(rates) < 2 {
		return role, fmt.Errorf("the reference variant (%s, %d B, %d connections, 1 namespace) needs cells at two rates or more; it has %d", refProtocol, refPayload, refConnections, len(rates))
	}
	role.Instances, role.ClientPods = us[0].instances, us[0].count[sideEntry]
	sides := map[side]bool{}
	for _, u := range us {
		for s := range u.cpu {
			sides[s] = true
		}
	}
	// Fit each side's CPU against the achieved rate, idle + slope x rate,
	// between each pair of neighbouring rates.
	type line struct{ idle, slope map[side]Interval }
	lines := make([]line, len(rates)-1)
	for i := range lines {
		pts := append(slices.Clone(byRate[rates[i]]), byRate[rates[i+1]]...)
		l := line{map[side]Interval{}, map[side]Interval{}}
		idle := map[side]Interval{}
		for s := range sides {
			var xs, ys []float64
			for _, u := range pts {
				xs, ys = append(xs, u.rate), append(ys, u.cpu[s])
			}
			f := analysis.FitLine(xs, ys)
			seIdle, seSlope := fitSE(pts, s)
			l.idle[s], l.slope[s] = around(f.Idle, seIdle), around(f.PerRPS, seSlope)
			idle[s] = l.idle[s].Times(1 / float64(instancesOf(pts, s)))
		}
		lines[i] = l
		role.Fits = append(role.Fits, Fit{From: rates[i], To: rates[i+1], IdleCores: sidesOf(idle, 1)})
	}
	// Every measured protocol and payload, at one namespace and the
	// reference connections: the reference itself is each line's slope;
	// another variant is its CPU less its own rate's line's idle, over its
	// rate, moved onto each other line by the two lines' difference in
	// slope (its cost depends on the rate as the reference's does).
	seen := map[[2]string]bool{}
	for _, c := range cells {
		if c.connections != refConnections || c.namespaces != 1 {
			continue
		}
		key := [2]string{c.protocol, strconv.Itoa(c.payload)}
		if seen[key] {
			continue
		}
		seen[key] = true
		per := make([]map[side]Interval, len(lines))
		for i := range per {
			per[i] = map[side]Interval{}
		}
		if c.protocol == refProtocol && c.payload == refPayload {
			for i, l := range lines {
				per[i] = l.slope
			}
		} else {
			n := map[side]float64{}
			for _, v := range pick(cells, c.protocol, c.payload, refConnections, 1) {
				u, ok := usageOf(v.cell, r)
				if !ok || u.rate <= 0 {
					continue
				}
				at := lines[fitIndex(role.Fits, v.rate)]
				for s := range sides {
					own := around((u.cpu[s]-at.idle[s].V)/u.rate, math.Hypot(u.se[s], (at.idle[s].Hi-at.idle[s].V)/z95)/u.rate)
					for i, l := range lines {
						per[i][s] = per[i][s].Add(own.Moved(at.slope[s], l.slope[s]))
					}
					n[s]++
				}
			}
			for i := range per {
				for s := range per[i] {
					per[i][s] = per[i][s].Times(1 / n[s])
				}
			}
		}
		for i := range role.Fits {
			role.Fits[i].Costs = append(role.Fits[i].Costs, costOf(c.protocol, c.payload, per[i]))
		}
	}
	for i := range role.Fits {
		slices.SortFunc(role.Fits[i].Costs, func(a, b Cost) int {
			if a.Protocol != b.Protocol {
				return strings.Compare(a.Protocol, b.Protocol)
			}
			return a.Payload - b.Payload
		})
	}
	role.MemBytes, role.MemPerService, role.MemPerConnection = memoryOf(r, cells, us)
	return role, nil
}

// instancesOf is how many instances of a side the cells ran: the most
// any of them sampled.
func instancesOf(us []usage, s side) int {
	n := 1
	for _, u := range us {
		n = max(n, u.count[s])
	}
	return n
}

// fitSE is the standard errors of a two-point (or more) fit's intercept
// and slope from each point's own standard error: the spread of the CPU
// samples within each cell.
func fitSE(us []usage, s side) (idle, slope float64) {
	var mx float64
	for _, u := range us {
		mx += u.rate
	}
	mx /= float64(len(us))
	var sxx float64
	for _, u := range us {
		sxx += (u.rate - mx) * (u.rate - mx)
	}
	var vs, vi float64
	for _, u := range us {
		w := (u.rate - mx) / sxx
		vs += w * w * u.se[s] * u.se[s]
		wi := 1/float64(len(us)) - mx*w
		vi += wi * wi * u.se[s] * u.se[s]
	}
	return math.Sqrt(vi), math.Sqrt(vs)
}

// costOf turns per-request cores by side into a hop's cost: back's
// sidecar receives once per request, front's receives and calls, the
// generator's calls; a shared proxy carries every hop of the request.
func costOf(protocol string, payload int, per map[side]Interval) Cost {
	return Cost{Protocol: protocol, Payload: payload, Sides: sidesOf(per, 1.0/hopsPerRequest)}
}

// sidesOf turns a figure by side of the chain into Sides: back's is the
// Server's, front's less back's the Caller's, the generator's the
// Entry's; a shared proxy's, times all, is the Server's.
func sidesOf(per map[side]Interval, all float64) Sides {
	if a, ok := per[sideAll]; ok {
		return Sides{Server: a.Times(all)}
	}
	return Sides{Server: per[sideServer], Caller: per[sideFront].Minus(per[sideServer]), Entry: per[sideEntry]}
}

// memoryOf reads a role's memory: per instance at one namespace (the
// reference cells), per known service from the cells with more
// namespaces, per connection from the cells with more connections.
func memoryOf(r metrics.Role, cells []measured, ref []usage) (base, perService, perConn Interval) {
	var sum, varSum float64
	for _, u := range ref {
		sum += u.mem / float64(u.instances)
		varSum += (u.memSE / float64(u.instances)) * (u.memSE / float64(u.instances))
	}
	n := float64(len(ref))
	base = around(sum/n, math.Sqrt(varSum)/n)
	services := float64(len(chainServices))
	for _, c := range cells {
		if c.protocol != refProtocol || c.payload != refPayload || c.connections != refConnections || c.namespaces <= 1 {
			continue
		}
		u, ok := usageOf(c.cell, r)
		if !ok {
			continue
		}
		each := u.mem / float64(u.instances)
		known := services * float64(c.namespaces-1)
		perService = around((each-base.V)/known, math.Hypot(u.memSE/float64(u.instances), (base.Hi-base.V)/z95)/known)
		break
	}
	for _, c := range cells {
		if c.protocol != refProtocol || c.payload != refPayload || c.connections == refConnections || c.namespaces != 1 {
			continue
		}
		u, ok := usageOf(c.cell, r)
		if !ok {
			continue
		}
		// The reference cell at the same rate, if any, else the mean.
		var at usage
		for _, x := range ref {
			if math.Abs(x.rate-u.rate) < math.Abs(at.rate-u.rate) || at.cpu == nil {
				at = x
			}
		}
		extra := float64(c.connections - refConnections)
		perConn = around((u.mem-at.mem)/extra, math.Hypot(u.memSE, at.memSE)/extra)
		break
	}
	return base, perService, perConn
}

// chainServices are the profiling graph's services, which every proxy
// knows of in every namespace.
var chainServices = []string{frontService, backService}

// extractHops reads, for each protocol, payload and rate, the latency a
// hop adds: the mesh's quantiles less the baseline's in the same variant
// at the same rate, halved, for a request crosses two hops.
func extractHops(mine, all []measured) []Hop {
	var base []measured
	for _, c := range all {
		if c.mesh == mesh.ProfileBaseline {
			base = append(base, c)
		}
	}
	type key struct {
		protocol string
		payload  int
		rate     float64
	}
	seen := map[key]bool{}
	var out []Hop
	for _, c := range mine {
		k := key{c.protocol, c.payload, c.rate}
		if c.connections != refConnections || c.namespaces != 1 || seen[k] {
			continue
		}
		seen[k] = true
		hm := pooled(atRate(pick(mine, c.protocol, c.payload, refConnections, 1), c.rate))
		hb := pooled(atRate(pick(base, c.protocol, c.payload, refConnections, 1), c.rate))
		if hb == nil || hb.Count() == 0 || hm == nil || hm.Count() == 0 {
			// The baseline's cell failed: the variant's protocol is not
			// covered (Extract), or it is read from the others.
			continue
		}
		out = append(out, hopOf(c.protocol, c.payload, c.rate, hm, hb))
	}
	slices.SortFunc(out, func(a, b Hop) int {
		if a.Protocol != b.Protocol {
			return strings.Compare(a.Protocol, b.Protocol)
		}
		if a.Payload != b.Payload {
			return a.Payload - b.Payload
		}
		return cmp.Compare(a.Rate, b.Rate)
	})
	return out
}

// atRate keeps the cells measured at one rate.
func atRate(cells []measured, rate float64) []measured {
	return slices.DeleteFunc(slices.Clone(cells), func(c measured) bool { return c.rate != rate })
}

func pooled(cells []measured) *metrics.Histogram {
	var h *metrics.Histogram
	for _, c := range cells {
		if c.cell.Merged == nil || c.cell.Merged.Latency == nil {
			continue
		}
		if h == nil {
			h = metrics.NewHistogram()
		}
		h.Merge(c.cell.Merged.Latency)
	}
	return h
}

// hopOf is one hop's added latency from the mesh's and the baseline's
// histograms of a request of hopsPerRequest hops. The bounds take each
// quantile's 95% distribution-free interval (by the binomial ranks around
// it) at opposite ends in the two histograms.
func hopOf(protocol string, payload int, rate float64, mesh, base *metrics.Histogram) Hop {
	d := addedOf(mesh, base, 1.0/hopsPerRequest)
	return Hop{Protocol: protocol, Payload: payload, Rate: rate, Requests: min(mesh.Count(), base.Count()),
		Added: d[0], Low: d[1], High: d[2]}
}

// addedOf is k times the mesh's latency less the baseline's, quantile by
// quantile (estimate, low, high).
func addedOf(mesh, base *metrics.Histogram, k float64) [3]Dist {
	// p is a fraction, as a Dist's quantiles are; the histogram reads
	// percent.
	ms := func(h *metrics.Histogram, p float64) float64 {
		return float64(h.Percentile(100*min(max(p, 0), 1))) / float64(time.Millisecond)
	}
	bound := func(h *metrics.Histogram, p, sign float64) float64 {
		n := float64(h.Count())
		return ms(h, p+sign*z95*math.Sqrt(p*(1-p)/n))
	}
	return [3]Dist{
		FromQuantile(func(p float64) float64 { return (ms(mesh, p) - ms(base, p)) * k }),
		FromQuantile(func(p float64) float64 { return (bound(mesh, p, -1) - bound(base, p, 1)) * k }),
		FromQuantile(func(p float64) float64 { return (bound(mesh, p, 1) - bound(base, p, -1)) * k }),
	}
}

// extractParallel reads what a parallel call adds (Mesh.Parallel) from
// the fan-out cells of the reference protocol and payload, front calling
// back twice at once. The model adds it at the parallel step, before the
// entry hop is added (convolved) to the step, while the cell measured the
// whole request; so it starts as the cell's added latency less what the
// hops alone predict for it, quantile by quantile, and is corrected until
// the model gives the cell back: each of the three Dists its own bound of
// the cell's. Left nil without a fan-out cell.
func (m *Mesh) extractParallel(fans []measured) {
	if m.Name == mesh.ProfileBaseline || len(m.Hops) == 0 {
		return
	}
	var mine, base []measured
	for _, c := range fans {
		if c.protocol != refProtocol || c.payload != refPayload || c.connections != refConnections || c.namespaces != 1 || c.fanout != 2 {
			continue
		}
		switch c.mesh {
		case m.Name:
			mine = append(mine, c)
		case mesh.ProfileBaseline:
			base = append(base, c)
		}
	}
	if len(mine) == 0 {
		return
	}
	rate := mine[0].rate
	hm, hb := pooled(atRate(mine, rate)), pooled(atRate(base, rate))
	if hm == nil || hb == nil || hm.Count() == 0 || hb.Count() == 0 {
		return
	}
	measured := addedOf(hm, hb, 1)
	p := &Hop{Protocol: refProtocol, Payload: refPayload, Rate: rate, Requests: min(hm.Count(), hb.Count()),
		Added: Zero(), Low: Zero(), High: Zero()}
	m.Parallel = p
	for k, d := range []*Dist{&p.Added, &p.Low, &p.High} {
		for range parallelRounds {
			model := m.latency(refProtocol, fanGraph, rate, k)
			var worst float64
			for i := range model {
				worst = max(worst, math.Abs(measured[k][i]-model[i]))
			}
			if worst < parallelTolerance {
				break
			}
			*d = FromQuantile(func(q float64) float64 { return d.Quantile(q) + measured[k].Quantile(q) - model.Quantile(q) })
		}
	}
}

// extractParallel corrects the extra until the model is within
// parallelTolerance ms of the cell at every quantile, or for
// parallelRounds rounds: each round leaves part of the last one's error
// (the entry hop's spread blurs the step's).
const (
	parallelRounds    = 50
	parallelTolerance = 0.001
)

// fanGraph is the profiling graph with a fan-out of two, as the profile
// preset's fan-out cell deploys it: what the model reads that cell as.
var fanGraph = &topology.Graph{Entry: frontService, Services: []topology.Service{
	{Name: frontService, ResponseSize: refPayload, Script: []topology.Step{{Parallel: []topology.Call{{Service: backService}, {Service: backService}}}}},
	{Name: backService, ResponseSize: refPayload},
}}
