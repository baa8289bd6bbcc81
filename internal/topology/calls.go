package topology

// CallsPerRequest is how many calls one request to the entry makes on
// average, the load generator's call to the entry included: down every
// version's script, each call counted Count times with its Probability,
// and a service's versions weighted by their share of its replicas, as
// its Service balances them. A report multiplies it by a mesh's proxies
// per call to state how many proxy passes one request costs.
func (g *Graph) CallsPerRequest() float64 {
	var calls func(service string, depth int) float64
	calls = func(service string, depth int) float64 {
		s := g.Service(service)
		if s == nil || depth > len(g.Services) {
			// A graph Validate accepted has neither; a cycle or a missing
			// service ends the walk rather than looping.
			return 1
		}
		total := 1.0
		for _, v := range weightedScripts(s) {
			for _, st := range v.script {
				for _, c := range st.Calls() {
					p := c.Probability
					if p <= 0 {
						p = 1
					}
					total += v.weight * float64(max(c.Count, 1)) * p * calls(c.Service, depth+1)
				}
			}
		}
		return total
	}
	return calls(g.Entry, 0)
}

// weightedScript is one version's script with its share of the service's
// requests.
type weightedScript struct {
	weight float64
	script []Step
}

// weightedScripts are a service's versions' scripts, each weighted by its
// replicas over the service's; a service without versions is one version
// of weight 1.
func weightedScripts(s *Service) []weightedScript {
	if len(s.Versions) == 0 {
		return []weightedScript{{weight: 1, script: s.Script}}
	}
	replicas := func(v Version) float64 {
		if v.Replicas > 0 {
			return float64(v.Replicas)
		}
		return float64(max(s.Replicas, 1))
	}
	var total float64
	for _, v := range s.Versions {
		total += replicas(v)
	}
	out := make([]weightedScript, 0, len(s.Versions))
	for _, v := range s.Versions {
		script := s.Script
		if len(v.Script) > 0 {
			script = v.Script
		}
		out = append(out, weightedScript{weight: replicas(v) / total, script: script})
	}
	return out
}
