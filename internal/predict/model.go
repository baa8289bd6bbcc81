package predict

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/meshbench/meshbench/internal/topology"
)

// hop is one kind of hop of the user's graph: requests per second (in one
// namespace) from a deployment to a service's version, over a protocol,
// carrying its answer.
type hop struct {
	protocol string
	payload  int
	rate     float64
	// from and to are the calling and the called version's key; from is
	// "" for the load generator.
	from, to string
}

// hopsOf lists the hops one namespace's traffic makes at an entry rate:
// each call's rate is its caller's times its count and probability, a
// service's rate split over its versions by their replicas.
func hopsOf(g *topology.Graph, rate float64) []hop {
	var out []hop
	var visit func(from, service string, protocol topology.Protocol, rate float64)
	visit = func(from, service string, protocol topology.Protocol, rate float64) {
		s := g.Service(service)
		for _, v := range versionsOf(s) {
			r := rate * v.weight
			out = append(out, hop{protocol: string(protocol.Or()), payload: v.payload, rate: r, from: from, to: v.key})
			for _, st := range v.script {
				for _, c := range st.Calls() {
					visit(v.key, c.Service, c.Protocol, r*float64(max(c.Count, 1))*probabilityOf(c))
				}
			}
		}
	}
	visit("", g.Entry, g.EntryProtocol, rate)
	return out
}

func probabilityOf(c topology.Call) float64 {
	if c.Probability > 0 {
		return c.Probability
	}
	return 1
}

// version is one deployment of a service as a request sees it: its key
// (service/version, unique in the graph) and replicas, the share of the
// service's requests (by replicas, as the Service balances them), its
// answer's size and its script.
type version struct {
	key      string
	replicas int
	weight   float64
	payload  int
	script   []topology.Step
}

func versionsOf(s *topology.Service) []version {
	if len(s.Versions) == 0 {
		return []version{{key: s.Name + "/", replicas: max(s.Replicas, 1), weight: 1, payload: payloadOf(s.ResponseSize), script: s.Script}}
	}
	var total float64
	for _, v := range s.Versions {
		total += float64(replicasOf(s, v))
	}
	var out []version
	for _, v := range s.Versions {
		size, script := s.ResponseSize, s.Script
		if v.ResponseSize > 0 {
			size = v.ResponseSize
		}
		if len(v.Script) > 0 {
			script = v.Script
		}
		out = append(out, version{key: s.Name + "/" + v.Name, replicas: replicasOf(s, v), weight: float64(replicasOf(s, v)) / total,
			payload: payloadOf(size), script: script})
	}
	return out
}

func replicasOf(s *topology.Service, v topology.Version) int {
	if v.Replicas > 0 {
		return v.Replicas
	}
	return max(s.Replicas, 1)
}

// fitIndex is the index of the fit whose rates hold rate, the nearest
// one outside them.
func fitIndex(fits []Fit, rate float64) int {
	for i, f := range fits {
		if rate <= f.To {
			return i
		}
	}
	return len(fits) - 1
}

// fitAt is the role's CPU line around a rate of the profile's chain.
func (r *Role) fitAt(rate float64) *Fit { return &r.Fits[fitIndex(r.Fits, rate)] }

// costAt is a role's cost of one hop at a protocol and payload on a fit:
// interpolated between the payloads measured for the protocol, or, for a
// protocol measured at fewer payloads, the reference protocol's cost at
// the payload moved by the two protocols' difference where both were
// measured.
func (f *Fit) costAt(ref, protocol string, payload int) Cost {
	var same, refs []Cost
	for _, c := range f.Costs {
		if c.Protocol == protocol {
			same = append(same, c)
		}
		if c.Protocol == ref {
			refs = append(refs, c)
		}
	}
	if len(same) >= 2 && payload >= same[0].Payload && payload <= same[len(same)-1].Payload {
		return interpCost(same, payload)
	}
	base := interpCost(refs, payload)
	if protocol == ref || len(same) == 0 {
		return base
	}
	near := same[0]
	for _, c := range same {
		if abs(c.Payload-payload) < abs(near.Payload-payload) {
			near = c
		}
	}
	at := interpCost(refs, near.Payload)
	return Cost{Protocol: protocol, Payload: payload, Sides: Sides{
		Server: base.Server.Moved(at.Server, near.Server),
		Caller: base.Caller.Moved(at.Caller, near.Caller),
		Entry:  base.Entry.Moved(at.Entry, near.Entry)}}
}

