package predict

import (
	"slices"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/topology"
)

const mib = 1 << 20

// synthetic is a profile with known unit costs: a sidecar mesh whose every
// hop adds exactly 1 ms at 50 B and 3 ms at 8000 B over HTTP (4 ms over
// gRPC at any payload it interpolates), and whose sidecars cost 0.01 cores
// idle (0.015 in a pod that also calls, 0.002 in a generator's), 0.2 ms of
// CPU per request received, 0.1 ms per request sent (by an app pod or the
// generator), 50 MiB at rest plus 1 MiB per known service
// and 10 KiB per connection.
func synthetic() *UnitCosts {
	hop := func(proto string, payload int, ms float64) Hop {
		d := constant(ms)
		return Hop{Protocol: proto, Payload: payload, Requests: 1000, Added: d, Low: d.Scale(0.5), High: d.Scale(2)}
	}
	cost := func(proto string, payload int, k float64) Cost {
		return Cost{Protocol: proto, Payload: payload, Sides: Sides{Server: exact(0.0002 * k), Caller: exact(0.0001 * k), Entry: exact(0.0001 * k)}}
	}
	return &UnitCosts{
		Version: FormatVersion, Source: "synthetic", Protocols: []string{"http", "grpc"}, Payloads: []int{50, 8000}, Reference: "http", Nodes: 1,
		Meshes: []Mesh{
			{Name: "baseline", Profile: "baseline"},
			{Name: "sidecar", Profile: "sidecar",
				Roles: []Role{{Role: "sidecar", Scope: ScopePod, Instances: 3, ClientPods: 1,
					Fits: []Fit{{From: 10, To: 300, IdleCores: Sides{Server: exact(0.01), Caller: exact(0.005), Entry: exact(0.002)},
						Costs: []Cost{cost("http", 50, 1), cost("http", 8000, 1), cost("grpc", 1000, 2)}}},
					MemBytes: Interval{50 * mib, 45 * mib, 55 * mib}, MemPerService: exact(mib), MemPerConnection: exact(10 << 10)}},
				Hops: []Hop{hop("http", 50, 1), hop("http", 8000, 3), hop("grpc", 1000, 4)}},
		},
	}
}

