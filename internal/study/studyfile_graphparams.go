package study

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/topology"
)

// The parameters are registered here, beside the graph variant they make,
// rather than in params' literal.
func init() {
	params[results.ParamPayload] = param{workload: true, set: func(s *setting, raw json.RawMessage) (string, error) {
		n, err := positiveInt(raw)
		if err == nil && n > topology.MaxResponseSize {
			err = fmt.Errorf("%d bytes, more than the %d an answer may be", n, topology.MaxResponseSize)
		}
		s.Payload = int(n)
		return strconv.FormatInt(n, 10), err
	}}
	params[results.ParamProtocol] = param{workload: true, set: func(s *setting, raw json.RawMessage) (string, error) {
		names := make([]string, len(topology.Protocols))
		for i, p := range topology.Protocols {
			names[i] = string(p)
		}
		v, err := oneOf(raw, names...)
		s.Protocol = topology.Protocol(v)
		return v, err
	}}
	params[results.ParamFanout] = param{workload: true, set: func(s *setting, raw json.RawMessage) (string, error) {
		n, err := positiveInt(raw)
		s.Fanout = int(n)
		return strconv.FormatInt(n, 10), err
	}}
}

// graphVariant is the graph a cell deploys: the study's graph, with the
// cell's payload, protocol and fan-out applied when a sweep sets them.
func graphVariant(base *topology.Graph, payload int, protocol topology.Protocol, fanout int) *topology.Graph {
	if payload == 0 && protocol == "" && fanout <= 1 {
		return base
	}
	g := *base
	g.Services = slices.Clone(base.Services)
	if protocol != "" {
		g.EntryProtocol = protocol
	}
	for i := range g.Services {
		svc := &g.Services[i]
		svc.Versions = slices.Clone(svc.Versions)
		if payload > 0 {
			svc.ResponseSize = payload
		}
		svc.Script = variantScript(svc.Script, protocol, fanout)
		for j := range svc.Versions {
			if payload > 0 {
				svc.Versions[j].ResponseSize = payload
			}
			svc.Versions[j].Script = variantScript(svc.Versions[j].Script, protocol, fanout)
		}
	}
	return &g
}

// variantScript copies a script with every call over the protocol (when
// set) and made fanout times in parallel (when above 1): a step's calls,
// each repeated, become one parallel group.
func variantScript(script []topology.Step, protocol topology.Protocol, fanout int) []topology.Step {
	if protocol == "" && fanout <= 1 || script == nil {
		return script
	}
	out := make([]topology.Step, len(script))
	for i, st := range script {
		calls := slices.Clone(st.Calls())
		for j := range calls {
			if protocol != "" {
				calls[j].Protocol = protocol
			}
		}
		switch {
		case fanout > 1:
			for range fanout {
				out[i].Parallel = append(out[i].Parallel, calls...)
			}
		case st.Call != nil:
			out[i].Call = &calls[0]
		default:
			out[i].Parallel = calls
		}
	}
	return out
}

// graphKey is the part of a workload key the graph variant adds.
func (st setting) graphKey() string {
	var k string
	if st.Payload > 0 {
		k += fmt.Sprintf(",%s=%d", results.ParamPayload, st.Payload)
	}
	if st.Protocol != "" {
		k += fmt.Sprintf(",%s=%s", results.ParamProtocol, st.Protocol)
	}
	if st.Fanout > 1 {
		k += fmt.Sprintf(",%s=%d", results.ParamFanout, st.Fanout)
	}
	return k
}