func abs(x int) int { return max(x, -x) }

// interpCost interpolates linearly between the two measured payloads
// around p (sorted by payload), clamping outside them; Cover has refused a
// graph outside the profile's payloads.
func interpCost(cs []Cost, p int) Cost {
	if len(cs) == 0 {
		return Cost{}
	}
	i, f := bracket(len(cs), func(k int) float64 { return float64(cs[k].Payload) }, float64(p))
	a, b := cs[i], cs[min(i+1, len(cs)-1)]
	lerp := func(x, y Interval) Interval {
		return Interval{x.V + (y.V-x.V)*f, x.Lo + (y.Lo-x.Lo)*f, x.Hi + (y.Hi-x.Hi)*f}
	}
	return Cost{Protocol: a.Protocol, Payload: p, Sides: Sides{Server: lerp(a.Server, b.Server), Caller: lerp(a.Caller, b.Caller), Entry: lerp(a.Entry, b.Entry)}}
}

// bracket finds the index i with at(i) <= p <= at(i+1) over n sorted
// points and the fraction of the way from i to i+1.
func bracket(n int, at func(int) float64, p float64) (int, float64) {
	if n == 1 || p <= at(0) {
		return 0, 0
	}
	for i := 0; i < n-1; i++ {
		if p <= at(i+1) {
			return i, (p - at(i)) / (at(i+1) - at(i))
		}
	}
	return n - 1, 0
}

// hopAt is the latency a hop adds at a protocol, payload and entry rate.
// The payload and protocol sweeps were measured at one rate (the one with
// the most hops): the hop is read there as costAt reads costs, the three
// Dists (estimate, low, high) interpolated quantile by quantile or moved
// from the reference protocol; then moved to the rate by the reference
// variant's difference between the two rates, interpolated between the
// rates it was measured at.
func (m *Mesh) hopAt(ref, protocol string, payload int, rate float64) [3]Dist {
	at := m.sweepRate()
	var same, refs, byRate []Hop
	for _, h := range m.Hops {
		if h.Protocol == ref && h.Payload == refPayload {
			byRate = append(byRate, h)
		}
		if h.Rate != at {
			continue
		}
		if h.Protocol == protocol {
			same = append(same, h)
		}
		if h.Protocol == ref {
			refs = append(refs, h)
		}
	}
	byPayload := func(h Hop) float64 { return float64(h.Payload) }
	var d [3]Dist
	switch {
	case len(same) >= 2 && payload >= same[0].Payload && payload <= same[len(same)-1].Payload:
		d = interpHop(same, byPayload, float64(payload))
	case protocol == ref || len(same) == 0:
		d = interpHop(refs, byPayload, float64(payload))
	default:
		near := same[0]
		for _, h := range same {
			if abs(h.Payload-payload) < abs(near.Payload-payload) {
				near = h
			}
		}
		d = moved(interpHop(refs, byPayload, float64(payload)), interpHop(refs, byPayload, float64(near.Payload)),
			[3]Dist{near.Added, near.Low, near.High})
	}
	if len(byRate) < 2 || rate == at {
		return d
	}
	byRateOf := func(h Hop) float64 { return h.Rate }
	return moved(d, interpHop(byRate, byRateOf, at), interpHop(byRate, byRateOf, rate))
}