func graph(t *testing.T, name string) *topology.Graph {
	t.Helper()
	g, err := topology.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustPredict(t *testing.T, p *UnitCosts, o Options) *Prediction {
	t.Helper()
	pr, err := Predict(p, o)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

// tiered: every answer is 2700 B, a third of the way from 50 to 8000 B,
// so a hop adds 1 + 2 x 2650/7950 ms; the entry hop, a tier-2 hop and a
// tier-3 hop lie on the critical path (the two tier-2 branches run in
// parallel): three hops.
func TestTieredLatencyAndCPU(t *testing.T) {
	p := synthetic()
	pr := mustPredict(t, p, Options{Graph: graph(t, "tiered"), GraphName: "tiered", Scale: Scale{Namespaces: 2, Rate: 100, Connections: 8, Nodes: 1}})
	if len(pr.Meshes) != 2 || pr.Meshes[0].Mesh != "baseline" {
		t.Fatalf("meshes = %+v", pr.Meshes)
	}
	base, sc := pr.Meshes[0], pr.Meshes[1]
	if base.P50.V != 0 || base.Cores.V != 0 {
		t.Errorf("baseline adds %v ms and %v cores; want nothing", base.P50.V, base.Cores.V)
	}
	perHop := 1 + 2*2650.0/7950
	near(t, "p50", sc.P50.V, 3*perHop, 1e-9)
	near(t, "p99", sc.P99.V, 3*perHop, 1e-9)
	near(t, "p50 low", sc.P50.Lo, 1.5*perHop, 1e-9)
	near(t, "p50 high", sc.P50.Hi, 6*perHop, 1e-9)
	// Per namespace: 100 req/s enter tier-1 from the generator, 100 go to
	// each tier-2 and 200 to tier-3: 500 received (0.2 ms each), 400 sent
	// by app pods and 100 by the generator (0.1 ms each). 2 namespaces.
	// Idle: tier-1 and both tier-2s call (0.015 each), tier-3 only
	// receives (0.01), and the generator's 0.002.
	wantCPU := 2 * (500*0.0002 + 500*0.0001 + 3*0.015 + 0.01 + 0.002)
	near(t, "cores", sc.Cores.V, wantCPU, 1e-9)
	// Memory: 10 sidecars x (50 MiB + 1 MiB x (8 known - 2 profiled)).
	near(t, "mem MiB", sc.Mem.V/mib, 10*(50+6), 1e-9)
	near(t, "mem MiB low", sc.Mem.Lo/mib, 10*(45+6), 1e-9)
	if sc.Roles[0].Instances != 10 {
		t.Errorf("sidecars = %d, want 10", sc.Roles[0].Instances)
	}
	if sc.Nodes < 1 || sc.NodesMonthly <= 0 || sc.ConsumedMonthly.V <= 0 {
		t.Errorf("cost figures missing: %+v", sc)
	}
}

// Each parallel call beyond the first adds what the profile's fan-out
// cell measured a second one to add: a calls b, c and b at once (every
// hop 1 ms at 50 B), so 1 + 1 + 2 x 0.5 ms, each bound with its own; the
// tiered graph's one pair adds it once. Without it the prediction says
// that parallel calls are taken as independent.
func TestParallelCallsAddTheFanOutExtra(t *testing.T) {
	p := synthetic()
	m := &p.Meshes[1]
	m.Parallel = &Hop{Protocol: "http", Payload: 1000, Rate: 100, Requests: 400, Added: constant(0.5), Low: constant(0.25), High: constant(1)}
	g := &topology.Graph{Entry: "a", Services: []topology.Service{
		{Name: "a", ResponseSize: 50, Script: []topology.Step{{Parallel: []topology.Call{{Service: "b"}, {Service: "c"}, {Service: "b"}}}}},
		{Name: "b", ResponseSize: 50}, {Name: "c", ResponseSize: 50},
	}}
	pr := mustPredict(t, p, Options{Graph: g, Scale: Scale{Namespaces: 1, Rate: 100, Connections: 8}, Meshes: []string{"sidecar"}})
	near(t, "p50", pr.Meshes[0].P50.V, 3, 1e-9)
	near(t, "p50 low", pr.Meshes[0].P50.Lo, 1.5, 1e-9)
	near(t, "p50 high", pr.Meshes[0].P50.Hi, 6, 1e-9)
	perHop := 1 + 2*2650.0/7950
	pr = mustPredict(t, p, Options{Graph: graph(t, "tiered"), Scale: Scale{Namespaces: 1, Rate: 100, Connections: 8}, Meshes: []string{"sidecar"}})
	near(t, "tiered p50", pr.Meshes[0].P50.V, 3*perHop+0.5, 1e-9)
	noted := func(pr *Prediction) bool {
		return slices.ContainsFunc(pr.Notes, func(n string) bool { return strings.Contains(n, "no fan-out cell") })
	}
	if noted(pr) {
		t.Errorf("a profile with a fan-out cell is noted as without: %q", pr.Notes)
	}
	if pr = mustPredict(t, synthetic(), Options{Graph: g, Scale: Scale{Namespaces: 1, Rate: 100, Connections: 8}, Meshes: []string{"sidecar"}}); !noted(pr) {
		t.Errorf("notes = %q, want the missing fan-out cell said", pr.Notes)
	}
	if pr = mustPredict(t, synthetic(), Options{Graph: graph(t, "chain"), Scale: Scale{Namespaces: 1, Rate: 100, Connections: 8}, Meshes: []string{"sidecar"}}); noted(pr) {
		t.Errorf("a graph without parallel calls is noted: %q", pr.Notes)
	}
}

// bookinfo: productpage (5000 B) calls details (180 B) then reviews (450
// B), whose v2 and v3 (two thirds of its requests) call ratings (50 B).
// With constant hops the added latency is 3 hops plus ratings' hop two
// times in three: p25 without it, p50 and above with it.
func TestBookinfoMixesVersions(t *testing.T) {
	pr := mustPredict(t, synthetic(), Options{Graph: graph(t, "bookinfo"), Scale: Scale{Namespaces: 1, Rate: 10, Connections: 8}, Meshes: []string{"sidecar"}})
	hop := func(b float64) float64 { return 1 + 2*(b-50)/7950 }
	three := hop(5000) + hop(180) + hop(450)
	sc := pr.Meshes[0]
	near(t, "p50", sc.P50.V, three+hop(50), 1e-9)
	d := synthetic().Meshes[1].latency("http", graph(t, "bookinfo"), 10, 0)
	near(t, "p25", d.Quantile(0.25), three, 1e-9)
}

// A gRPC call at 2000 B: gRPC was measured at 1000 B only, so its hop is
// HTTP's at 2000 B shifted by gRPC's difference from HTTP at 1000 B.
func TestProtocolShiftedFromReference(t *testing.T) {
	m := synthetic().Meshes[1]
	httpAt := func(b float64) float64 { return 1 + 2*(b-50)/7950 }
	got := m.hopAt("http", "grpc", 2000, 100)[0].Quantile(0.5)
	near(t, "grpc hop at 2000 B", got, httpAt(2000)+4-httpAt(1000), 1e-9)
	c := m.Roles[0].Fits[0].costAt("http", "grpc", 2000)
	near(t, "grpc server cost", c.Server.V, 0.0002+0.0004-0.0002, 1e-12)
}

// A rate outside the profile's fits is read on the nearest one, and the
// prediction says so.
func TestRateOutsideTheProfileIsNoted(t *testing.T) {
	pr := mustPredict(t, synthetic(), Options{Graph: graph(t, "tiered"), Scale: Scale{Namespaces: 1, Rate: 1000, Connections: 8}, Meshes: []string{"sidecar"}})
	if !slices.ContainsFunc(pr.Notes, func(n string) bool {
		return strings.Contains(n, "1000 req/s, is outside the rates the profile measured (10 to 300 req/s)")
	}) {
		t.Errorf("notes = %q", pr.Notes)
	}
	pr = mustPredict(t, synthetic(), Options{Graph: graph(t, "tiered"), Scale: Scale{Namespaces: 1, Rate: 100, Connections: 8}, Meshes: []string{"sidecar"}})
	if slices.ContainsFunc(pr.Notes, func(n string) bool { return strings.Contains(n, "outside the rates") }) {
		t.Errorf("a rate inside the profile noted: %q", pr.Notes)
	}
}

func TestCoverRefusesWhatTheProfileDidNotMeasure(t *testing.T) {
	p := synthetic()
	big := graph(t, "tiered")
	big.Services[2].ResponseSize = 9000
	_, err := Predict(p, Options{Graph: big, Scale: Scale{Namespaces: 1, Rate: 10, Connections: 8}})
	if err == nil || !strings.Contains(err.Error(), "services[2] (tier-2-app-b): response_size 9000 is not covered") || !strings.Contains(err.Error(), "from 50 to 8000 B") {
		t.Errorf("payload: err = %v", err)
	}
	h2c := graph(t, "tiered")
	h2c.Services[1].Script[0].Call.Protocol = topology.ProtocolH2C
	_, err = Predict(p, Options{Graph: h2c, Scale: Scale{Namespaces: 1, Rate: 10, Connections: 8}})
	if err == nil || !strings.Contains(err.Error(), "services[1] (tier-2-app-a): script[0] call to tier-3-app-a: protocol h2c is not covered") || !strings.Contains(err.Error(), "protocols http, grpc") {
		t.Errorf("protocol: err = %v", err)
	}
	entry := graph(t, "tiered")
	entry.EntryProtocol = topology.ProtocolH2C
	if err := p.Cover(entry); err == nil || !strings.Contains(err.Error(), "entry_protocol: protocol h2c") {
		t.Errorf("entry protocol: err = %v", err)
	}
}

func TestPredictRefusesABadScaleOrMesh(t *testing.T) {
	g := graph(t, "tiered")
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Graph: g, Scale: Scale{Namespaces: 0, Rate: 1, Connections: 1}}, "--namespaces 0"},
		{Options{Graph: g, Scale: Scale{Namespaces: 1, Rate: 0, Connections: 1}}, "--rate 0"},
		{Options{Graph: g, Scale: Scale{Namespaces: 1, Rate: 1, Connections: 1}, Meshes: []string{"linkerd"}}, `--mesh "linkerd"`},
		{Options{Graph: g, Scale: Scale{Namespaces: 1, Rate: 1, Connections: 1}, Machine: "z9"}, "--machine"},
	} {
		if _, err := Predict(synthetic(), c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.o.Scale, err, c.want)
		}
	}
}

