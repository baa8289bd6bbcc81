package study

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/topology"
)

// setting is what one cell runs with: the workload's shape and the load,
// after the cell's sweep values were applied to the study's.
type setting struct {
	Namespaces int
	// Tenants, in tenant scaling, is how many namespaces are loaded.
	Tenants  int
	Replicas map[string]int
	// Payload, Protocol and Fanout, when a sweep sets them, change the
	// graph (graphVariant).
	Payload  int
	Protocol topology.Protocol
	Fanout   int
	Load     Load
}

func (s setting) clone() setting {
	s.Replicas = maps.Clone(s.Replicas)
	return s
}

// param is one parameter a sweep can vary. set decodes a sweep value,
// checks it, applies it and returns its canonical text, the form results
// record it in.
type param struct {
	workload bool // changing it means deploying the workload again
	set      func(s *setting, raw json.RawMessage) (string, error)
}

// replicasPrefix starts the name of a per-service replica parameter, as in
// "replicas.productpage".
const replicasPrefix = "replicas."

var params = map[string]param{
	"connections": {set: func(s *setting, raw json.RawMessage) (string, error) {
		n, err := positiveInt(raw)
		if err == nil {
			err = checkConnections(int(n))
		}
		s.Load.Connections = int(n)
		return strconv.FormatInt(n, 10), err
	}},
	"rate": {set: func(s *setting, raw json.RawMessage) (string, error) {
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil || v < 0 {
			return "", fmt.Errorf("%s is not a rate: want requests per second >= 0 (0 is closed loop)", raw)
		}
		if err := checkRate(v); err != nil {
			return "", err
		}
		s.Load.Rate = v
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	}},
	"arrivals": {set: func(s *setting, raw json.RawMessage) (string, error) {
		v, err := oneOf(raw, load.ArrivalsUniform, load.ArrivalsPoisson)
		s.Load.Arrivals = v
		return v, err
	}},
	"requests": {set: func(s *setting, raw json.RawMessage) (string, error) {
		n, err := positiveInt(raw)
		if err == nil {
			err = checkRequests(n)
		}
		s.Load.Requests, s.Load.Duration = n, 0
		return strconv.FormatInt(n, 10), err
	}},
	"duration": {set: func(s *setting, raw json.RawMessage) (string, error) {
		d, err := positiveDuration(raw)
		if err == nil {
			err = checkPhase(d, "a measured phase may last")
		}
		s.Load.Duration, s.Load.Requests = d, 0
		return d.String(), err
	}},
	"warmup": {set: func(s *setting, raw json.RawMessage) (string, error) {
		var d topology.Duration
		if err := json.Unmarshal(raw, &d); err != nil || d < 0 {
			return "", fmt.Errorf("%s is not a warm-up: want a duration such as \"5s\"", raw)
		}
		if err := checkPhase(d, "a warm-up may last"); err != nil {
			return "", err
		}
		s.Load.Warmup = d
		return d.String(), nil
	}},
	"path": {set: func(s *setting, raw json.RawMessage) (string, error) {
		v, err := oneOf(raw, string(infra.PathService), string(infra.PathIngress))
		s.Load.Path = infra.LoadPath(v)
		return v, err
	}},
	"generators": {set: func(s *setting, raw json.RawMessage) (string, error) {
		v, err := oneOf(raw, GeneratorsOne, GeneratorsPerNamespace)
		s.Load.Generators = v
		return v, err
	}},
	"keepalive": {set: func(s *setting, raw json.RawMessage) (string, error) {
		b, err := boolean(raw)
		s.Load.KeepAlive = &b
		return strconv.FormatBool(b), err
	}},
	"conn_requests": {set: func(s *setting, raw json.RawMessage) (string, error) {
		var n int
		if err := json.Unmarshal(raw, &n); err != nil || n < 0 {
			return "", fmt.Errorf("%s is not a request count: want a whole number >= 0 (0 keeps connections open)", raw)
		}
		s.Load.ConnRequests = n
		return strconv.Itoa(n), nil
	}},
	results.ParamUpload: {set: func(s *setting, raw json.RawMessage) (string, error) {
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil || n < 0 {
			return "", fmt.Errorf("%s is not an upload: want bytes >= 0 (0 sends no body)", raw)
		}
		s.Load.Upload = n
		return strconv.FormatInt(n, 10), nil
	}},
	"http2": {set: func(s *setting, raw json.RawMessage) (string, error) {
		b, err := boolean(raw)
		s.Load.HTTP2 = b
		return strconv.FormatBool(b), err
	}},
	"namespaces": {workload: true, set: func(s *setting, raw json.RawMessage) (string, error) {
		n, err := positiveInt(raw)
		if err == nil {
			err = checkNamespaces(int(n))
		}
		s.Namespaces = int(n)
		return strconv.FormatInt(n, 10), err
	}},
}

// ParamNames lists the parameters a sweep can vary.
func ParamNames() []string {
	return append(slices.Sorted(maps.Keys(params)), replicasPrefix+"<service>")
}