// sweepRate is the rate at which the mesh has hops of the most variants.
func (m *Mesh) sweepRate() float64 {
	n := map[float64]int{}
	best := 0.0
	for _, h := range m.Hops {
		n[h.Rate]++
		if n[h.Rate] > n[best] || n[h.Rate] == n[best] && h.Rate > best {
			best = h.Rate
		}
	}
	return best
}

// moved is d moved as far as from is from to, quantile by quantile, as
// Interval.Moved moves a value: the low bound less from's high, the high
// less from's low.
func moved(d, from, to [3]Dist) [3]Dist {
	var out [3]Dist
	for k, opposite := range [3]int{0, 2, 1} {
		out[k] = make(Dist, Points)
		for i := range out[k] {
			out[k][i] = d[k][i] + to[k][i] - from[opposite][i]
		}
		slices.Sort(out[k])
	}
	return out
}

// interpHop interpolates hops sorted by x (payload or rate) quantile by
// quantile, clamping outside them.
func interpHop(hs []Hop, x func(Hop) float64, p float64) [3]Dist {
	if len(hs) == 0 {
		return [3]Dist{Zero(), Zero(), Zero()}
	}
	i, f := bracket(len(hs), func(k int) float64 { return x(hs[k]) }, p)
	a, b := hs[i], hs[min(i+1, len(hs)-1)]
	var out [3]Dist
	for k, pair := range [3][2]Dist{{a.Added, b.Added}, {a.Low, b.Low}, {a.High, b.High}} {
		out[k] = make(Dist, Points)
		for j := range out[k] {
			out[k][j] = pair[0][j] + (pair[1][j]-pair[0][j])*f
		}
	}
	return out
}

// latency is the added latency of one request at the entry, for one of a
// hop's three Dists (0 estimate, 1 low, 2 high): each call is its hop plus
// what the callee's script adds; steps add up, parallel calls take the
// maximum plus what each call beyond the first adds (Mesh.Parallel), a
// call made with probability p mixes with nothing added, and a service's
// versions mix by their share of its requests.
func (m *Mesh) latency(ref string, g *topology.Graph, rate float64, which int) Dist {
	extra := Zero()
	if m.Parallel != nil {
		extra = [3]Dist{m.Parallel.Added, m.Parallel.Low, m.Parallel.High}[which]
	}
	var call func(service string, protocol topology.Protocol) Dist
	call = func(service string, protocol topology.Protocol) Dist {
		s := g.Service(service)
		var ws []float64
		var ds []Dist
		for _, v := range versionsOf(s) {
			d := m.hopAt(ref, string(protocol.Or()), v.payload, rate)[which]
			for _, st := range v.script {
				d = d.Sum(step(st, call, extra))
			}
			ws, ds = append(ws, v.weight), append(ds, d)
		}
		if len(ds) == 1 {
			return ds[0]
		}
		return Mix(ws, ds)
	}
	return call(g.Entry, g.EntryProtocol)
}

// step is what one step of a script adds: its call, or the slowest of its
// parallel calls plus extra, quantile by quantile, for each call beyond
// the first.
func step(st topology.Step, call func(string, topology.Protocol) Dist, extra Dist) Dist {
	var out Dist
	calls := st.Calls()
	for _, c := range calls {
		d := call(c.Service, c.Protocol)
		for range max(c.Count, 1) - 1 {
			d = d.Sum(call(c.Service, c.Protocol))
		}
		if p := probabilityOf(c); p < 1 {
			d = Mix([]float64{p, 1 - p}, []Dist{d, Zero()})
		}
		if out == nil {
			out = d
		} else {
			out = out.Max(d)
		}
	}
	if out == nil {
		return Zero()
	}
	if n := len(calls) - 1; n > 0 {
		out = FromQuantile(func(p float64) float64 { return out.Quantile(p) + float64(n)*extra.Quantile(p) })
	}
	return out
}

