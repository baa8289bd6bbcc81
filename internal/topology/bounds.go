package topology

import (
	"fmt"
	"time"
)

// Bounds on a graph, which a study file or a results directory from
// someone else can hold: past them a graph measures the cluster or the
// test service, not the mesh, or cannot run at all.
const (
	// MaxEndpoints bounds the pods behind one service, its versions'
	// replicas together: Kubernetes's scalability threshold is 250
	// endpoints per service, and the lab's kube-proxy rules are as many.
	MaxEndpoints = 250
	// MaxResponseSize bounds an answer: 1 GiB, the bound of an upload,
	// ten times the bulk study's largest transfer. The answering app
	// holds it in memory for each request in flight.
	MaxResponseSize = 1 << 30
	// MaxDownstreamAnswer is the most of a downstream answer a calling
	// app reads into memory (its call tree embeds the answer): a called
	// service that answers more fails every call.
	MaxDownstreamAnswer = 16 << 20
	// MaxCount bounds a call's repetitions in sequence.
	MaxCount = 1000
	// MaxCallsPerRequest bounds the calls downstream that one request to
	// the entry makes, counts and fan-out multiplied along the tree:
	// the built-in Online Boutique graph makes 16 (counted with every
	// call made), and a thousand is a call storm that measures the test
	// service, not the mesh.
	MaxCallsPerRequest = 1000
	// MaxRequestTime bounds a service's busy work and idle delay per
	// request: longer than a minute is a batch job, not a call, and
	// outlasts every request timeout a study may set.
	MaxRequestTime = Duration(time.Minute)
)

// checkSizes refuses a graph past a bound; the graph has no call cycle.
func (g *Graph) checkSizes() error {
	for i, s := range g.Services {
		p := fmt.Sprintf("services[%d]", i)
		if err := checkBehaviourSizes(p, s.ResponseSize, s.CPUWork, s.Latency, s.Script); err != nil {
			return err
		}
		for j, v := range s.Versions {
			if err := checkBehaviourSizes(fmt.Sprintf("%s.versions[%d]", p, j), v.ResponseSize, v.CPUWork, v.Latency, v.Script); err != nil {
				return err
			}
		}
		if n := g.endpoints(s, s.Replicas); n > MaxEndpoints {
			field := p + ".replicas"
			if len(s.Versions) > 0 {
				field = p + ".versions"
			}
			return EndpointsError(field, n)
		}
	}
	return g.CheckTree()
}

// endpoints is how many pods stand behind service s when each of its
// versions that does not set its own runs replicas.
func (g *Graph) endpoints(s Service, replicas int) int {
	if len(s.Versions) == 0 {
		return replicas
	}
	n := 0
	for _, v := range s.Versions {
		if v.Replicas > 0 {
			n += v.Replicas
		} else {
			n += replicas
		}
	}
	return n
}

// EndpointsError refuses n pods behind one service, at field.
func EndpointsError(field string, n int) error {
	return fieldError(field, "%d pods behind one service, more than the %d a service may have (Kubernetes's scalability threshold of endpoints per service)", n, MaxEndpoints)
}

// CheckReplicas refuses replicas for every version of service svc (as a
// study's override sets them) past MaxEndpoints, at field.
func (g *Graph) CheckReplicas(field, svc string, replicas int) error {
	s := g.Service(svc)
	if s == nil {
		return nil
	}
	// An override replaces every version's own count.
	n := replicas * max(len(s.Versions), 1)
	if n > MaxEndpoints {
		return EndpointsError(field, n)
	}
	return nil
}

func checkBehaviourSizes(p string, size int, work, latency Duration, script []Step) error {
	switch {
	case size > MaxResponseSize:
		return fieldError(p+".response_size", "%d bytes, more than the %d an answer may be", size, MaxResponseSize)
	case work > MaxRequestTime:
		return fieldError(p+".cpu_work", "%s, more than the %s of work a request may take", work, MaxRequestTime)
	case latency > MaxRequestTime:
		return fieldError(p+".latency", "%s, more than the %s a request may wait", latency, MaxRequestTime)
	}
	for i, st := range script {
		sp := fmt.Sprintf("%s.script[%d]", p, i)
		for j, c := range st.Calls() {
			cp := sp + ".call"
			if st.Call == nil {
				cp = fmt.Sprintf("%s.parallel[%d]", sp, j)
			}
			if c.Count > MaxCount {
				return fieldError(cp+".count", "%d, more than the %d times a call may be repeated", c.Count, MaxCount)
			}
		}
	}
	return nil
}