func TestHopsOfFollowsCountsAndProbabilities(t *testing.T) {
	g := &topology.Graph{Name: "g", Entry: "a", Services: []topology.Service{
		{Name: "a", Script: []topology.Step{{Call: &topology.Call{Service: "b", Count: 3, Probability: 0.5}}}},
		{Name: "b"},
	}}
	if err := g.Normalize(); err != nil {
		t.Fatal(err)
	}
	hs := hopsOf(g, 10)
	if len(hs) != 2 || hs[0] != (hop{protocol: "http", payload: defaultPayload, rate: 10, from: "", to: "a/"}) ||
		hs[1].rate != 15 || hs[1].from != "a/" || hs[1].to != "b/" {
		t.Errorf("hops = %+v", hs)
	}
}

// ambient is a mesh with one node proxy in the profile, busier per hop at
// low rates: each hop adds 3 ms when the chain ran at 10 req/s and 1 ms at
// 100 (at every payload measured there); its line from 10 to 100 req/s
// has 0.05 cores idle and 1 ms of CPU a hop, from 100 to 300 0.02 and 0.5
// ms.
func ambient() Mesh {
	hop := func(payload int, rate, ms float64) Hop {
		d := constant(ms)
		return Hop{Protocol: "http", Payload: payload, Rate: rate, Requests: 1000, Added: d, Low: d, High: d}
	}
	fit := func(from, to, idle, perHop float64) Fit {
		c := func(payload int) Cost {
			return Cost{Protocol: "http", Payload: payload, Sides: Sides{Server: exact(perHop)}}
		}
		return Fit{From: from, To: to, IdleCores: Sides{Server: exact(idle)}, Costs: []Cost{c(50), c(8000)}}
	}
	return Mesh{Name: "ambient", Profile: "ambient",
		Roles: []Role{{Role: "node-proxy", Scope: ScopeNode, Instances: 1,
			Fits: []Fit{fit(10, 100, 0.05, 0.001), fit(100, 300, 0.02, 0.0005)}}},
		Hops: []Hop{hop(50, 100, 1), hop(refPayload, 10, 3), hop(refPayload, 100, 1), hop(8000, 100, 1)}}
}

