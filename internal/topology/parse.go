package topology

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Default values a normalized graph carries.
const (
	DefaultPort      = 8080
	DefaultReplicas  = 1
	DefaultVersion   = "v1"
	DefaultEntryPath = "/"
)

// Parse reads a graph from YAML (or JSON), refuses unknown fields, fills in
// defaults and validates it. Errors name the offending field.
func Parse(data []byte) (*Graph, error) {
	var g Graph
	if err := yaml.UnmarshalStrict(data, &g); err != nil {
		return nil, fmt.Errorf("parse graph: %w", err)
	}
	if err := g.Normalize(); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.place(data)
		}
		return nil, err
	}
	return &g, nil
}

// Load returns the built-in graph of that name or, failing that, parses the
// YAML file at that path.
func Load(nameOrPath string) (*Graph, error) {
	if g, err := Builtin(nameOrPath); err == nil {
		return g, nil
	}
	data, err := os.ReadFile(nameOrPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("graph %q is neither a built-in (%v) nor a file", nameOrPath, BuiltinNames())
	}
	if err != nil {
		return nil, fmt.Errorf("read graph: %w", err)
	}
	g, err := Parse(data)
	var fe *FieldError
	switch {
	case errors.As(err, &fe):
		fe.File = nameOrPath
		return nil, fe
	case err != nil:
		return nil, fmt.Errorf("%s: %w", nameOrPath, err)
	}
	return g, nil
}

// Marshal writes the graph as YAML that Parse reads back to an equal graph.
func (g *Graph) Marshal() ([]byte, error) {
	data, err := yaml.Marshal(g)
	if err != nil {
		return nil, fmt.Errorf("marshal graph: %w", err)
	}
	return data, nil
}

// Normalize fills in defaults and validates the graph. Parse, Load and
// Builtin call it; call it on a graph built in code.
func (g *Graph) Normalize() error {
	if g.EntryPath == "" {
		g.EntryPath = DefaultEntryPath
	}
	for i := range g.Services {
		s := &g.Services[i]
		if s.Port == 0 {
			s.Port = DefaultPort
		}
		if s.Replicas == 0 {
			s.Replicas = DefaultReplicas
		}
		if s.ServiceAccount == "" {
			s.ServiceAccount = s.Name
		}
	}
	return g.validate()
}

// UnmarshalJSON reads a call either as an object or, as a shorthand, as the
// bare name of the service: `call: details`.
func (c *Call) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err == nil {
		*c = Call{Service: name}
		return nil
	}
	type plain Call // without this method, so that decoding does not recurse
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("call: %w", err)
	}
	*c = Call(p)
	return nil
}
