package topology

import (
	"fmt"
	"strconv"
)

// Deployment is one set of identical replicas a platform runs. Each replica
// runs `meshbench app --graph FILE --service Service --version Version`.
type Deployment struct {
	Service string `json:"service"`
	Version string `json:"version"`
	// Name is "<service>-<version>" when the service declares versions,
	// the service name otherwise.
	Name           string    `json:"name"`
	Replicas       int       `json:"replicas"`
	ServiceAccount string    `json:"service_account"`
	Port           int       `json:"port"`
	Resources      Resources `json:"resources"`
}

// Deployments lists every deployment of a normalized graph, in service
// order then version order.
func (g *Graph) Deployments() []Deployment {
	var out []Deployment
	for _, s := range g.Services {
		d := Deployment{
			Service: s.Name, Version: DefaultVersion, Name: s.Name, Replicas: s.Replicas,
			ServiceAccount: s.ServiceAccount, Port: s.Port, Resources: s.Resources,
		}
		if len(s.Versions) == 0 {
			out = append(out, d)
			continue
		}
		for _, v := range s.Versions {
			dv := d
			dv.Version, dv.Name = v.Name, s.Name+"-"+v.Name
			if v.Replicas > 0 {
				dv.Replicas = v.Replicas
			}
			out = append(out, dv)
		}
	}
	return out
}

// Calls lists the distinct services the named service calls, in any of its
// versions, in the order they first appear.
func (g *Graph) Calls(service string) []string {
	s := g.Service(service)
	if s == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	add := func(script []Step) {
		for _, st := range script {
			for _, c := range st.Calls() {
				if !seen[c.Service] {
					seen[c.Service] = true
					out = append(out, c.Service)
				}
			}
		}
	}
	add(s.Script)
	for _, v := range s.Versions {
		add(v.Script)
	}
	return out
}

// Edges lists the distinct (service, protocol) pairs the named service
// calls, in any of its versions, in the order they first appear.
func (g *Graph) Edges(service string) []Edge {
	s := g.Service(service)
	if s == nil {
		return nil
	}
	var out []Edge
	seen := map[Edge]bool{}
	add := func(script []Step) {
		for _, st := range script {
			for _, c := range st.Calls() {
				e := Edge{Service: c.Service, Protocol: c.Protocol.Or()}
				if !seen[e] {
					seen[e] = true
					out = append(out, e)
				}
			}
		}
	}
	add(s.Script)
	for _, v := range s.Versions {
		add(v.Script)
	}
	return out
}

// Behavior is what one version of a service does per request, with the
// version's overrides applied.
type Behavior struct {
	Service      string
	Version      string
	ResponseSize int
	CPUWork      Duration
	Latency      Duration
	Script       []Step
}

// Behavior resolves what a version of a service does. The version may be
// empty when the service declares at most one version.
func (g *Graph) Behavior(service, version string) (Behavior, error) {
	s := g.Service(service)
	if s == nil {
		return Behavior{}, fmt.Errorf("service %q is not in graph %q", service, g.Name)
	}
	b := Behavior{
		Service: s.Name, Version: DefaultVersion, ResponseSize: s.ResponseSize,
		CPUWork: s.CPUWork, Latency: s.Latency, Script: s.Script,
	}
	if len(s.Versions) == 0 {
		if version != "" && version != DefaultVersion {
			return Behavior{}, fmt.Errorf("service %q has no version %q (it declares none, so its version is %q)", service, version, DefaultVersion)
		}
		return b, nil
	}
	if version == "" && len(s.Versions) == 1 {
		version = s.Versions[0].Name
	}
	for _, v := range s.Versions {
		if v.Name != version {
			continue
		}
		b.Version = v.Name
		if v.ResponseSize > 0 {
			b.ResponseSize = v.ResponseSize
		}
		if v.CPUWork > 0 {
			b.CPUWork = v.CPUWork
		}
		if v.Latency > 0 {
			b.Latency = v.Latency
		}
		if len(v.Script) > 0 {
			b.Script = v.Script
		}
		return b, nil
	}
	return Behavior{}, fmt.Errorf("service %q has no version %q; its versions are %v", service, version, versionNames(s))
}

func versionNames(s *Service) []string {
	out := make([]string, len(s.Versions))
	for i, v := range s.Versions {
		out[i] = v.Name
	}
	return out
}

// Namespaces returns the names of n tenant namespaces, "ns-1" to "ns-n".
// Each holds a full, isolated copy of the graph: services call only within
// their own namespace.
func Namespaces(n int) []string {
	out := make([]string, 0, max(n, 0))
	for i := 1; i <= n; i++ {
		out = append(out, "ns-"+strconv.Itoa(i))
	}
	return out
}