// A node proxy carries every hop on its node: tiered sends 50 hops a
// second per namespace at 10 req/s, so with 2 namespaces on one node it is
// as busy as the chain (2 hops a request) at 50 req/s, where a hop adds
// 3 - 2 x 40/90 ms; with 6 namespaces at 150 req/s, on the second line.
func TestSharedProxyIsReadAtItsBusyRate(t *testing.T) {
	p := synthetic()
	p.Meshes = append(p.Meshes, ambient())
	pr := mustPredict(t, p, Options{Graph: graph(t, "tiered"), Scale: Scale{Namespaces: 2, Rate: 10, Connections: 8, Nodes: 1}, Meshes: []string{"ambient"}})
	a := pr.Meshes[0]
	near(t, "latency read at", a.LatencyAt, 50, 1e-9)
	near(t, "p50", a.P50.V, 3*(3-2*40.0/90), 1e-9)
	near(t, "node proxy read at", a.Roles[0].ReadAt, 50, 1e-9)
	near(t, "cores at 50", a.Cores.V, 0.05+100*0.001, 1e-9)

	pr = mustPredict(t, p, Options{Graph: graph(t, "tiered"), Scale: Scale{Namespaces: 6, Rate: 10, Connections: 8, Nodes: 1}, Meshes: []string{"ambient"}})
	a = pr.Meshes[0]
	near(t, "node proxy read at", a.Roles[0].ReadAt, 150, 1e-9)
	near(t, "cores at 150", a.Cores.V, 0.02+300*0.0005, 1e-9)
	near(t, "p50 at 150", a.P50.V, 3*1, 1e-9)
	if slices.ContainsFunc(pr.Notes, func(n string) bool { return strings.Contains(n, "outside the rates") }) {
		t.Errorf("a busy rate inside the profile noted: %q", pr.Notes)
	}

	// One namespace over ten nodes: each proxy as busy as at 2.5 req/s,
	// below the profile's lowest rate, which the prediction says.
	pr = mustPredict(t, p, Options{Graph: graph(t, "tiered"), Scale: Scale{Namespaces: 1, Rate: 10, Connections: 8, Nodes: 10}, Meshes: []string{"ambient"}})
	near(t, "ten nodes: read at", pr.Meshes[0].Roles[0].ReadAt, 2.5, 1e-9)
	if !slices.ContainsFunc(pr.Notes, func(n string) bool {
		return strings.Contains(n, "Mesh ambient: its node-proxy is as busy as the profile's chain at 2.5 req/s, outside the rates the profile measured (10 to 300 req/s)")
	}) {
		t.Errorf("a busy rate below the profile is not noted: %q", pr.Notes)
	}

	// Two nodes share the hops: each proxy as busy as at 75 req/s.
	pr = mustPredict(t, p, Options{Graph: graph(t, "tiered"), Scale: Scale{Namespaces: 6, Rate: 10, Connections: 8, Nodes: 2}, Meshes: []string{"ambient"}})
	near(t, "two nodes: read at", pr.Meshes[0].Roles[0].ReadAt, 75, 1e-9)

	// Sidecars serve one pod each, read at their own pods' rates
	// (TestSidecarsAreReadAtTheirPodsRates): from 10 req/s (the tier-2s
	// and the generator) to 20 (tier-3, called by both tier-2s).
	pr = mustPredict(t, synthetic(), Options{Graph: graph(t, "tiered"), Scale: Scale{Namespaces: 6, Rate: 10, Connections: 8}, Meshes: []string{"sidecar"}})
	near(t, "sidecar read from", pr.Meshes[0].Roles[0].ReadLow, 10, 1e-9)
	near(t, "sidecar read at", pr.Meshes[0].Roles[0].ReadAt, 20, 1e-9)
	near(t, "sidecar latency read at", pr.Meshes[0].LatencyAt, 10, 1e-9)
}

