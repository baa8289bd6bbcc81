package study

import (
	"strconv"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/topology"
)

// The profile preset sweeps the graph's payload, protocol and fan-out:
// each combination is its own workload group, and each cell deploys the
// graph with every answer at the payload, every call over the protocol,
// made fan-out times in parallel.
func TestProfilePresetVariesPayloadAndProtocol(t *testing.T) {
	s, _, err := Preset("profile", PlatformOverride{})
	if err != nil {
		t.Fatal(err)
	}
	p := plan(t, s, s.ScalingFor(0))
	// 11 sweep rows x 7 meshes, one repetition; the rows at 1000 B over
	// HTTP with one namespace and no fan-out share a deployment.
	if len(p.Cells) != 77 || p.Groups != 7 {
		t.Fatalf("cells %d, groups %d; want 77 and 7", len(p.Cells), p.Groups)
	}
	fans := 0
	seen := map[string]bool{}
	for _, c := range p.Cells {
		g := s.WorkloadOf(c).Graph
		for _, svc := range g.Services {
			if svc.ResponseSize != c.Payload {
				t.Fatalf("cell %s: %s answers %d B, want %d", c.ID, svc.Name, svc.ResponseSize, c.Payload)
			}
		}
		calls := g.Service("front").Script[0].Calls()
		if g.EntryProtocol != c.Protocol || calls[0].Protocol != c.Protocol {
			t.Fatalf("cell %s: entry %q, call %q; want %q", c.ID, g.EntryProtocol, calls[0].Protocol, c.Protocol)
		}
		if want := max(c.Fanout, 1); len(calls) != want || (want > 1) != (g.Service("front").Script[0].Parallel != nil) {
			t.Fatalf("cell %s: front makes %d calls, want %d in parallel", c.ID, len(calls), want)
		}
		if c.Fanout > 1 {
			fans++
		}
		grpc := c.Protocol == topology.ProtocolGRPC
		if c.Load.Options.GRPC != grpc || c.Load.Options.HTTP2 != (c.Protocol == topology.ProtocolH2C) {
			t.Fatalf("cell %s: load %+v for protocol %s", c.ID, c.Load.Options, c.Protocol)
		}
		seen[c.Params[results.ParamProtocol]+"/"+c.Params[results.ParamPayload]] = true
	}
	if len(seen) != 5 || fans != 7 {
		t.Errorf("variants %v, fan-out cells %d; want 5 and 7", seen, fans)
	}
	// The study's own graph is left as written.
	if s.Graph.Service("front").Script[0].Call.Protocol != "" || s.Graph.EntryProtocol != "" {
		t.Error("a variant changed the study's graph")
	}
}

func TestProtocolSweepRefusesAnUnknownProtocol(t *testing.T) {
	src := "apiVersion: meshbench.dev/v1alpha1\nkind: Study\nname: test\nworkload:\n  graph: chain\nmeshes: [baseline]\nload: {rate: 10, duration: 1s}\nsweeps:\n- param: protocol\n  values: [http, tcp]\n"
	_, err := Parse([]byte(src), "")
	if err == nil || !strings.Contains(err.Error(), "tcp") || !strings.Contains(err.Error(), "http, h2c, grpc") {
		t.Errorf("err = %v", err)
	}
}

// A fan-out makes each step's calls, parallel ones included, that many
// times over in one parallel group, over the swept protocol.
func TestFanoutRepeatsEveryStepsCalls(t *testing.T) {
	g, err := topology.Builtin("tiered")
	if err != nil {
		t.Fatal(err)
	}
	s := &Study{Graph: g}
	v := graphVariant(s.Graph, 0, topology.ProtocolH2C, 2)
	got := v.Service("tier-1-app-a").Script[0].Parallel
	var names []string
	for _, c := range got {
		if c.Protocol != topology.ProtocolH2C {
			t.Errorf("call %s over %q", c.Service, c.Protocol)
		}
		names = append(names, c.Service)
	}
	if strings.Join(names, ",") != "tier-2-app-a,tier-2-app-b,tier-2-app-a,tier-2-app-b" {
		t.Errorf("tier-1 calls %v", names)
	}
	if st := v.Service("tier-2-app-a").Script[0]; st.Call != nil || len(st.Parallel) != 2 {
		t.Errorf("tier-2's call became %+v, want two in parallel", st)
	}
	if g.Service("tier-1-app-a").Script[0].Parallel[0].Protocol != "" || len(g.Service("tier-1-app-a").Script[0].Parallel) != 2 {
		t.Error("the variant changed the study's graph")
	}
	if graphVariant(s.Graph, 0, "", 1) != g {
		t.Error("a fan-out of 1 made a variant")
	}
}

// The bulk preset sweeps downloads (the answer's payload) and uploads (a
// POST body of filler) together: an upload cell posts its size to a
// small answer, a download cell gets without a body.
func TestBulkPresetUploads(t *testing.T) {
	t.Parallel()
	s, _, err := Preset("bulk", PlatformOverride{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(s, s.ScalingFor(0))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range p.Cells {
		o := c.Load.Options
		up := c.Params["upload"]
		seen[up+"/"+c.Params["payload"]] = true
		switch {
		case up == "0" && (o.Method != "GET" || o.BodySize != 0):
			t.Errorf("%s: a download sends %s with a %d-byte body", c.ID, o.Method, o.BodySize)
		case up != "0" && (o.Method != "POST" || strconv.FormatInt(o.BodySize, 10) != up || c.Payload != 1000):
			t.Errorf("%s: an upload of %s sends %s with a %d-byte body to a %d-byte answer", c.ID, up, o.Method, o.BodySize, c.Payload)
		}
	}
	for _, want := range []string{"0/1000000", "0/10000000", "0/100000000", "1000000/1000", "10000000/1000", "100000000/1000"} {
		if !seen[want] {
			t.Errorf("no cell at upload/payload %s among %v", want, seen)
		}
	}
	if _, err := Parse([]byte(strings.Replace(uploadSource, "upload: 1000", "upload: -1", 1)), "testdata"); err == nil || !strings.Contains(err.Error(), "load.upload") {
		t.Errorf("a negative upload: %v, want an error naming load.upload", err)
	}
}

const uploadSource = "apiVersion: meshbench.dev/v1alpha1\nkind: Study\nname: test\nworkload:\n  graph: bulk\nmeshes: [baseline]\nload: {duration: 1s, upload: 1000}\n"
