package study

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/meshbench/meshbench/internal/topology"
)

// The sweep parameters that change the graph itself rather than its
// shape: a profiling study (the profile preset) measures a proxy's unit
// costs at several payload sizes and protocols on one graph. Both redeploy
// the workload.
const (
	// ParamPayload sets every service's (and version's) response size,
	// in bytes.
	ParamPayload = "payload"
	// ParamProtocol sets the entry's protocol and every call's.
	ParamProtocol = "protocol"
)

// The parameters are registered here, beside the graph variant they make,
// rather than in params' literal.
func init() {
	params[ParamPayload] = param{workload: true, set: func(s *setting, raw json.RawMessage) (string, error) {
		n, err := positiveInt(raw)
		s.Payload = int(n)
		return strconv.FormatInt(n, 10), err
	}}
	params[ParamProtocol] = param{workload: true, set: func(s *setting, raw json.RawMessage) (string, error) {
		names := make([]string, len(topology.Protocols))
		for i, p := range topology.Protocols {
			names[i] = string(p)
		}
		v, err := oneOf(raw, names...)
		s.Protocol = topology.Protocol(v)
		return v, err
	}}
}

// graphVariant is the graph a cell deploys: the study's, with the cell's
// payload and protocol applied when a sweep sets them.
func (s *Study) graphVariant(payload int, protocol topology.Protocol) *topology.Graph {
	if payload == 0 && protocol == "" {
		return s.Graph
	}
	g := *s.Graph
	g.Services = slices.Clone(s.Graph.Services)
	if protocol != "" {
		g.EntryProtocol = protocol
	}
	for i := range g.Services {
		svc := &g.Services[i]
		svc.Versions = slices.Clone(svc.Versions)
		if payload > 0 {
			svc.ResponseSize = payload
		}
		svc.Script = withProtocol(svc.Script, protocol)
		for j := range svc.Versions {
			if payload > 0 {
				svc.Versions[j].ResponseSize = payload
			}
			svc.Versions[j].Script = withProtocol(svc.Versions[j].Script, protocol)
		}
	}
	return &g
}

// withProtocol copies a script with every call over the protocol.
func withProtocol(script []topology.Step, protocol topology.Protocol) []topology.Step {
	if protocol == "" || script == nil {
		return script
	}
	out := make([]topology.Step, len(script))
	for i, st := range script {
		if st.Call != nil {
			c := *st.Call
			c.Protocol = protocol
			out[i].Call = &c
		}
		if st.Parallel != nil {
			out[i].Parallel = slices.Clone(st.Parallel)
			for j := range out[i].Parallel {
				out[i].Parallel[j].Protocol = protocol
			}
		}
	}
	return out
}

// graphKey is the part of a workload key the graph variant adds.
func (st setting) graphKey() string {
	var k string
	if st.Payload > 0 {
		k += fmt.Sprintf(",%s=%d", ParamPayload, st.Payload)
	}
	if st.Protocol != "" {
		k += fmt.Sprintf(",%s=%s", ParamProtocol, st.Protocol)
	}
	return k
}