// Each sidecar is read on the line around its own pod's busy rate, with
// its kind's idle: a (one pod) receives 10 req/s and calls b twice per
// request, so it carries 30 hops a second, as busy as the chain's front
// at 15 req/s; b's two pods receive 10 a second each, as the chain's back
// at 10; the generator sends 10. The line up to 12 req/s costs more per
// request (a proxy woken by each), the line above less.
func TestSidecarsAreReadAtTheirPodsRates(t *testing.T) {
	p := synthetic()
	r := &p.Meshes[1].Roles[0]
	fit := func(from, to, idle, k float64) Fit {
		c := func(payload int) Cost {
			return Cost{Protocol: "http", Payload: payload, Sides: Sides{Server: exact(2 * k), Caller: exact(k), Entry: exact(k)}}
		}
		return Fit{From: from, To: to, IdleCores: Sides{Server: exact(idle), Caller: exact(idle / 2), Entry: exact(idle / 4)},
			Costs: []Cost{c(50), c(8000)}}
	}
	r.Fits = []Fit{fit(5, 12, 0.004, 0.0003), fit(12, 300, 0.01, 0.0001)}
	g := &topology.Graph{Name: "g", Entry: "a", Services: []topology.Service{
		{Name: "a", ResponseSize: 50, Script: []topology.Step{{Call: &topology.Call{Service: "b", Count: 2}}}},
		{Name: "b", ResponseSize: 50, Replicas: 2},
	}}
	if err := g.Normalize(); err != nil {
		t.Fatal(err)
	}
	pr := mustPredict(t, p, Options{Graph: g, Scale: Scale{Namespaces: 3, Rate: 10, Connections: 8}, Meshes: []string{"sidecar"}})
	u := pr.Meshes[0].Roles[0]
	near(t, "read from", u.ReadLow, 10, 1e-9)
	near(t, "read at", u.ReadAt, 15, 1e-9)
	a := 0.01 + 0.005 + 10*0.0002 + 20*0.0001
	b := 2*0.004 + 20*0.0006
	gen := 0.001 + 10*0.0003
	near(t, "cores", u.Cores.V, 3*(a+b+gen), 1e-9)
	if u.Instances != 3*4 {
		t.Errorf("instances %d, want 12", u.Instances)
	}
}

// A figure moved by a reference's difference keeps its estimate inside
// its bounds: the reference's spread widens them, never crosses them.
func TestMovedBoundsHoldTheEstimate(t *testing.T) {
	d := [3]Dist{constant(1), constant(0.9), constant(1.1)}
	from := [3]Dist{constant(1), constant(0.5), constant(1.5)}
	to := [3]Dist{constant(1), constant(1), constant(1)}
	out := moved(d, from, to)
	near(t, "moved", out[0].Quantile(0.5), 1, 1e-9)
	near(t, "moved low", out[1].Quantile(0.5), 0.4, 1e-9)
	near(t, "moved high", out[2].Quantile(0.5), 1.6, 1e-9)
	iv := Interval{1, 0.9, 1.1}.Moved(Interval{1, 0.5, 1.5}, exact(1))
	near(t, "Interval.Moved", iv.V, 1, 1e-9)
	near(t, "Interval.Moved low", iv.Lo, 0.4, 1e-9)
	near(t, "Interval.Moved high", iv.Hi, 1.6, 1e-9)
}