// CheckTree refuses a graph whose one request to the entry makes more
// than MaxCallsPerRequest calls downstream, whose entry answers more
// than MaxResponseSize, or where a called service answers more than a
// caller reads (MaxDownstreamAnswer), counting each call as always made
// and each version at its costliest. The graph has no call cycle. A
// study checks each variant of its graph that sweeps make with it.
func (g *Graph) CheckTree() error {
	t := tree{g: g, calls: map[string]int64{}, bytes: map[string]int64{}}
	if n := t.callsOf(g.Entry); n > MaxCallsPerRequest {
		return fieldError("entry", "one request makes %s calls downstream, more than the %d a request may make (counts and parallel calls multiplied along the call tree)", atLeast(n, MaxCallsPerRequest), MaxCallsPerRequest)
	}
	called := map[string]bool{}
	for _, s := range g.Services {
		for _, d := range g.Calls(s.Name) {
			called[d] = true
		}
	}
	for i, s := range g.Services {
		n := t.bytesOf(s.Name)
		switch {
		case called[s.Name] && n > MaxDownstreamAnswer:
			field := fmt.Sprintf("services[%d].script", i)
			if int64(s.ResponseSize) > MaxDownstreamAnswer {
				field = fmt.Sprintf("services[%d].response_size", i)
			}
			return fieldError(field, "%s answers at least %s bytes, more than the %d a calling service reads of a downstream answer (answers embed their calls' answers)", s.Name, atLeast(n, MaxResponseSize), MaxDownstreamAnswer)
		case s.Name == g.Entry && n > MaxResponseSize:
			return fieldError("entry", "%s answers at least %s bytes, more than the %d an answer may be (answers embed their calls' answers)", s.Name, atLeast(n, MaxResponseSize), MaxResponseSize)
		}
	}
	return nil
}

// atLeast prints n, or "more than" a bound it was cut at.
func atLeast(n, bound int64) string {
	if n > bound*1000 {
		return fmt.Sprintf("more than %d", bound*1000)
	}
	return fmt.Sprint(n)
}

// tree computes, per service, the calls one request makes downstream and
// the least size of its answer, memoized, saturating far past the bounds
// so that a deep tree of large counts cannot overflow.
type tree struct {
	g            *Graph
	calls, bytes map[string]int64
}

// saturate caps a figure far past every bound it is compared with.
func saturate(n int64) int64 { return min(n, MaxResponseSize*1000+1) }

func (t *tree) callsOf(name string) int64 {
	if n, ok := t.calls[name]; ok {
		return n
	}
	var worst int64
	for _, b := range t.behaviours(name) {
		var n int64
		for _, st := range b.script {
			for _, c := range st.Calls() {
				n = saturate(n + int64(max(c.Count, 1))*(1+t.callsOf(c.Service)))
			}
		}
		worst = max(worst, n)
	}
	t.calls[name] = worst
	return worst
}

func (t *tree) bytesOf(name string) int64 {
	if n, ok := t.bytes[name]; ok {
		return n
	}
	var worst int64
	for _, b := range t.behaviours(name) {
		n := int64(b.size)
		for _, st := range b.script {
			for _, c := range st.Calls() {
				n = saturate(n + int64(max(c.Count, 1))*t.bytesOf(c.Service))
			}
		}
		worst = max(worst, n)
	}
	t.bytes[name] = worst
	return worst
}

// behaviour is what one version of a service does per request.
type behaviour struct {
	size   int
	script []Step
}

// behaviours lists each version's behaviour: the service's own, with a
// version's non-zero size and non-empty script over it.
func (t *tree) behaviours(name string) []behaviour {
	s := t.g.Service(name)
	if s == nil {
		return nil
	}
	if len(s.Versions) == 0 {
		return []behaviour{{s.ResponseSize, s.Script}}
	}
	var out []behaviour
	for _, v := range s.Versions {
		b := behaviour{s.ResponseSize, s.Script}
		if v.ResponseSize != 0 {
			b.size = v.ResponseSize
		}
		if len(v.Script) > 0 {
			b.script = v.Script
		}
		out = append(out, b)
	}
	return out
}
