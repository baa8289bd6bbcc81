package topology

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/meshbench/meshbench/internal/resources"
)

// dnsLabel is what Kubernetes accepts as a Service name (RFC 1035 label).
var dnsLabel = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`)

// dnsSubdomain is what Kubernetes accepts as a ServiceAccount name.
var dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)

func (g *Graph) validate() error {
	if g.Name == "" {
		return fieldError("name", "required")
	}
	if len(g.Services) == 0 {
		return fieldError("services", "at least one service is required")
	}
	if !strings.HasPrefix(g.EntryPath, "/") {
		return fieldError("entry_path", "%q must start with /", g.EntryPath)
	}
	seen := map[string]int{}
	for i, s := range g.Services {
		p := fmt.Sprintf("services[%d]", i)
		if !dnsLabel.MatchString(s.Name) {
			return fieldError(p+".name", "%q is not a valid service name (lowercase letters, digits and '-', starting with a letter, at most 63)", s.Name)
		}
		if j, dup := seen[s.Name]; dup {
			return fieldError(p+".name", "duplicate service %q (also services[%d])", s.Name, j)
		}
		seen[s.Name] = i
	}
	if g.Entry == "" {
		return fieldError("entry", "required: the service the load generator calls")
	}
	if _, ok := seen[g.Entry]; !ok {
		return fieldError("entry", "unknown service %q", g.Entry)
	}
	if !g.EntryProtocol.valid() {
		return fieldError("entry_protocol", "unknown protocol %q; want one of %v", g.EntryProtocol, Protocols)
	}
	for i, s := range g.Services {
		if err := s.validate(fmt.Sprintf("services[%d]", i), seen); err != nil {
			return err
		}
	}
	if err := g.checkCycles(); err != nil {
		return err
	}
	return g.checkSizes()
}

func (s *Service) validate(p string, known map[string]int) error {
	if s.Port < 1 || s.Port > 65535 {
		return fieldError(p+".port", "%d is not a port (1-65535)", s.Port)
	}
	if s.Replicas < 0 {
		return fieldError(p+".replicas", "must not be negative, got %d", s.Replicas)
	}
	if !dnsSubdomain.MatchString(s.ServiceAccount) {
		return fieldError(p+".service_account", "%q is not a valid Kubernetes name", s.ServiceAccount)
	}
	if err := s.Resources.validate(p + ".resources"); err != nil {
		return err
	}
	if err := checkBehaviour(p, s.ResponseSize, s.CPUWork, s.Latency, s.Script, known); err != nil {
		return err
	}
	versions := map[string]bool{}
	for i, v := range s.Versions {
		vp := fmt.Sprintf("%s.versions[%d]", p, i)
		if !dnsLabel.MatchString(v.Name) {
			return fieldError(vp+".name", "%q is not a valid version name (like \"v2\")", v.Name)
		}
		if versions[v.Name] {
			return fieldError(vp+".name", "duplicate version %q", v.Name)
		}
		versions[v.Name] = true
		if v.Replicas < 0 {
			return fieldError(vp+".replicas", "must not be negative, got %d", v.Replicas)
		}
		if err := checkBehaviour(vp, v.ResponseSize, v.CPUWork, v.Latency, v.Script, known); err != nil {
			return err
		}
	}
	return nil
}

func checkBehaviour(p string, size int, work, latency Duration, script []Step, known map[string]int) error {
	if size < 0 {
		return fieldError(p+".response_size", "must not be negative, got %d", size)
	}
	if work < 0 {
		return fieldError(p+".cpu_work", "must not be negative, got %s", work)
	}
	if latency < 0 {
		return fieldError(p+".latency", "must not be negative, got %s", latency)
	}
	for i, st := range script {
		sp := fmt.Sprintf("%s.script[%d]", p, i)
		switch {
		case st.Call != nil && st.Parallel != nil:
			return fieldError(sp, "has both call and parallel; a step is one or the other")
		case st.Call != nil:
			if err := st.Call.validate(sp+".call", known); err != nil {
				return err
			}
		case len(st.Parallel) == 0:
			return fieldError(sp, "needs a call or a non-empty parallel group")
		default:
			for j := range st.Parallel {
				if err := st.Parallel[j].validate(fmt.Sprintf("%s.parallel[%d]", sp, j), known); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (c *Call) validate(p string, known map[string]int) error {
	if c.Service == "" {
		return fieldError(p+".service", "required")
	}
	if _, ok := known[c.Service]; !ok {
		return fieldError(p+".service", "unknown service %q", c.Service)
	}
	if !c.Protocol.valid() {
		return fieldError(p+".protocol", "unknown protocol %q; want one of %v", c.Protocol, Protocols)
	}
	if c.Count < 0 {
		return fieldError(p+".count", "must not be negative, got %d", c.Count)
	}
	if c.Probability < 0 || c.Probability > 1 {
		return fieldError(p+".probability", "must be between 0 and 1 (0 or omitted means always), got %g", c.Probability)
	}
	return nil
}

func (r Resources) validate(p string) error {
	for _, q := range []struct{ field, value string }{
		{"cpu_request", r.CPURequest}, {"cpu_limit", r.CPULimit}, {"memory_request", r.MemoryRequest}, {"memory_limit", r.MemoryLimit},
	} {
		parse := resources.ParseMemory
		if strings.HasPrefix(q.field, "cpu") {
			parse = resources.ParseCPU
		}
		if _, err := parse(q.value); err != nil {
			return fieldError(p+"."+q.field, "%v", err)
		}
	}
	req := r.Requirements()
	cpuReq, cpuLim, memReq, memLim := req.CPURequestMilli, req.CPULimitMilli, req.MemRequestBytes, req.MemLimitBytes
	if cpuLim > 0 && cpuReq > cpuLim {
		return fieldError(p+".cpu_request", "%s exceeds cpu_limit %s", r.CPURequest, r.CPULimit)
	}
	if memLim > 0 && memReq > memLim {
		return fieldError(p+".memory_request", "%s exceeds memory_limit %s", r.MemoryRequest, r.MemoryLimit)
	}
	return nil
}

// checkCycles refuses a graph where a request could come back to a service
// it already passed through: it would never finish.
func (g *Graph) checkCycles() error {
	const (
		unvisited = iota
		active
		done
	)
	state := map[string]int{}
	var visit func(name string, path []string) error
	visit = func(name string, path []string) error {
		switch state[name] {
		case active:
			i := 0
			for path[i] != name {
				i++
			}
			return fieldError(fmt.Sprintf("services[%d].script", g.index(name)), "call cycle %s", strings.Join(append(path[i:], name), " -> "))
		case done:
			return nil
		}
		state[name] = active
		for _, d := range g.Calls(name) {
			if err := visit(d, append(path, name)); err != nil {
				return err
			}
		}
		state[name] = done
		return nil
	}
	for _, s := range g.Services {
		if err := visit(s.Name, nil); err != nil {
			return err
		}
	}
	return nil
}

func (g *Graph) index(name string) int {
	for i := range g.Services {
		if g.Services[i].Name == name {
			return i
		}
	}
	return -1
}