// Scale is the user's deployment a prediction is for.
type Scale struct {
	Namespaces int
	// Rate is each namespace's entry rate in requests per second.
	Rate float64
	// Connections is each namespace's load generator's connections.
	Connections int
	// Nodes is how many nodes run a node proxy.
	Nodes int
}

// Usage is one role's predicted CPU and memory.
type Usage struct {
	Role      string `json:"role"`
	Instances int    `json:"instances"`
	// ReadAt is the entry rate of the profile's chain the role's CPU line
	// is read at: its busy rate. Sidecars are read each at its own pod's,
	// from ReadLow up to ReadAt.
	ReadAt   float64  `json:"read_at_rps"`
	ReadLow  float64  `json:"read_low_rps,omitempty"`
	Cores    Interval `json:"cores"`
	MemBytes Interval `json:"mem_bytes"`
}

// deployment is the user's graph at its scale, as the model reads it:
// one namespace's hops, and its application pods by deployment (version).
type deployment struct {
	hops []hop
	pods map[string]int
	sc   Scale
}

func deploy(g *topology.Graph, sc Scale) deployment {
	d := deployment{hops: hopsOf(g, sc.Rate), pods: map[string]int{}, sc: sc}
	for _, s := range g.Services {
		for _, v := range versionsOf(&s) {
			d.pods[v.key] = v.replicas
		}
	}
	return d
}

// appPods is how many application pods a namespace runs.
func (d deployment) appPods() int {
	n := 0
	for _, r := range d.pods {
		n += r
	}
	return n
}

// busyRate is the entry rate at which the profile's chain kept one
// instance of a shared proxy r as busy as the deployment keeps it. A
// proxy's cost per request, and the latency it adds, depend on how often
// requests come (at low rates each one wakes it). A shared proxy, a node
// proxy or a waypoint, carries every hop of its node or namespace, of
// every tenant, where the chain at the same entry rate sent it only its
// own two. (Sidecars: sidecarCores.)
func (d deployment) busyRate(r *Role) float64 {
	var perNS float64
	for _, h := range d.hops {
		perNS += h.rate
	}
	perInstance := perNS * float64(d.sc.Namespaces) / float64(instances(r, d.sc, d.appPods()))
	return perInstance * float64(max(r.Instances, 1)) / hopsPerRequest
}

// shared says whether one instance of the role serves many pods' hops: a
// node proxy or a waypoint.
func (r *Role) shared() bool { return r.Scope == ScopeNode || r.Scope == ScopeNamespace }

// latencyRate is the rate a mesh's hops are read at: the busy rate of the
// least busy shared proxy every hop crosses (waking it is what a hop
// pays most at low rates), the entry rate for sidecars.
func (d deployment) latencyRate(m *Mesh) float64 {
	rate := math.Inf(1)
	for i := range m.Roles {
		if r := &m.Roles[i]; r.shared() {
			rate = min(rate, d.busyRate(r))
		}
	}
	if math.IsInf(rate, 1) {
		return d.sc.Rate
	}
	return rate
}

// usage predicts each role's CPU and memory in a mesh: CPU on each role's
// line around its busy rate, each sidecar's around its own pod's.
func (m *Mesh) usage(ref string, g *topology.Graph, d deployment) []Usage {
	sc, hops, appPods := d.sc, d.hops, d.appPods()
	known := float64(sc.Namespaces * len(g.Services))
	var out []Usage
	for i := range m.Roles {
		r := &m.Roles[i]
		n := instances(r, sc, appPods)
		u := Usage{Role: r.Role, Instances: n}
		if r.Scope == ScopePod {
			u.Cores, u.ReadLow, u.ReadAt = d.sidecarCores(ref, r)
		} else {
			u.ReadAt = d.busyRate(r)
			f := r.fitAt(u.ReadAt)
			u.Cores = f.IdleCores.Server.Times(float64(n))
			for _, h := range hops {
				u.Cores = u.Cores.Add(f.costAt(ref, h.protocol, h.payload).Server.Times(h.rate * float64(sc.Namespaces)))
			}
		}
		perInstance := r.MemBytes.Add(r.MemPerService.Times(math.Max(0, known-float64(len(chainServices)))))
		u.MemBytes = perInstance.Times(float64(n))
		// Each namespace's generator holds its connections open to the
		// entry; the profile measured the role's growth per connection.
		extra := float64(sc.Connections - refConnections)
		u.MemBytes = u.MemBytes.Add(r.MemPerConnection.Times(extra * float64(sc.Namespaces)))
		out = append(out, u)
	}
	return out
}

