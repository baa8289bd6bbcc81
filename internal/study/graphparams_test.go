package study

import (
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/topology"
)

// The profile preset sweeps the graph's payload and protocol: each
// combination is its own workload group, and each cell deploys the graph
// with every answer at the payload and every call over the protocol.
func TestProfilePresetVariesPayloadAndProtocol(t *testing.T) {
	s, _, err := Preset("profile", PlatformOverride{})
	if err != nil {
		t.Fatal(err)
	}
	p := plan(t, s, s.ScalingFor(0))
	// 9 sweep rows x 7 meshes, one repetition; the rows at 1000 B over
	// HTTP with one namespace share a deployment.
	if len(p.Cells) != 63 || p.Groups != 6 {
		t.Fatalf("cells %d, groups %d; want 63 and 6", len(p.Cells), p.Groups)
	}
	seen := map[string]bool{}
	for _, c := range p.Cells {
		g := s.WorkloadOf(c).Graph
		for _, svc := range g.Services {
			if svc.ResponseSize != c.Payload {
				t.Fatalf("cell %s: %s answers %d B, want %d", c.ID, svc.Name, svc.ResponseSize, c.Payload)
			}
		}
		if g.EntryProtocol != c.Protocol || g.Service("front").Script[0].Call.Protocol != c.Protocol {
			t.Fatalf("cell %s: entry %q, call %q; want %q", c.ID, g.EntryProtocol, g.Service("front").Script[0].Call.Protocol, c.Protocol)
		}
		grpc := c.Protocol == topology.ProtocolGRPC
		if c.Load.Options.GRPC != grpc || c.Load.Options.HTTP2 != (c.Protocol == topology.ProtocolH2C) {
			t.Fatalf("cell %s: load %+v for protocol %s", c.ID, c.Load.Options, c.Protocol)
		}
		seen[c.Params[ParamProtocol]+"/"+c.Params[ParamPayload]] = true
	}
	if len(seen) != 5 {
		t.Errorf("variants %v, want 5", seen)
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