// lookupParam finds a parameter by name; replicas.<service> must name a
// service of the graph.
func lookupParam(name string, g *topology.Graph) (param, error) {
	if p, ok := params[name]; ok {
		return p, nil
	}
	svc, ok := strings.CutPrefix(name, replicasPrefix)
	if !ok {
		return param{}, fmt.Errorf("unknown parameter %q; sweepable: %s", name, strings.Join(ParamNames(), ", "))
	}
	if g.Service(svc) == nil {
		return param{}, fmt.Errorf("%q: graph %q has no service %q", name, g.Name, svc)
	}
	return param{workload: true, set: func(s *setting, raw json.RawMessage) (string, error) {
		n, err := positiveInt(raw)
		if err == nil {
			err = graphMessage(g.CheckReplicas(name, svc, int(n)))
		}
		s.Replicas = maps.Clone(s.Replicas)
		if s.Replicas == nil {
			s.Replicas = map[string]int{}
		}
		s.Replicas[svc] = int(n)
		return strconv.FormatInt(n, 10), err
	}}, nil
}

func positiveInt(raw json.RawMessage) (int64, error) {
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil || n < 1 {
		return 0, fmt.Errorf("%s is not a whole number >= 1", raw)
	}
	return n, nil
}

func positiveDuration(raw json.RawMessage) (topology.Duration, error) {
	var d topology.Duration
	if err := json.Unmarshal(raw, &d); err != nil || d <= 0 {
		return 0, fmt.Errorf("%s is not a duration: want one such as \"10s\"", raw)
	}
	return d, nil
}

func oneOf(raw json.RawMessage, allowed ...string) (string, error) {
	var v string
	if err := json.Unmarshal(raw, &v); err != nil || !slices.Contains(allowed, v) {
		return "", fmt.Errorf("%s: want one of %s", raw, strings.Join(allowed, ", "))
	}
	return v, nil
}

func boolean(raw json.RawMessage) (bool, error) {
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, fmt.Errorf("%s: want true or false", raw)
	}
	return b, nil
}

// axis is one sweep, decoded: the parameters it sets and, per value, the
// raw value of each.
type axis struct {
	names  []string
	params []param
	rows   [][]json.RawMessage
}

// decodeAxis checks a sweep against the graph and splits its values.
func decodeAxis(sw Sweep, path string, g *topology.Graph, base setting) (axis, error) {
	var a axis
	switch {
	case sw.Param != "" && len(sw.Params) > 0:
		return a, fieldError(path, "set param or params, not both")
	case sw.Param != "":
		a.names = []string{sw.Param}
	case len(sw.Params) > 0:
		a.names = sw.Params
	default:
		return a, fieldError(path+".param", "required: the parameter to vary")
	}
	seen := map[string]bool{}
	for i, name := range a.names {
		p, err := lookupParam(name, g)
		if err != nil {
			if sw.Param != "" {
				return a, fieldError(path+".param", "%v", err)
			}
			return a, fieldError(fmt.Sprintf("%s.params[%d]", path, i), "%v", err)
		}
		if seen[name] {
			return a, fieldError(path+".params", "%q is listed twice", name)
		}
		seen[name] = true
		a.params = append(a.params, p)
	}
	if len(sw.Values) == 0 {
		return a, fieldError(path+".values", "required: at least one value")
	}
	for i, raw := range sw.Values {
		vp := fmt.Sprintf("%s.values[%d]", path, i)
		row := []json.RawMessage{raw}
		if sw.Param == "" {
			row = nil
			if err := json.Unmarshal(raw, &row); err != nil || len(row) != len(a.names) {
				return a, fieldError(vp, "want a list of %d values, one for each of %s", len(a.names), strings.Join(a.names, ", "))
			}
		}
		s := base.clone()
		for j, p := range a.params {
			if _, err := p.set(&s, row[j]); err != nil {
				return a, fieldError(vp, "%s: %v", a.names[j], err)
			}
		}
		// A payload or a fan-out changes the call tree's size.
		if s.Payload != base.Payload || s.Fanout != base.Fanout {
			var fe *topology.FieldError
			if err := graphVariant(g, s.Payload, s.Protocol, s.Fanout).CheckTree(); errors.As(err, &fe) {
				return a, fieldError(vp, "%s: %s", strings.Join(a.names, ", "), fe.Msg)
			}
		}
		a.rows = append(a.rows, row)
	}
	if err := checkDistinct(a, path); err != nil {
		return a, err
	}
	return a, nil
}

// checkDistinct refuses a sweep that lists the same value twice: the two
// cells would be one cell measured twice under two names.
func checkDistinct(a axis, path string) error {
	seen := map[string]int{}
	for i, row := range a.rows {
		var key bytes.Buffer
		s := setting{}
		for j, p := range a.params {
			v, _ := p.set(&s, row[j]) // checked by decodeAxis
			key.WriteString(v + "\x00")
		}
		if j, dup := seen[key.String()]; dup {
			return fieldError(fmt.Sprintf("%s.values[%d]", path, i), "repeats values[%d]", j)
		}
		seen[key.String()] = i
	}
	return nil
}