// sidecarCores is the CPU of every namespace's sidecars, and the lowest
// and highest busy rates they are read at. The chain ran one pod of each
// kind, and a proxy costs more per request the less busy it is, so each
// deployment's sidecars are read on the line around the chain's rate at
// which a chain pod of their kind carried as many hops a second as one of
// them does: a pod that only receives (back's), one that receives and
// calls (front's, two hops a request), or the load generator's (one per
// namespace, calling the entry). Each is its kind's idle plus its hops'
// costs on its side.
func (d deployment) sidecarCores(ref string, r *Role) (cores Interval, low, high float64) {
	type pod struct {
		replicas int
		in, out  []hop
	}
	pods := map[string]*pod{"": {replicas: max(r.ClientPods, 1)}}
	for name, n := range d.pods {
		pods[name] = &pod{replicas: n}
	}
	for _, h := range d.hops {
		pods[h.to].in = append(pods[h.to].in, h)
		pods[h.from].out = append(pods[h.from].out, h)
	}
	low = math.Inf(1)
	for _, name := range slices.Sorted(maps.Keys(pods)) { // summed in one order, so that figures repeat exactly
		p := pods[name]
		var in, out float64
		for _, h := range p.in {
			in += h.rate
		}
		for _, h := range p.out {
			out += h.rate
		}
		// The generator's sidecars split the entry rate as the chain's did.
		at := in / float64(p.replicas)
		switch {
		case name == "":
			at = out
		case out > 0:
			at = (in + out) / 2 / float64(p.replicas)
		}
		low, high = min(low, at), max(high, at)
		f := r.fitAt(at)
		idle := f.IdleCores.Server
		switch {
		case name == "":
			idle = f.IdleCores.Entry
		case out > 0:
			idle = idle.Add(f.IdleCores.Caller)
		}
		c := idle.Times(float64(p.replicas))
		for _, h := range p.in {
			c = c.Add(f.costAt(ref, h.protocol, h.payload).Server.Times(h.rate))
		}
		for _, h := range p.out {
			cost := f.costAt(ref, h.protocol, h.payload)
			side := cost.Caller
			if name == "" {
				side = cost.Entry
			}
			c = c.Add(side.Times(h.rate))
		}
		cores = cores.Add(c.Times(float64(d.sc.Namespaces)))
	}
	return cores, low, high
}

// instances is how many of a role the user's deployment runs.
func instances(r *Role, sc Scale, appPods int) int {
	switch r.Scope {
	case ScopePod:
		// The profile's sidecars in generator pods, per generator (one
		// per namespace), and one per application pod.
		return sc.Namespaces * (appPods + r.ClientPods)
	case ScopeNode:
		return max(sc.Nodes, 1)
	case ScopeNamespace:
		return sc.Namespaces * max(r.Instances, 1)
	}
	return max(r.Instances, 1)
}

// check refuses a scale a prediction cannot use.
func (sc Scale) check() error {
	switch {
	case sc.Namespaces < 1:
		return fmt.Errorf("--namespaces %d: want at least 1", sc.Namespaces)
	case sc.Rate <= 0:
		return fmt.Errorf("--rate %g: want each namespace's entry rate in requests per second, above 0", sc.Rate)
	case sc.Connections < 1:
		return fmt.Errorf("--connections %d: want at least 1", sc.Connections)
	}
	return nil
}
